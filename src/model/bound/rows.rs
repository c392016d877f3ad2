//! The rows of ROOT.md's `registry` and `routing` tables, as the compiler
//! writes them and the merge driver reads them back: each row's order (what
//! a bounded table keeps first), its identity, the form it has in a whole
//! table and in a bounded one, and its share of the totals a bounded table
//! carries in its last line.
//!
//! The order is read from the row itself, so that the merge driver, which
//! sees nothing but three versions of ROOT.md, orders rows exactly as the
//! compiler did: pinned memories first, then rules, then memories whose
//! `relevance:` is high, then the rest (low last), each by the day the
//! memory was last changed (newest first), then the path and the trigger.
//! Use is left out on purpose: hit counts, and the relevance they lower
//! over time, live in `.state.json`, which each clone keeps for itself, so
//! an order built on them would differ between clones and no commit could
//! be checked against it. The relevance a memory declares is in its file.

use std::cmp::Reverse;

use sha2::{Digest, Sha256};

use crate::base::time::{iso_day, parse_day};
use crate::model::table::{cell, cells, clipped, link_text};

/// The most bytes a row of a bounded table takes (without its newline):
/// a cell that would make it longer is cut. Knowing it, the compiler
/// decides how many rows to keep from the rows it keeps alone.
pub const ROW_MAX: usize = 400;
/// The most bytes of a trigger's cell, and of a kind's.
const TRIGGER_MAX: usize = 100;
const KIND_MAX: usize = 40;

/// Where a row goes in the order a bounded table keeps rows in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// 0 pinned, 1 rule, 2 high, 3 medium, 4 low relevance (the registry:
    /// always 0).
    group: u8,
    newest: Reverse<i64>,
    path: String,
    trigger: String,
}

/// One row of a bounded region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Key,
    /// What the row is about (the cells the merge driver keys rows by), in
    /// the order a table shows its rows.
    pub id: Vec<String>,
    /// The row as a bounded table shows it.
    pub keyed: String,
    /// The row as a whole table shows it.
    pub plain: String,
}

impl Row {
    /// A registry row (`| [name](name/index.md) | description |`): it is
    /// the same in a whole table and a bounded one.
    pub fn registry(text: &str) -> Row {
        let name = cells(text).first().map(|c| link_text(c).to_string()).unwrap_or_default();
        let key = Key { group: 0, newest: Reverse(0), path: name.clone(), trigger: String::new() };
        Row { key, id: vec![name], keyed: text.to_string(), plain: text.to_string() }
    }

    /// A routing row of a bounded table (`| trigger | file | kind | day |`),
    /// or None when it is not one (a row of a whole table has no day).
    pub fn routing(keyed: &str) -> Option<Row> {
        let c = cells(keyed);
        let [trigger, file, kind, when] = c.as_slice() else { return None };
        let date: String = when.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        let day = parse_day(&date)?;
        let mark = match when[date.len()..].trim() {
            "" => None,
            word => Some(MARKS.iter().find(|(_, en, zh)| word == *en || word == *zh)?.0),
        };
        let file = link_text(file).to_string();
        let rule = kind.eq_ignore_ascii_case("rule") || file.starts_with("rules/");
        let group = match (mark, rule) {
            (Some(Mark::Pinned), _) => 0,
            (_, true) => 1,
            (Some(Mark::High), _) => 2,
            (None, _) => 3,
            (Some(Mark::Low), _) => 4,
        };
        // The whole table's row is the bounded one without its last cell.
        let plain = keyed.trim_end().strip_suffix('|')?.rsplit_once('|')?.0.to_string() + "|";
        let id = vec![trigger.clone(), file.clone(), kind.clone()];
        let key = Key { group, newest: Reverse(day), path: file, trigger: trigger.clone() };
        Some(Row { key, id, keyed: keyed.to_string(), plain })
    }

    /// A row of a whole routing table: shown as it is, and never cut, for
    /// it does not say its order.
    pub fn unordered(text: &str) -> Row {
        let id: Vec<String> =
            cells(text).iter().take(3).map(|c| link_text(c).to_string()).collect();
        let key = Key { group: 0, newest: Reverse(0), path: String::new(), trigger: String::new() };
        Row { key, id, keyed: text.to_string(), plain: text.to_string() }
    }

    /// The row's share of a table's digest.
    pub fn hash(&self) -> u64 {
        let digest = Sha256::digest(self.keyed.as_bytes());
        u64::from_le_bytes(digest[..8].try_into().expect("eight bytes"))
    }
}

/// What a routing row's day is marked with: what puts it before (or
/// after) the rows of its day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Pinned,
    High,
    Low,
}

/// Each mark as it is written, in English and in Chinese.
const MARKS: [(Mark, &str, &str); 3] = [
    (Mark::Pinned, "(pinned)", "（置顶）"),
    (Mark::High, "(high)", "（高）"),
    (Mark::Low, "(low)", "（低）"),
];

impl Mark {
    /// The mark of a memory: pinned, or (but for a rule, which comes first
    /// whatever it declares) the relevance it declares when not medium.
    pub fn of(pinned: bool, rule: bool, relevance: crate::model::usage::Relevance) -> Option<Mark> {
        use crate::model::usage::Relevance;
        match (pinned, rule, relevance) {
            (true, _, _) => Some(Mark::Pinned),
            (_, true, _) | (_, _, Relevance::Medium) => None,
            (_, _, Relevance::High) => Some(Mark::High),
            (_, _, Relevance::Low) => Some(Mark::Low),
        }
    }

    /// The mark as written in English or in Chinese.
    pub fn word(self, zh: bool) -> &'static str {
        let (_, en, cn) = MARKS.iter().find(|(m, _, _)| *m == self).expect("every mark is listed");
        if zh { cn } else { en }
    }
}

/// One routing row as the compiler writes it, before it is read back as a
/// [`Row`]. `mark` is the word its day is marked with.
pub struct Trigger<'a> {
    pub trigger: &'a str,
    pub file: &'a str,
    pub kind: &'a str,
    pub updated_ms: i64,
    pub mark: Option<&'a str>,
}

impl Trigger<'_> {
    /// The row in the form a bounded table shows (cells cut so that it is
    /// at most [`ROW_MAX`] bytes); [`Row::routing`] reads it.
    pub fn keyed(&self) -> String {
        let trigger = clipped(cell(self.trigger), TRIGGER_MAX);
        let kind = clipped(cell(self.kind), KIND_MAX);
        let f = self.file;
        let day = match self.mark {
            Some(mark) => format!("{} {mark}", iso_day(self.updated_ms)),
            None => iso_day(self.updated_ms),
        };
        format!("| {trigger} | [{f}]({f}) | {kind} | {day} |")
    }
}

/// What a bounded table says of all its rows, shown or not: how many, their
/// bytes in a whole table, and the sum of their hashes. A merge adds and
/// subtracts them as it adds and removes rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub rows: i64,
    pub bytes: i64,
    pub digest: u64,
}

impl Totals {
    /// The totals of `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Totals {
        rows.into_iter().fold(Totals::default(), |t, r| t.plus(&Totals::row(r)))
    }

    /// One row's share.
    pub fn row(r: &Row) -> Totals {
        Totals { rows: 1, bytes: r.plain.len() as i64, digest: r.hash() }
    }

    pub fn plus(self, o: &Totals) -> Totals {
        Totals {
            rows: self.rows + o.rows,
            bytes: self.bytes + o.bytes,
            digest: self.digest.wrapping_add(o.digest),
        }
    }

    pub fn minus(self, o: &Totals) -> Totals {
        Totals {
            rows: self.rows - o.rows,
            bytes: self.bytes - o.bytes,
            digest: self.digest.wrapping_sub(o.digest),
        }
    }

    /// The comment a bounded table's last line carries.
    pub fn comment(&self) -> String {
        format!(
            "<!-- mem:more total={} bytes={} digest={:016x} -->",
            self.rows, self.bytes, self.digest
        )
    }

    /// The totals of a line that ends a bounded table.
    pub fn parse(line: &str) -> Option<Totals> {
        let at = line.find("<!-- mem:more ")?;
        let inner = line[at..].strip_prefix("<!-- mem:more ")?.split("-->").next()?;
        let mut t = Totals::default();
        let mut seen = 0;
        for part in inner.split_whitespace() {
            match part.split_once('=')? {
                ("total", v) => t.rows = v.parse().ok().filter(|n: &i64| *n >= 0)?,
                ("bytes", v) => t.bytes = v.parse().ok().filter(|n: &i64| *n >= 0)?,
                ("digest", v) => t.digest = u64::from_str_radix(v, 16).ok()?,
                _ => return None,
            }
            seen += 1;
        }
        (seen == 3).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trigger(t: &str, file: &str, kind: &str, ms: i64, pinned: bool) -> Row {
        marked(t, file, kind, ms, pinned.then_some(Mark::Pinned))
    }

    fn marked(t: &str, file: &str, kind: &str, ms: i64, mark: Option<Mark>) -> Row {
        let word = mark.map(|m| m.word(false));
        let row = Trigger { trigger: t, file, kind, updated_ms: ms, mark: word };
        Row::routing(&row.keyed()).expect("a keyed row reads back")
    }

    #[test]
    fn pinned_then_rules_then_newest_then_path() {
        let day = 86_400_000;
        let mut rows = [
            trigger("b", "facts/old.md", "fact", day, false),
            trigger("a", "facts/new.md", "fact", 9 * day, false),
            trigger("a", "facts/same-day.md", "fact", 9 * day + 5, false),
            trigger("z", "rules/r.md", "fact", 0, false),
            trigger("y", "facts/pinned.md", "fact", 0, true),
            trigger("x", "facts/k.md", "Rule", 0, false),
            marked("h", "facts/high.md", "fact", 0, Some(Mark::High)),
            marked("l", "facts/low.md", "fact", 9 * day + 9, Some(Mark::Low)),
        ];
        rows.sort_by(|a, b| a.key.cmp(&b.key));
        let files: Vec<&str> = rows.iter().map(|r| r.id[1].as_str()).collect();
        assert_eq!(
            files,
            [
                "facts/pinned.md",
                "facts/k.md",
                "rules/r.md",
                "facts/high.md",
                "facts/new.md",
                "facts/same-day.md",
                "facts/old.md",
                "facts/low.md"
            ]
        );
    }

    #[test]
    fn a_keyed_row_is_the_plain_row_and_a_day() {
        let r = trigger("Vec<T> | x", "facts/a.md", "fact", 1_796_132_239_501, true);
        assert_eq!(
            r.keyed,
            "| Vec\\<T> \\| x | [facts/a.md](facts/a.md) | fact | 2026-12-01 (pinned) |"
        );
        assert_eq!(r.plain, "| Vec\\<T> \\| x | [facts/a.md](facts/a.md) | fact |");
        assert_eq!(r.id, ["Vec<T> | x", "facts/a.md", "fact"]);
        assert!(Row::routing(&r.plain).is_none());
        // A far date reads back; the longest row stays within its bound.
        let long = "部".repeat(200);
        let file = format!("{}/{}.md", "c".repeat(32), "s".repeat(64));
        let r = trigger(&long, &file, &"k".repeat(90), i64::MIN / 2, true);
        assert!(r.keyed.len() <= ROW_MAX, "{}", r.keyed.len());
        assert!(r.key < trigger("a", "a/a.md", "fact", 0, false).key);
    }

    #[test]
    fn totals_read_back_and_add_up() {
        let a = trigger("a", "facts/a.md", "fact", 0, false);
        let b = trigger("b", "facts/b.md", "fact", 0, false);
        let t = Totals::of([&a, &b]);
        assert_eq!(Totals::parse(&format!("_…and 2 more_ {}", t.comment())), Some(t));
        assert_eq!(t.minus(&Totals::row(&b)), Totals::of([&a]));
        assert_eq!(Totals::parse("<!-- mem:more total=1 -->"), None);
        assert_eq!(Totals::parse("<!-- mem:more total=-1 bytes=0 digest=0 -->"), None);
    }
}
