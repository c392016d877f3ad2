//! Three-way merge of generated regions, for the git merge driver.
//!
//! Text outside the markers is merged by the caller as git would; here the
//! rows inside each region are merged as sets keyed like `mem compile` keys
//! them: a row is kept when both sides kept it or one side added it, a row
//! one side removed is removed. Rows are then sorted the way the compiler
//! sorts them, so two branches that add different memories merge to
//! exactly what `mem compile` would write on the merged tree. (No region
//! holds a count: a count is the one line both branches change the same
//! way, which git takes without asking this driver.)

use std::collections::{BTreeMap, BTreeSet};

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
fn key(label: &str, row: &str) -> Vec<String> {
    let c = cells(row);
    match label {
        "routing" => c.into_iter().take(3).map(|x| link_text(&x).to_string()).collect(),
        "registry" => vec![link_text(c.first().map_or("", |x| x)).to_string()],
        _ => {
            let file = link_text(c.first().map_or("", |x| x));
            vec![file.strip_suffix(".md").unwrap_or(file).to_string()]
        }
    }
}

/// Merge the rows of one region.
fn merge_table(label: &str, base: &Table, ours: &Table, theirs: &Table) -> Vec<String> {
    let set = |t: &Table| t.rows.iter().cloned().collect::<BTreeSet<String>>();
    let (b, o, t) = (set(base), set(ours), set(theirs));
    let mut merged: BTreeMap<Vec<String>, String> = BTreeMap::new();
    // Theirs first, so that ours wins when both sides changed one key.
    for row in t.iter().chain(o.iter()) {
        let keep = (o.contains(row) && t.contains(row)) || !b.contains(row);
        if keep {
            merged.insert(key(label, row), row.clone());
        }
    }
    let header = if ours.header.is_empty() { &theirs.header } else { &ours.header };
    if merged.is_empty() {
        let placeholder = ours.placeholder.as_ref().or(theirs.placeholder.as_ref());
        return match placeholder {
            Some(p) => vec![p.clone()],
            None if label == "registry" => header.clone(),
            None => Vec::new(),
        };
    }
    header.iter().cloned().chain(merged.into_values()).collect()
}

/// Fill the regions of `merged_outside` (the outside text, already merged)
/// with the three-way merge of each region's rows.
pub fn merge_regions(merged_outside: &str, base: &str, ours: &str, theirs: &str) -> Option<String> {
    let find = |t: &str| regions::find(t).ok();
    let (rb, ro, rt, rm) = (find(base)?, find(ours)?, find(theirs)?, find(merged_outside)?);
    let of = |rs: &[Region], label: &str| rs.iter().find(|r| r.label == label).cloned();
    Some(regions::replace(merged_outside, &rm, |label| {
        let tb = table(base, of(&rb, label).as_ref());
        let to = table(ours, of(&ro, label).as_ref());
        let tt = table(theirs, of(&rt, label).as_ref());
        Some(merge_table(label, &tb, &to, &tt))
    }))
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
        merge_regions(&outside(ours).unwrap(), base, ours, theirs).unwrap()
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
