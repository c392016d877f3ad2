//! Three-way merge of generated regions, for the git merge driver.
//!
//! Text outside the markers is merged by the caller as git would; here the
//! rows inside each region are merged as sets keyed like `mem compile` keys
//! them: a row is kept when both sides kept it or one side added it, a row
//! one side removed is removed. Rows are then sorted the way the compiler
//! sorts them, so two branches that add different memories merge to
//! exactly what `mem compile` would write on the merged tree. (No region
//! holds a count: a count is the one line both branches change the same
//! way, which git takes without asking this driver.) ROOT.md's `registry`
//! and `routing` tables are kept within the file's bound as the compiler
//! keeps them ([`crate::model::bound`]); when the three versions cannot
//! tell what the merged tree's tables hold, the merge says so.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::bound::fit::{Table as Bounded, Unknown, fit};
use crate::model::bound::merge::{body, merge, version};
use crate::model::bound::rows::{Row, Totals};
use crate::model::compile::{Strings, root_lang};
use crate::model::regions::{self, Region};
use crate::model::table::{cells, link_text};

/// A region's lines split into the table header and the data rows.
#[derive(Debug, Default, Clone)]
struct Table {
    header: Vec<String>,
    rows: Vec<String>,
    /// A non-table line the compiler writes for an empty table.
    placeholder: Option<String>,
}

fn table(text: &str, region: Option<&Region>) -> Table {
    let Some(region) = region else { return Table::default() };
    let lines = regions::body(text, region);
    let mut t = Table::default();
    for line in lines {
        let line = line.trim_end_matches('\r');
        if !line.starts_with('|') {
            t.placeholder = Some(line.to_string()).filter(|l| !l.trim().is_empty());
        } else if t.header.len() < 2
            && t.rows.is_empty()
            && (t.header.is_empty() || line.contains("---"))
        {
            t.header.push(line.to_string());
        } else {
            t.rows.push(line.to_string());
        }
    }
    t
}

/// The sort and identity key the compiler uses for a row of `label`.
fn key(label: &str, row: &str, root_md: bool) -> Vec<String> {
    let c = cells(row);
    match (root_md, label) {
        (true, "routing") => c.into_iter().take(3).map(|x| link_text(&x).to_string()).collect(),
        (true, _) => vec![link_text(c.first().map_or("", |x| x)).to_string()],
        (false, _) => {
            let file = link_text(c.first().map_or("", |x| x));
            vec![file.strip_suffix(".md").unwrap_or(file).to_string()]
        }
    }
}

/// Merge the rows of one region as sets: the merged rows, sorted.
fn merge_rows(label: &str, root_md: bool, [b, o, t]: [&[String]; 3]) -> Vec<String> {
    let set = |rows: &[String]| rows.iter().cloned().collect::<BTreeSet<String>>();
    let (b, o, t) = (set(b), set(o), set(t));
    let mut merged: BTreeMap<Vec<String>, String> = BTreeMap::new();
    // Theirs first, so that ours wins when both sides changed one key.
    for row in t.iter().chain(o.iter()) {
        let keep = (o.contains(row) && t.contains(row)) || !b.contains(row);
        if keep {
            merged.insert(key(label, row, root_md), row.clone());
        }
    }
    merged.into_values().collect()
}

/// Merge one region's table.
fn merge_table(
    label: &str,
    root_md: bool,
    base: &Table,
    ours: &Table,
    theirs: &Table,
) -> Vec<String> {
    let merged = merge_rows(label, root_md, [&base.rows, &ours.rows, &theirs.rows]);
    let header = if ours.header.is_empty() { &theirs.header } else { &ours.header };
    if merged.is_empty() {
        let placeholder = ours.placeholder.as_ref().or(theirs.placeholder.as_ref());
        return match placeholder {
            Some(p) => vec![p.clone()],
            None if label == "registry" => header.clone(),
            None => Vec::new(),
        };
    }
    header.iter().cloned().chain(merged).collect()
}

/// The merged text, and whether it is exactly what `mem compile` writes
/// (false: ROOT.md's tables could not be told from the three versions, and
/// ours are kept).
pub struct Merged {
    pub text: String,
    pub exact: bool,
}

/// Fill the regions of `merged_outside` (the outside text, already merged)
/// with the three-way merge of each region's rows. `root_md`: the file is a
/// ROOT.md, whose `registry` and `routing` tables are bounded.
pub fn merge_regions(
    merged_outside: &str,
    base: &str,
    ours: &str,
    theirs: &str,
    root_md: bool,
) -> Option<Merged> {
    let find = |t: &str| regions::find(t).ok();
    let (rb, ro, rt, rm) = (find(base)?, find(ours)?, find(theirs)?, find(merged_outside)?);
    let of = |rs: &[Region], label: &str| rs.iter().find(|r| r.label == label).cloned();
    let bounded = |label: &str| root_md && matches!(label, "registry" | "routing");
    let text = regions::replace(merged_outside, &rm, |label| {
        if bounded(label) {
            return None;
        }
        let tb = table(base, of(&rb, label).as_ref());
        let to = table(ours, of(&ro, label).as_ref());
        let tt = table(theirs, of(&rt, label).as_ref());
        Some(merge_table(label, root_md, &tb, &to, &tt))
    });
    let labels: Vec<&str> = rm.iter().map(|r| r.label.as_str()).filter(|l| bounded(l)).collect();
    if labels.is_empty() {
        return Some(Merged { text, exact: true });
    }
    let strings = Strings::of(root_lang(&text));
    let lines = |t: &'_ str, rs: &[Region], label: &str| -> Vec<String> {
        of(rs, label).map_or_else(Vec::new, |r| {
            regions::body(t, &r).into_iter().map(str::to_string).collect()
        })
    };
    let tables: Result<Vec<Bounded>, Unknown> = labels
        .iter()
        .map(|l| {
            let versions = [lines(base, &rb, l), lines(ours, &ro, l), lines(theirs, &rt, l)];
            bounded_table(l, &strings, versions)
        })
        .collect();
    let found = regions::find(&text).ok()?;
    let (bodies, exact) = match tables.and_then(|t| fit(&text, &t)) {
        Ok(bodies) => (bodies, true),
        Err(Unknown) => (labels.iter().map(|l| lines(ours, &ro, l)).collect(), false),
    };
    let text = regions::replace(&text, &found, |label| {
        labels.iter().position(|l| *l == label).map(|i| bodies[i].clone())
    });
    Some(Merged { text, exact })
}

/// One bounded region of the merged tree, from its three versions.
fn bounded_table(
    label: &str,
    strings: &Strings,
    lines: [Vec<String>; 3],
) -> Result<Bounded, Unknown> {
    let words = strings.words(label);
    let bodies = lines.map(|l| body(&l.iter().map(String::as_str).collect::<Vec<_>>()));
    if bodies.iter().all(|b| b.totals.is_none()) {
        // Whole in every version: every row is known.
        let [b, o, t] = &bodies;
        let merged = merge_rows(label, true, [&b.rows, &o.rows, &t.rows]);
        let parsed: Option<Vec<Row>> = merged
            .iter()
            .map(|r| match label {
                "registry" => Some(Row::registry(r)),
                _ => Row::routing(r),
            })
            .collect();
        // A whole routing table's rows do not say their order.
        let ordered = parsed.is_some();
        let mut rows = parsed.unwrap_or_else(|| merged.iter().map(|r| Row::unordered(r)).collect());
        rows.sort_by(|a, b| a.key.cmp(&b.key).then_with(|| a.keyed.cmp(&b.keyed)));
        let totals = Totals::of(&rows);
        return Ok(Bounded { label: label.into(), words, rows, complete: true, ordered, totals });
    }
    let [b, o, t] = bodies.each_ref().map(|b| version(label, b));
    merge(label, words, &b?, &o?, &t?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::regions::outside;

    fn index(rows: &[&str]) -> String {
        let mut s =
            "# facts\n\n<!-- auto:begin facts -->\n| file | summary | highlight |\n|---|---|---|\n"
                .to_string();
        for r in rows {
            s.push_str(&format!("| [{r}.md]({r}.md) | {r} summary | — |\n"));
        }
        s.push_str("<!-- auto:end -->\n");
        s
    }

    fn merge(base: &str, ours: &str, theirs: &str) -> String {
        let root_md = base.contains("auto:begin registry");
        let merged = merge_regions(&outside(ours).unwrap(), base, ours, theirs, root_md).unwrap();
        assert!(merged.exact);
        merged.text
    }

    #[test]
    fn both_sides_adding_rows_gives_the_sorted_union() {
        let base = index(&["a", "c"]);
        assert_eq!(
            merge(&base, &index(&["a", "b", "c"]), &index(&["a", "c", "a-b"])),
            index(&["a", "a-b", "b", "c"])
        );
    }

    #[test]
    fn a_row_removed_on_one_side_stays_removed() {
        let base = index(&["a", "b"]);
        assert_eq!(merge(&base, &index(&["a"]), &index(&["a", "b", "c"])), index(&["a", "c"]));
    }

    #[test]
    fn an_edited_row_wins_over_the_unchanged_one() {
        let base = index(&["a"]);
        let theirs = base.replace("a summary", "a better summary");
        assert_eq!(merge(&base, &base, &theirs), theirs);
    }

    #[test]
    fn registry_rows_merge_as_a_set_of_categories() {
        let root = |cats: &[&str]| {
            let rows: String =
                cats.iter().map(|c| format!("| [{c}]({c}/index.md) | About {c} |\n")).collect();
            format!(
                "<!-- auto:begin registry -->\n| category | description |\n|---|---|\n{rows}<!-- auto:end -->\n"
            )
        };
        let base = root(&["decisions"]);
        let merged = merge(&base, &root(&["decisions", "facts"]), &root(&["decisions", "rules"]));
        assert_eq!(merged, root(&["decisions", "facts", "rules"]));
        assert_eq!(merge(&base, &root(&[]), &base), root(&[]));
    }
}
