//! What is wrong between memories rather than in one: links that point at
//! nothing or not back, near-duplicates, triggers two memories share.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::guard::{Bigrams, bigrams, near_pairs};

use super::finding::{Finding, Read, Severity, key_line};

/// `supersedes` / `superseded_by` that point at nothing, do not point back,
/// or go round in a cycle.
pub fn links(read: &[Read], out: &mut Vec<Finding>) {
    let by_path: HashMap<String, &Read> = read.iter().map(|r| (r.memory.file(), r)).collect();
    for r in read {
        let m = &r.memory;
        let pairs = [
            ("supersedes", &m.supersedes, "superseded_by"),
            ("superseded_by", &m.superseded_by, "supersedes"),
        ];
        for (key, target, back) in pairs {
            let Some(target) = target else { continue };
            let line = key_line(&r.text, key);
            match by_path.get(target) {
                None => out.push(Finding {
                    severity: Severity::Error,
                    file: r.file.clone(),
                    line,
                    problem: format!("`{key}` points at {target}, which does not exist"),
                    fix: "correct the path, or remove the key".into(),
                }),
                Some(other) => {
                    let theirs = if back == "supersedes" {
                        &other.memory.supersedes
                    } else {
                        &other.memory.superseded_by
                    };
                    if theirs.as_deref() != Some(m.file().as_str()) {
                        out.push(Finding {
                            severity: Severity::Error,
                            file: r.file.clone(),
                            line,
                            problem: format!(
                                "`{key}: {target}` but {target} has no `{back}: {}`",
                                m.file()
                            ),
                            fix: format!("add `{back}: {}` to {target}", m.file()),
                        });
                    }
                }
            }
        }
        let mut seen = HashSet::from([m.file()]);
        let mut at = m.superseded_by.clone();
        while let Some(next) = at {
            if !seen.insert(next.clone()) {
                if next == m.file() {
                    out.push(Finding {
                        severity: Severity::Error,
                        file: r.file.clone(),
                        line: key_line(&r.text, "superseded_by"),
                        problem: "the supersede chain comes back to this memory (a cycle)".into(),
                        fix: "break the cycle: the newest memory must not be superseded".into(),
                    });
                }
                break;
            }
            at = by_path.get(&next).and_then(|o| o.memory.superseded_by.clone());
        }
    }
}

/// Pairs of live memories whose text is nearly the same.
pub fn duplicates(read: &[Read], out: &mut Vec<Finding>) {
    let live: Vec<&Read> = read.iter().filter(|r| !r.memory.is_superseded()).collect();
    let sets: Vec<Bigrams> = live
        .iter()
        .map(|r| bigrams(&format!("{}\n{}\n{}", r.memory.title, r.memory.summary, r.memory.body)))
        .collect();
    for (i, j, score) in near_pairs(&sets) {
        let (a, b) = (live[i], live[j]);
        out.push(Finding {
            severity: Severity::Error,
            file: a.file.clone(),
            line: None,
            problem: format!("nearly the same as {} (similarity {score:.2})", b.memory.file()),
            fix: "merge them, or mark the older one with `--supersedes`".into(),
        });
    }
}

/// `load_when` triggers that several memories claim.
pub fn shared_triggers(read: &[Read], out: &mut Vec<Finding>) {
    let mut by_trigger: BTreeMap<String, Vec<&Read>> = BTreeMap::new();
    for r in read.iter().filter(|r| !r.memory.is_superseded()) {
        for t in &r.memory.load_when {
            by_trigger.entry(t.to_lowercase()).or_default().push(r);
        }
    }
    for (trigger, owners) in by_trigger.into_iter().filter(|(_, o)| o.len() > 1) {
        let names: Vec<String> = owners.iter().map(|r| r.memory.file()).collect();
        for r in owners {
            out.push(Finding {
                severity: Severity::Error,
                file: r.file.clone(),
                line: key_line(&r.text, "load_when"),
                problem: format!("trigger `{trigger}` is shared by {}", names.join(", ")),
                fix: "make each trigger specific to one memory".into(),
            });
        }
    }
}
