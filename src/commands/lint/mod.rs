//! `mem lint`: every problem a careful reviewer would flag, each with the
//! file, the line where it applies, and the fix. Exit 1 when there are
//! problems, so it can gate CI.

use serde::Serialize;

use crate::base::error::Result;
use crate::base::secrets;
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::memory::keys::KEYS;
use crate::model::memory::over_budget;
use crate::model::roots::Root;
use crate::ops::compile::stale;
use crate::output::Style;
use crate::settings::Context;
use crate::settings::max_entries;
use crate::store::scan::walk;

mod between;
mod finding;

use between::{duplicates, links, shared_triggers};
pub use finding::{Finding, Severity};
use finding::{Read, key_line};

/// Check the memory roots for problems.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem lint\n  mem lint --json      (exit 1 when there are problems: use it in CI)"
)]
pub struct Args {}

/// All problems.
#[derive(Debug, Serialize)]
pub struct Report {
    /// What is wrong, each with its file, line and fix (`problems` in
    /// JSON, as `list` and `inspect` call what they could not use).
    #[serde(rename = "problems")]
    pub findings: Vec<Finding>,
    /// A project root never trusted here, said once.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Lint every selected root.
pub fn run(ctx: &Context, _args: &Args) -> Result<Report> {
    let mut findings = Vec::new();
    for root in ctx.read_roots()? {
        lint_root(root, &mut findings)?;
    }
    let mut warnings = Vec::new();
    if let Some(standing) = crate::ops::visibility::project_standing(ctx, true) {
        if let (Some(problem), Some(project)) = (standing.notice(), &ctx.roots.project) {
            findings.push(Finding {
                severity: Severity::Warning,
                file: project.dir.clone(),
                line: None,
                problem,
                fix: "read what changed (`mem trust` shows it) and trust it, or revert it".into(),
            });
        }
        warnings.extend(standing.untrusted_line());
    }
    findings.sort_by(|a, b| {
        a.file.cmp(&b.file).then(a.line.cmp(&b.line)).then_with(|| a.problem.cmp(&b.problem))
    });
    Ok(Report { findings, warnings })
}

fn lint_root(root: &Root, out: &mut Vec<Finding>) -> Result<()> {
    let (files, problems) = walk(root);
    for p in problems {
        out.push(Finding {
            severity: Severity::Error,
            file: p.path,
            line: p.line,
            problem: p.message,
            fix: "move or rename it to <category>/<slug>.md".into(),
        });
    }
    unportable_names(&files, out);
    let mut read = Vec::new();
    for f in &files {
        let Some(r) = read_one(root, f, out) else { continue };
        read.push(r);
    }
    links(&read, out);
    duplicates(&read, out);
    shared_triggers(&read, out);
    stale_generated(root, out)?;
    if let Some(problem) = over_budget(read.iter().map(|r| &r.memory), root.scope) {
        out.push(Finding {
            severity: Severity::Error,
            file: root.dir.clone(),
            line: None,
            problem,
            fix: "shorten them, move detail out of rules/, or unpin some".into(),
        });
    }
    for (rel, draft) in crate::store::write::drafts(&root.dir) {
        out.push(Finding {
            severity: Severity::Error,
            file: draft,
            line: None,
            problem: format!("an edit of {rel} could not be saved; the text typed is kept here"),
            fix: format!("run `mem edit {rel}` to go on with it, or `mem edit {rel} --discard`"),
        });
    }
    if let Some(finding) = root_md_over(root) {
        out.push(finding);
    }
    let max = max_entries();
    if read.len() > max {
        out.push(Finding {
            // A size to know, not a fault of any file: lint still passes.
            severity: Severity::Warning,
            file: root.dir.clone(),
            line: None,
            problem: format!("{} memories, over MEM_MAX_ENTRIES={max}", read.len()),
            fix: "review `mem clean` candidates".into(),
        });
    }
    Ok(())
}

/// Names that cannot be checked out everywhere: device names, a trailing
/// dot, two files that differ only in case.
fn unportable_names(files: &[crate::store::scan::FileEntry], out: &mut Vec<Finding>) {
    let mut seen: std::collections::HashMap<String, &crate::store::scan::FileEntry> =
        std::collections::HashMap::new();
    for f in files {
        let why = crate::model::relpath::unportable(&f.rel.category)
            .map(|w| format!("category `{}` {w}", f.rel.category))
            .or_else(|| {
                crate::model::relpath::unportable(&f.rel.slug)
                    .map(|w| format!("slug `{}` {w}", f.rel.slug))
            });
        if let Some(why) = why {
            out.push(Finding {
                severity: Severity::Error,
                file: f.path.clone(),
                line: None,
                problem: format!("{why}: this tree cannot be checked out on Windows"),
                fix: "rename it (`git mv`), then run `mem compile`".into(),
            });
        }
        if let Some(twin) = seen.insert(f.rel.file().to_ascii_lowercase(), f) {
            out.push(Finding {
                severity: Severity::Error,
                file: f.path.clone(),
                line: None,
                problem: format!(
                    "differs from {} only in case: on Windows and macOS they are one file",
                    twin.rel.file()
                ),
                fix: "merge the two memories into one, or rename one".into(),
            });
        }
    }
}

/// Generated text that is stale (after an interrupted write, said so),
/// and broken markers.
fn stale_generated(root: &Root, out: &mut Vec<Finding>) -> Result<()> {
    let (stale_files, notes) = stale(root)?;
    let interrupted = crate::store::pending::interrupted(root);
    if interrupted {
        out.push(Finding {
            severity: Severity::Error,
            file: root.dir.clone(),
            line: None,
            problem: crate::store::pending::CAUSE.into(),
            fix: crate::store::pending::FIX.into(),
        });
    }
    for path in stale_files {
        let problem = if interrupted {
            "generated text is stale: a write through mem stopped before its recompile"
        } else {
            "generated text is stale"
        };
        out.push(Finding {
            severity: Severity::Error,
            file: root.dir.join(&path),
            line: None,
            problem: problem.into(),
            fix: "run `mem compile`".into(),
        });
    }
    for n in notes.into_iter().filter(|n| n.error) {
        out.push(Finding {
            severity: Severity::Error,
            file: root.dir.join(&n.path),
            line: n.line,
            problem: n.message,
            fix: "repair the markers by hand".into(),
        });
    }
    Ok(())
}

/// ROOT.md whose hand-written text alone is over the bound the whole file
/// keeps to, so that its generated tables are cut to one line each.
fn root_md_over(root: &Root) -> Option<Finding> {
    use crate::model::bound::fit::{MAX_BYTES, MAX_LINES, hand_written_over};
    let file = root.dir.join("ROOT.md");
    let text = crate::store::files::text(&root.dir, &file).ok().flatten()?;
    let (lines, bytes) = hand_written_over(&text)?;
    Some(Finding {
        // The file still works; the first one a reader opens is just long.
        severity: Severity::Warning,
        file,
        line: None,
        problem: format!(
            "its hand-written text alone is {lines} lines and {bytes} bytes, over the {MAX_LINES} lines and {MAX_BYTES} bytes ROOT.md keeps to: its generated tables are cut to one line each"
        ),
        fix: "move long sections into memories (`mem remember references/<slug>`, or `rules/` for hard rules) and keep ROOT.md to the plan".into(),
    })
}

/// Parse one file and check what can be checked on it alone.
fn read_one(
    root: &Root,
    f: &crate::store::scan::FileEntry,
    out: &mut Vec<Finding>,
) -> Option<Read> {
    let finding = |line, problem: String, fix: &str| Finding {
        severity: Severity::Error,
        file: f.path.clone(),
        line,
        problem,
        fix: fix.into(),
    };
    let text = match crate::store::files::text(&root.dir, &f.path) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(e) => {
            // The finding names the file already.
            let prefix = format!("{}: ", f.path.display());
            let message = e.message.strip_prefix(&prefix).map(str::to_string);
            let hint = e.hint.as_deref().unwrap_or("");
            out.push(finding(None, message.unwrap_or(e.message), hint));
            return None;
        }
    };
    let doc = match Document::parse(&text) {
        Ok(doc) => doc,
        Err(e) => {
            let fix = match crate::model::frontmatter::conflict::find(&text) {
                Some(_) => "resolve the conflict by hand, then `git add` the file",
                None => "fix the frontmatter by hand",
            };
            out.push(finding(Some(e.line), e.message, fix));
            return None;
        }
    };
    let (memory, fields) = Memory::from_document(f.rel.clone(), root.scope, &doc, 0);
    for message in fields {
        let key = message.split('`').nth(1).unwrap_or("");
        out.push(finding(key_line(&text, key), message, "correct the value"));
    }
    for key in doc.meta.keys().filter_map(|k| k.as_str()) {
        if let Some(known) = typo_of(key) {
            out.push(finding(
                key_line(&text, key),
                format!("unknown key `{key}`"),
                &format!("did you mean `{known}`?"),
            ));
        }
    }
    for s in secrets::scan(&text) {
        out.push(finding(
            Some(s.line),
            format!("looks like {}", s.what),
            "remove it; say where the secret lives instead",
        ));
    }
    Some(Read { file: f.path.clone(), text, memory })
}

/// The known key an unknown one is probably a misspelling of.
pub fn typo_of(key: &str) -> Option<&'static str> {
    let known = || KEYS.iter().map(|k| k.name);
    if known().any(|k| k == key) {
        return None;
    }
    let norm = |s: &str| s.to_lowercase().replace(['-', '_', ' '], "");
    let k = norm(key);
    known().find(|known| {
        let n = norm(known);
        n == k || (n.len() >= 4 && distance(&n, &k) <= if n.len() >= 8 { 2 } else { 1 })
    })
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

impl Report {
    /// The findings that fail lint.
    fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.severity == Severity::Error).count()
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.findings.is_empty() {
            return "no problems\n".into();
        }
        let mut out = String::new();
        for f in &self.findings {
            let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
            let weight = if f.severity == Severity::Warning { "warning: " } else { "" };
            out.push_str(&format!(
                "{}{line}: {weight}{}\n  fix: {}\n",
                style.path(&f.file.display().to_string()),
                f.problem,
                f.fix
            ));
        }
        let errors = self.errors();
        let warnings = self.findings.len() - errors;
        out.push_str(&match (errors, warnings) {
            (0, w) => format!("no problems, {w} warning(s)\n"),
            (e, 0) => format!("{e} problem(s)\n"),
            (e, w) => format!("{e} problem(s), {w} warning(s)\n"),
        });
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn exit_code(&self) -> i32 {
        i32::from(self.errors() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_of_known_keys() {
        assert_eq!(typo_of("load-when"), Some("load_when"));
        assert_eq!(typo_of("loadWhen"), Some("load_when"));
        assert_eq!(typo_of("sumary"), Some("summary"));
        assert_eq!(typo_of("superseeded_by"), Some("superseded_by"));
        assert_eq!(typo_of("summary"), None);
        assert_eq!(typo_of("owner"), None);
        assert_eq!(typo_of("ticket"), None);
    }
}
