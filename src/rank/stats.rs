//! Per-document statistics: field lengths, boosts (pinned, recency,
//! triggers), in runs held in memory or read where they lie in a cache.

use crate::model::memory::Memory;
use crate::rank::fields::FIELDS;
use crate::rank::tokenize::Tokenizer;

/// A run of documents' statistics: held in memory (built now), or kept
/// where they lie (a cache's columns) and read when asked for. Reads are in
/// bounds: a source checks its columns before it is made.
pub trait StatsColumns: Send + Sync {
    /// Number of documents.
    fn docs(&self) -> usize;
    /// What bounds the boosts of document `doc` (< `len`).
    fn boosts(&self, doc: usize) -> Boosts;
    /// [`boosts`](Self::boosts), where `updated` may be left at 0: what
    /// bounds them before the recency is worked out, read more cheaply.
    fn pin_and_triggers(&self, doc: usize) -> Boosts {
        self.boosts(doc)
    }
    /// Its field lengths.
    fn lengths(&self, doc: usize) -> [u32; FIELDS];
    /// True when its summary was taken from its body.
    fn derived_summary(&self, doc: usize) -> bool;
    /// Add the field lengths of the documents `live` marks to `totals`.
    fn add_lengths(&self, live: &[bool], totals: &mut [u64; FIELDS]) {
        for doc in (0..self.docs()).filter(|&d| live[d]) {
            for (t, len) in totals.iter_mut().zip(self.lengths(doc)) {
                *t += u64::from(len);
            }
        }
    }
}

impl StatsColumns for Vec<DocStats> {
    fn docs(&self) -> usize {
        self.len()
    }

    fn boosts(&self, doc: usize) -> Boosts {
        self[doc].boosts
    }

    fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        self[doc].lengths
    }

    fn derived_summary(&self, doc: usize) -> bool {
        self[doc].derived_summary
    }
}

/// Every document's statistics, as consecutive runs.
#[derive(Default)]
pub struct Stats {
    runs: Vec<Box<dyn StatsColumns>>,
    /// Each run's first document.
    firsts: Vec<usize>,
    len: usize,
}

impl Stats {
    /// Add the statistics of the next documents.
    pub fn push(&mut self, docs: Vec<DocStats>) {
        self.push_columns(Box::new(docs));
    }

    /// Add the next documents, read from their columns when asked.
    pub fn push_columns(&mut self, columns: Box<dyn StatsColumns>) {
        if columns.docs() > 0 {
            self.firsts.push(self.len);
            self.len += columns.docs();
            self.runs.push(columns);
        }
    }

    /// Add every run of `other`.
    pub fn append(&mut self, other: Stats) {
        other.runs.into_iter().for_each(|run| self.push_columns(run));
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The run holding `doc` (< `len`), and its place in it.
    fn locate(&self, doc: usize) -> (&dyn StatsColumns, usize) {
        let r = match self.firsts.len() {
            1 => 0,
            _ => self.firsts.partition_point(|&f| f <= doc) - 1,
        };
        (self.runs[r].as_ref(), doc - self.firsts[r])
    }

    /// What bounds the boosts of `doc`.
    pub fn boosts(&self, doc: usize) -> Boosts {
        let (run, d) = self.locate(doc);
        run.boosts(d)
    }

    /// [`boosts`](Self::boosts), `updated` perhaps left at 0.
    pub fn pin_and_triggers(&self, doc: usize) -> Boosts {
        let (run, d) = self.locate(doc);
        run.pin_and_triggers(d)
    }

    /// Read every document's statistics into memory, as one run of
    /// columns: for a long-lived process, that ranks the same documents
    /// many times.
    pub fn keep_in_memory(&mut self) {
        let mut columns = Columns::default();
        for doc in 0..self.len {
            let (run, d) = self.locate(doc);
            let boosts = run.boosts(d);
            let mut mark = boosts.trigger_count;
            mark |= if boosts.pinned { PINNED } else { 0 };
            mark |= if run.derived_summary(d) { DERIVED } else { 0 };
            columns.marks.push(mark);
            columns.lengths.push(run.lengths(d));
            columns.updated.push(boosts.updated);
            columns.triggers.push(boosts.triggers);
        }
        let mut kept = Stats::default();
        kept.push_columns(Box::new(columns));
        *self = kept;
    }

    pub(crate) fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        let (run, d) = self.locate(doc);
        run.lengths(d)
    }

    pub(crate) fn derived_summary(&self, doc: usize) -> bool {
        let (run, d) = self.locate(doc);
        run.derived_summary(d)
    }

    /// The field lengths of the documents `live` marks, summed.
    pub(crate) fn total_lengths(&self, live: &[bool]) -> [u64; FIELDS] {
        let mut totals = [0u64; FIELDS];
        for (run, &first) in self.runs.iter().zip(&self.firsts) {
            run.add_lengths(&live[first..first + run.docs()], &mut totals);
        }
        totals
    }
}

/// Statistics held in memory column by column, so that what ranking asks
/// of every match (a mark; field lengths) lies close together.
#[derive(Default)]
struct Columns {
    /// The trigger count (0 to 2), and [`PINNED`] and [`DERIVED`].
    marks: Vec<u8>,
    lengths: Vec<[u32; FIELDS]>,
    updated: Vec<i64>,
    triggers: Vec<[u64; 2]>,
}

const PINNED: u8 = 4;
const DERIVED: u8 = 8;

impl StatsColumns for Columns {
    fn docs(&self) -> usize {
        self.marks.len()
    }

    fn boosts(&self, doc: usize) -> Boosts {
        Boosts { updated: self.updated[doc], ..self.pin_and_triggers(doc) }
    }

    fn pin_and_triggers(&self, doc: usize) -> Boosts {
        let mark = self.marks[doc];
        let trigger_count = mark & 3;
        Boosts {
            pinned: mark & PINNED != 0,
            updated: 0,
            trigger_count,
            triggers: if trigger_count == 0 { [0, 0] } else { self.triggers[doc] },
        }
    }

    fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        self.lengths[doc]
    }

    fn derived_summary(&self, doc: usize) -> bool {
        self.marks[doc] & DERIVED != 0
    }
}

impl From<Vec<DocStats>> for Stats {
    fn from(docs: Vec<DocStats>) -> Stats {
        let mut stats = Stats::default();
        stats.push(docs);
        stats
    }
}

/// What ranking needs to know of a document without reading it: enough to
/// score it, and to bound its final score before its memory is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DocStats {
    /// Field lengths, in tokens.
    pub lengths: [u32; FIELDS],
    /// The summary was taken from the body.
    pub derived_summary: bool,
    pub boosts: Boosts,
}

/// What a document's boosts and trigger bonus depend on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Boosts {
    pub pinned: bool,
    /// Epoch milliseconds, as the memory's `updated`.
    pub updated: i64,
    /// How many of `triggers` are in use (0 to 2).
    pub trigger_count: u8,
    /// [`token_mask`]s of the `load_when` triggers: the first one's, and
    /// the intersection of the others'. A trigger can fire only when its
    /// mask lies inside the query's.
    pub triggers: [u64; 2],
}

impl DocStats {
    /// The statistics of a memory whose fields have `lengths`.
    pub fn of(m: &Memory, lengths: [u32; FIELDS], tokenizer: &Tokenizer) -> DocStats {
        let masks: Vec<u64> = m
            .load_when
            .iter()
            .filter_map(|t| {
                let mut tokens = Vec::new();
                tokenizer.tokens(t, |tok| tokens.push(token_mask([tok])));
                (!tokens.is_empty()).then(|| tokens.iter().fold(0, |a, b| a | b))
            })
            .collect();
        let (triggers, trigger_count) = match masks.as_slice() {
            [] => ([0, 0], 0),
            [one] => ([*one, 0], 1),
            [first, rest @ ..] => ([*first, rest.iter().fold(!0, |a, b| a & b)], 2),
        };
        DocStats {
            lengths,
            derived_summary: m.summary_derived,
            boosts: Boosts { pinned: m.pinned, updated: m.updated, trigger_count, triggers },
        }
    }
}

impl Boosts {
    /// False when no trigger of this document can fire for a query whose
    /// tokens have `query_mask`.
    pub fn may_fire(&self, query_mask: u64) -> bool {
        self.triggers[..usize::from(self.trigger_count)].iter().any(|m| m & !query_mask == 0)
    }
}

/// One bit per token (a hash of its bytes, modulo 64), ORed: a superset
/// test on masks is a cheap necessary condition for a subset of tokens.
pub fn token_mask<'t>(tokens: impl IntoIterator<Item = &'t str>) -> u64 {
    tokens
        .into_iter()
        .fold(0, |mask, tok| mask | 1 << (crate::base::codec::hash_bytes(tok.as_bytes()) % 64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_in_runs_read_as_one_sequence() {
        let doc = |i: u32| DocStats {
            lengths: [i; FIELDS],
            derived_summary: i % 2 == 1,
            boosts: Boosts {
                updated: i64::from(i),
                pinned: i.is_multiple_of(3),
                trigger_count: (i % 3) as u8,
                triggers: [[0, 0], [u64::from(i), 0], [7, u64::from(i)]][i as usize % 3],
            },
        };
        let all: Vec<DocStats> = (0..9).map(doc).collect();
        let mut stats = Stats::default();
        stats.push_columns(Box::new(all[..4].to_vec()));
        stats.push(Vec::new());
        let mut rest = Stats::from(all[4..6].to_vec());
        rest.push_columns(Box::new(Vec::<DocStats>::new()));
        rest.push_columns(Box::new(all[6..].to_vec()));
        stats.append(rest);
        assert_eq!(stats.len(), all.len());
        let live: Vec<bool> = (0..all.len()).map(|d| d % 3 != 1).collect();
        let want = all.iter().zip(&live).filter(|(_, l)| **l).map(|(d, _)| u64::from(d.lengths[0]));
        assert_eq!(stats.total_lengths(&live), [want.sum::<u64>(); FIELDS]);
        for kept in [false, true] {
            if kept {
                // Read into memory: the same statistics.
                stats.keep_in_memory();
            }
            for (d, want) in all.iter().enumerate() {
                assert_eq!(stats.boosts(d), want.boosts, "doc {d}");
                let marks = Boosts { updated: 0, ..stats.pin_and_triggers(d) };
                assert_eq!(marks, Boosts { updated: 0, ..want.boosts });
                assert_eq!(stats.lengths(d), want.lengths);
                assert_eq!(stats.derived_summary(d), want.derived_summary);
            }
        }
    }
}
