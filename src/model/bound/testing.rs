//! The routing table the bound's tests are built on.

use super::fit::{Table, Words};
use super::rows::{Row, Totals, Trigger};

/// A complete routing table: for each `(i, trigger)`, memory `facts/m{i}.md`
/// updated `i` days after the epoch, in key order.
pub(super) fn routing_table(words: Words, memories: impl Iterator<Item = (i64, String)>) -> Table {
    let mut rows: Vec<Row> = memories
        .map(|(i, trigger)| {
            let file = format!("facts/m{i}.md");
            let t = Trigger {
                trigger: &trigger,
                file: &file,
                kind: "fact",
                updated_ms: i * 86_400_000,
                mark: None,
            };
            Row::routing(&t.keyed()).unwrap()
        })
        .collect();
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let totals = Totals::of(&rows);
    Table { label: "routing".into(), words, rows, complete: true, ordered: true, totals }
}
