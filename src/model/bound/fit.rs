//! What ROOT.md's generated regions hold so that the whole file — the
//! hand-written text with them — stays within [`MAX_LINES`] lines and
//! [`MAX_BYTES`] bytes, the first file a person or an agent opens.
//!
//! When everything fits, every table is whole, as it always was. When it
//! does not, the registry keeps what fits in its share and the routing table
//! what is left: the first rows in [`Key`](super::rows::Key) order, shown in
//! their usual order with the day each memory last changed, then one line
//! that says how many rows are left out and where they are. How many rows a
//! table keeps depends only on the rows it keeps (never on the first one it
//! leaves out) and on totals the last line carries, so the merge driver,
//! which knows the first rows of each version and those totals, reaches the
//! same answer as the compiler.

use super::rows::{ROW_MAX, Row, Totals};

/// The most lines ROOT.md holds, hand-written text included.
pub const MAX_LINES: usize = 200;
/// The most bytes ROOT.md holds, hand-written text included.
pub const MAX_BYTES: usize = 25_000;

/// What a region says besides its rows, in the root's language.
#[derive(Debug, Clone)]
pub struct Words {
    /// The header of a whole table.
    pub header: Vec<String>,
    /// The header of a bounded table (with its day column).
    pub keyed_header: Vec<String>,
    /// The body of a table without rows.
    pub empty: Vec<String>,
    /// The last line of a bounded table; `{n}` is how many rows it leaves out.
    pub more: String,
}

/// One region's rows, as far as they are known.
#[derive(Debug, Clone)]
pub struct Table {
    pub label: String,
    pub words: Words,
    /// The first rows in key order: every row when `complete`.
    pub rows: Vec<Row>,
    pub complete: bool,
    /// Its rows carry their order (a whole routing table's do not: it can
    /// be shown whole, not cut).
    pub ordered: bool,
    /// All its rows, known or not.
    pub totals: Totals,
}

/// The rows needed to decide are not known (only in a merge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unknown;

/// Lines and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Size {
    lines: usize,
    bytes: usize,
}

impl Size {
    fn of(lines: &[String], nl: usize) -> Size {
        Size { lines: lines.len(), bytes: lines.iter().map(|l| l.len() + nl).sum() }
    }
    fn fits(self, room: Size) -> bool {
        self.lines <= room.lines && self.bytes <= room.bytes
    }
    fn minus(self, o: Size) -> Size {
        Size {
            lines: self.lines.saturating_sub(o.lines),
            bytes: self.bytes.saturating_sub(o.bytes),
        }
    }
    fn min(self, o: Size) -> Size {
        Size { lines: self.lines.min(o.lines), bytes: self.bytes.min(o.bytes) }
    }
    fn half(self) -> Size {
        Size { lines: self.lines / 2, bytes: self.bytes / 2 }
    }
    fn plus(self, o: Size) -> Size {
        Size { lines: self.lines + o.lines, bytes: self.bytes + o.bytes }
    }
}

/// The lines and bytes of ROOT.md's hand-written text (everything but the
/// `registry` and `routing` tables), when they alone are over the bound:
/// the tables are then cut to their last line each.
pub fn hand_written_over(text: &str) -> Option<(usize, usize)> {
    let found = crate::model::regions::find(text).ok()?;
    let bounded = |l: &str| matches!(l, "registry" | "routing");
    let outside = crate::model::regions::replace(text, &found, |l| bounded(l).then(Vec::new));
    let (lines, bytes) = (outside.lines().count(), outside.len());
    (lines > MAX_LINES || bytes > MAX_BYTES).then_some((lines, bytes))
}

/// The body of each region of `text` (ROOT.md with these regions empty),
/// in the order of `tables`: the registry, then routing.
pub fn fit(text: &str, tables: &[Table]) -> Result<Vec<Vec<String>>, Unknown> {
    let nl = if text.contains("\r\n") { 2 } else { 1 };
    let outside = Size { lines: text.lines().count(), bytes: text.len() };
    let room = Size { lines: MAX_LINES, bytes: MAX_BYTES }.minus(outside);
    let whole: Vec<Size> = tables.iter().map(|t| whole_size(t, nl)).collect();
    if whole.iter().fold(Size { lines: 0, bytes: 0 }, |a, s| a.plus(*s)).fits(room) {
        return tables.iter().map(whole_body).collect();
    }
    // The first table (the registry, a handful of categories) gets the room
    // the rest leave it, and at least half; the last gets what is left.
    let mut left = room;
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let later = whole[i + 1..].iter().fold(Size { lines: 0, bytes: 0 }, |a, s| a.plus(*s));
        let share = if i + 1 == tables.len() { left } else { left.minus(later.min(left.half())) };
        if whole[i].fits(share) {
            out.push(whole_body(t)?);
            left = left.minus(whole[i]);
        } else {
            out.push(bounded_body(t, share, nl)?);
            // A cut table takes its whole share, whatever its rows: what
            // the next one gets never grows when this one gains a row.
            left = left.minus(share);
        }
    }
    Ok(out)
}

/// The size of a table shown whole.
fn whole_size(t: &Table, nl: usize) -> Size {
    if t.totals.rows == 0 {
        return Size::of(&t.words.empty, nl);
    }
    let rows = t.totals.rows as usize;
    let header = Size::of(&t.words.header, nl);
    Size { lines: header.lines + rows, bytes: header.bytes + t.totals.bytes as usize + rows * nl }
}

/// Every row in the order a table shows them.
fn whole_body(t: &Table) -> Result<Vec<String>, Unknown> {
    if t.totals.rows == 0 {
        return Ok(t.words.empty.clone());
    }
    if !t.complete {
        return Err(Unknown);
    }
    let mut rows: Vec<&Row> = t.rows.iter().collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(t.words.header.iter().cloned().chain(rows.iter().map(|r| r.plain.clone())).collect())
}

/// The first rows that surely fit in `room`, then the line that counts the
/// rest. A row is taken while a row of [`ROW_MAX`] bytes would still fit,
/// so the choice never looks past the rows it takes.
fn bounded_body(t: &Table, room: Size, nl: usize) -> Result<Vec<String>, Unknown> {
    if !t.ordered {
        return Err(Unknown);
    }
    let total = t.totals.rows as usize;
    let more_max = more(t, total).len() + nl;
    let header = Size::of(&t.words.keyed_header, nl);
    let mut used = Size { lines: header.lines + 1, bytes: header.bytes + more_max };
    let mut kept = 0;
    while kept < total && used.lines < room.lines && used.bytes + ROW_MAX + nl <= room.bytes {
        let row = t.rows.get(kept).ok_or(Unknown)?;
        used.lines += 1;
        used.bytes += row.keyed.len() + nl;
        kept += 1;
    }
    if kept == 0 {
        return Ok(vec![more(t, total)]);
    }
    let mut rows: Vec<&Row> = t.rows[..kept].iter().collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    let mut out = t.words.keyed_header.clone();
    out.extend(rows.iter().map(|r| r.keyed.clone()));
    out.push(more(t, total - kept));
    Ok(out)
}

/// The line that ends a bounded table: how many rows it leaves out, where
/// they are, and (for the merge driver) the totals of all its rows.
fn more(t: &Table, left_out: usize) -> String {
    format!("{} {}", t.words.more.replace("{n}", &left_out.to_string()), t.totals.comment())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bound::testing::routing_table;

    fn words() -> Words {
        let header = vec!["| trigger | file | kind |".to_string(), "|---|---|---|".to_string()];
        Words {
            keyed_header: vec!["| t | f | k | d |".into(), "|---|---|---|---|".into()],
            empty: vec!["_none_".into()],
            more: "_…and {n} more._".into(),
            header,
        }
    }

    /// A routing table of `n` rows, the `i`-th `days` old and `pad` long.
    fn table(n: usize, pad: impl Fn(usize) -> usize) -> Table {
        let trigger = |i: usize| format!("t{i}{}", "x".repeat(pad(i)));
        routing_table(words(), (0..n).map(|i| (i as i64, trigger(i))))
    }

    fn file(outside: &str, body: &[String]) -> String {
        format!("{outside}{}\n", body.join("\n"))
    }

    #[test]
    fn whole_when_it_fits_cut_to_the_newest_when_not() {
        let small = fit("# plan\n", &[table(3, |_| 0)]).unwrap();
        assert_eq!(small[0].len(), 5);
        assert!(small[0][2].starts_with("| t0 | [facts/m0.md](facts/m0.md) | fact |"));
        let big = fit("# plan\n", &[table(500, |_| 0)]).unwrap();
        let text = file("# plan\n", &big[0]);
        assert!(text.lines().count() <= MAX_LINES && text.len() <= MAX_BYTES, "{text}");
        assert!(
            big[0].last().unwrap().starts_with(&format!("_…and {} more._", 500 + 3 - big[0].len()))
        );
        // The newest (the last days) are kept.
        assert!(text.contains("| t499 |") && !text.contains("| t0 |"), "{text}");
        // Long rows: the bytes bound it.
        let long = fit("# plan\n", &[table(500, |_| 90)]).unwrap();
        let text = file("# plan\n", &long[0]);
        assert!(text.len() <= MAX_BYTES && text.lines().count() < MAX_LINES - 20, "{text}");
    }

    #[test]
    fn the_cut_looks_only_at_the_rows_it_keeps() {
        let short = fit("", &[table(400, |_| 0)]).unwrap();
        // Longer rows past the cut change only the totals of the last line.
        let longer = fit("", &[table(400, |i| if i < 200 { 60 } else { 0 })]).unwrap();
        let rows = |b: &[String]| b[..b.len() - 1].to_vec();
        assert_eq!(rows(&short[0]), rows(&longer[0]));
        assert_ne!(short[0].last(), longer[0].last());
    }

    #[test]
    fn hand_written_text_over_the_bound_leaves_one_line() {
        let outside: String = (0..MAX_LINES + 1).map(|i| format!("line {i}\n")).collect();
        let text = format!("{outside}<!-- auto:begin routing -->\n<!-- auto:end -->\n");
        assert_eq!(hand_written_over(&text), Some((MAX_LINES + 3, text.len())));
        let body = fit(&text, &[table(5, |_| 0)]).unwrap();
        assert_eq!(body[0].len(), 1);
        assert!(body[0][0].starts_with("_…and 5 more._ <!-- mem:more total=5 "), "{:?}", body[0]);
        assert_eq!(hand_written_over("# plan\n"), None);
    }

    #[test]
    fn a_table_without_its_order_is_shown_whole_or_not_at_all() {
        let mut t = table(500, |_| 0);
        t.ordered = false;
        assert_eq!(fit("", &[t.clone()]), Err(Unknown));
        t.complete = false;
        let small = Table { rows: Vec::new(), totals: Totals::default(), ..t };
        assert_eq!(fit("", &[small]).unwrap(), [["_none_"]]);
    }
}
