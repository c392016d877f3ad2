//! A bounded region of ROOT.md merged from three versions (base, ours,
//! theirs), each of which shows only its first rows and the totals of all.
//!
//! Rows are merged as sets, as everywhere in generated text: a row stays
//! when both sides have it or one side added it. What a version leaves out
//! is read from what it shows: every row before its last shown one (in key
//! order) is shown, so a row missing above that point is gone, and one
//! missing below it may only be out of sight. A side whose totals differ
//! from the base by exactly what it shows changed nothing out of sight
//! (rows that could be either way are tried both ways until the totals add
//! up); its hidden rows are then the base's. The merged rows are certain up
//! to the point every side's changes and the unchanged rows are seen; the
//! table is then cut by [`fit`](super::fit::fit) exactly as the compiler
//! cuts it, and when the cut needs a row past that point the merge says so
//! ([`Unknown`]) instead of guessing.

use std::collections::{BTreeMap, BTreeSet};

use super::fit::{Table, Unknown, Words};
use super::rows::{Key, Row, Totals};

/// Up to where a version shows every row it has.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fold {
    /// Not even its first row.
    Nothing,
    /// Every row up to this key.
    Upto(Key),
    /// Every row.
    All,
}

impl Fold {
    fn shows(&self, key: &Key) -> bool {
        match self {
            Fold::Nothing => false,
            Fold::Upto(last) => key <= last,
            Fold::All => true,
        }
    }
}

/// One version of a region: the rows it shows, by text.
#[derive(Debug, Clone)]
pub struct Version {
    rows: BTreeMap<String, Row>,
    fold: Fold,
    totals: Totals,
}

/// A region's body as [`body`] splits it.
pub struct Body {
    /// Its table rows, in order.
    pub rows: Vec<String>,
    /// The totals of its last line, when it is cut.
    pub totals: Option<Totals>,
}

/// The rows and the totals line of a region's body (its header and an
/// empty table's placeholder left out).
pub fn body(lines: &[&str]) -> Body {
    let mut out = Body { rows: Vec::new(), totals: None };
    let mut header = 0;
    for line in lines {
        let line = line.trim_end_matches('\r');
        if line.starts_with('|') {
            // The header: a first line, then `|---|…`.
            if header < 2 && out.rows.is_empty() && (header == 0 || line.contains("---")) {
                header += 1;
            } else {
                out.rows.push(line.to_string());
            }
        } else if let Some(t) = Totals::parse(line) {
            // Never a row's: a trigger that reads like it is in a cell.
            out.totals = Some(t);
        }
    }
    out
}

/// A version of region `label`, or Unknown when its rows do not say their
/// order (a whole routing table).
pub fn version(label: &str, body: &Body) -> Result<Version, Unknown> {
    let mut rows = BTreeMap::new();
    for text in &body.rows {
        let row = match label {
            "registry" => Row::registry(text),
            _ => Row::routing(text).ok_or(Unknown)?,
        };
        rows.insert(text.clone(), row);
    }
    let (fold, totals) = match body.totals {
        None => (Fold::All, Totals::of(rows.values())),
        Some(t) => {
            let last = rows.values().map(|r| &r.key).max().cloned();
            (last.map_or(Fold::Nothing, Fold::Upto), t)
        }
    };
    if totals.rows < rows.len() as i64 {
        return Err(Unknown);
    }
    Ok(Version { rows, fold, totals })
}

/// One side against the base: whether every change it made is in sight,
/// and which of the rows that could be either way it changed.
struct Side<'a> {
    v: &'a Version,
    clean: bool,
    /// Rows shown here and not in the base that it added (and did not only
    /// bring into sight), and rows of the base out of sight here that it
    /// removed.
    flipped: BTreeSet<&'a str>,
}

fn side<'a>(base: &'a Version, v: &'a Version) -> Side<'a> {
    let mut seen = Totals::default();
    let mut either: Vec<(&'a str, Totals)> = Vec::new();
    for (text, r) in &v.rows {
        if !base.rows.contains_key(text) {
            match base.fold.shows(&r.key) {
                true => seen = seen.plus(&Totals::row(r)),
                false => either.push((text, Totals::row(r))),
            }
        }
    }
    for (text, r) in &base.rows {
        if !v.rows.contains_key(text) {
            let gone = Totals::default().minus(&Totals::row(r));
            match v.fold.shows(&r.key) {
                true => seen = seen.plus(&gone),
                false => either.push((text, gone)),
            }
        }
    }
    let rest = v.totals.minus(&base.totals).minus(&seen);
    match explain(rest, &either) {
        Some(flipped) => Side { v, clean: true, flipped },
        None => Side { v, clean: false, flipped: BTreeSet::new() },
    }
}

/// The rows among `either` whose change adds up to `rest`: none when `rest`
/// is nothing, else the first of every combination (of at most 20 rows).
fn explain<'a>(rest: Totals, either: &[(&'a str, Totals)]) -> Option<BTreeSet<&'a str>> {
    if rest == Totals::default() {
        return Some(BTreeSet::new());
    }
    if either.len() > 20 {
        return None;
    }
    // Gray code: each step flips one row in or out of the combination.
    let (mut sum, mut chosen) = (Totals::default(), 0u32);
    for step in 1u32..(1 << either.len()) {
        let bit = step.trailing_zeros();
        let t = &either[bit as usize].1;
        chosen ^= 1 << bit;
        sum = if chosen & (1 << bit) != 0 { sum.plus(t) } else { sum.minus(t) };
        if sum == rest {
            let set = either.iter().enumerate().filter(|(i, _)| chosen & (1 << i) != 0);
            return Some(set.map(|(_, (text, _))| *text).collect());
        }
    }
    None
}

/// Whether the base has `text`, as far as the three versions tell.
fn in_base(base: &Version, sides: &[Side; 2], text: &str, key: &Key) -> Option<bool> {
    if base.rows.contains_key(text) {
        return Some(true);
    }
    if base.fold.shows(key) {
        return Some(false);
    }
    // Shown by a side that changed nothing out of sight: it either added
    // it, or only brought the base's row into sight.
    let votes: BTreeSet<bool> = sides
        .iter()
        .filter(|s| s.clean && s.v.rows.contains_key(text))
        .map(|s| !s.flipped.contains(text))
        .collect();
    (votes.len() == 1).then(|| votes.into_iter().next()).flatten()
}

/// What a side holds of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Known(bool),
    /// Out of sight and unchanged: whatever the base holds.
    AsBase,
    Unknown,
}

/// What a side holds of `text`, as far as the versions tell.
fn in_side(base: &Version, s: &Side, text: &str, key: &Key) -> Held {
    if s.v.rows.contains_key(text) {
        return Held::Known(true);
    }
    if s.v.fold.shows(key) {
        return Held::Known(false);
    }
    match (s.clean, base.rows.contains_key(text)) {
        (false, _) => Held::Unknown,
        (true, true) => Held::Known(!s.flipped.contains(text)),
        // Out of sight on a side that changed nothing out of sight.
        (true, false) => Held::AsBase,
    }
}

/// Whether the merged tree has a row, from what the base and each side hold.
fn merged(based: Option<bool>, ours: Held, theirs: Held) -> Option<bool> {
    use Held::{AsBase, Known};
    match (ours, theirs) {
        (Known(a), AsBase) | (AsBase, Known(a)) => Some(a),
        (AsBase, AsBase) => based,
        (Known(a), Known(b)) if a == b => Some(a),
        // One side changed it: the change wins.
        (Known(_), Known(_)) => based.map(|b| !b),
        _ => None,
    }
}

/// The merged region: its rows in key order as far as they are certain,
/// and its totals.
pub fn merge(
    label: &str,
    words: Words,
    b: &Version,
    o: &Version,
    t: &Version,
) -> Result<Table, Unknown> {
    let sides = [side(b, o), side(b, t)];
    let mut limit = [&b.fold, &o.fold, &t.fold].into_iter().max().cloned().unwrap_or(Fold::All);
    for s in sides.iter().filter(|s| !s.clean) {
        limit = limit.min(s.v.fold.clone());
    }
    let mut candidates: BTreeMap<&str, &Row> = BTreeMap::new();
    for v in [b, o, t] {
        candidates.extend(v.rows.iter().map(|(text, r)| (text.as_str(), r)));
    }
    let mut ordered: Vec<(&str, &Row)> = candidates.into_iter().collect();
    ordered.sort_by(|x, y| x.1.key.cmp(&y.1.key).then(x.0.cmp(y.0)));
    let mut totals = o.totals.plus(&t.totals).minus(&b.totals);
    let (mut rows, mut certain) = (Vec::new(), true);
    for (text, row) in ordered {
        let based = in_base(b, &sides, text, &row.key);
        let ours = in_side(b, &sides[0], text, &row.key);
        let theirs = in_side(b, &sides[1], text, &row.key);
        let merged = merged(based, ours, theirs);
        // Both sides made the same change: the totals counted it twice.
        match (based, ours, theirs) {
            (Some(false), Held::Known(true), Held::Known(true)) => {
                totals = totals.minus(&Totals::row(row));
            }
            (Some(true), Held::Known(false), Held::Known(false)) => {
                totals = totals.plus(&Totals::row(row));
            }
            _ => {}
        }
        certain &= merged.is_some() && limit.shows(&row.key);
        if certain && merged == Some(true) {
            rows.push(row.clone());
        }
    }
    let complete = certain && limit == Fold::All;
    let ids: BTreeSet<&Vec<String>> = rows.iter().map(|r| &r.id).collect();
    let consistent = totals.rows >= rows.len() as i64
        && totals.bytes >= 0
        && (!complete || Totals::of(&rows) == totals);
    if ids.len() != rows.len() || !consistent {
        // One row changed two ways, or totals that do not add up.
        return Err(Unknown);
    }
    Ok(Table { label: label.to_string(), words, rows, complete, ordered: true, totals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bound::fit::fit;
    use crate::model::bound::testing::routing_table;

    fn words() -> Words {
        Words {
            header: vec!["| t | f | k |".into(), "|---|---|---|".into()],
            keyed_header: vec!["| t | f | k | d |".into(), "|---|---|---|---|".into()],
            empty: vec!["_none_".into()],
            more: "_…and {n} more._".into(),
        }
    }

    /// The routing table of memories `m{i}`, each `i` days after the epoch.
    fn table(memories: &[i64]) -> Table {
        routing_table(words(), memories.iter().map(|&i| (i, format!("t{i}"))))
    }

    fn lines(memories: &[i64]) -> Vec<String> {
        fit("", &[table(memories)]).unwrap().remove(0)
    }

    fn read(memories: &[i64]) -> Version {
        let l = lines(memories);
        version("routing", &body(&l.iter().map(String::as_str).collect::<Vec<_>>())).unwrap()
    }

    /// The merge of three trees, as the bounded table's lines.
    fn merged(b: &[i64], o: &[i64], t: &[i64]) -> Result<Vec<String>, Unknown> {
        let table = merge("routing", words(), &read(b), &read(o), &read(t))?;
        fit("", &[table]).map(|mut b| b.remove(0))
    }

    #[test]
    fn both_sides_adding_rows_merge_to_the_table_of_the_union() {
        let base: Vec<i64> = (0..400).collect();
        let with = |extra: &[i64]| [&base[..], extra].concat();
        let (o, t) = (with(&[1000, 5]), with(&[1001, 7]));
        // New rows at the top, and old ones out of sight.
        assert_eq!(merged(&base, &o, &t), Ok(lines(&with(&[1000, 5, 1001, 7]))));
    }

    #[test]
    fn a_forgotten_row_and_an_added_one_merge() {
        let base: Vec<i64> = (0..400).collect();
        let o: Vec<i64> = base.iter().copied().filter(|i| *i != 390).collect();
        let t = [&base[..], &[1000]].concat();
        let want: Vec<i64> = t.iter().copied().filter(|i| *i != 390).collect();
        assert_eq!(merged(&base, &o, &t), Ok(lines(&want)));
    }

    #[test]
    fn a_row_neither_side_shows_cannot_be_told() {
        let base: Vec<i64> = (0..400).collect();
        let o: Vec<i64> = base.iter().copied().filter(|i| *i != 399).collect();
        let t: Vec<i64> = base.iter().copied().filter(|i| *i != 398).collect();
        assert_eq!(merged(&base, &o, &t), Err(Unknown));
    }

    #[test]
    fn the_changes_out_of_sight_are_found_from_the_totals() {
        let row = |n: i64| Totals { rows: n, bytes: n * 10, digest: n as u64 * 7 };
        let either = [("a", row(1)), ("b", Totals::default().minus(&row(2))), ("c", row(4))];
        let set = explain(row(1).plus(&row(4)).minus(&row(2)), &either).unwrap();
        assert_eq!(set, BTreeSet::from(["a", "b", "c"]));
        assert_eq!(explain(row(4), &either), Some(BTreeSet::from(["c"])));
        assert_eq!(explain(Totals::default(), &either), Some(BTreeSet::new()));
        assert_eq!(explain(row(8), &either), None);
    }
}
