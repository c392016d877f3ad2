//! The order the ranker visits a query's matches in: by the most each one's
//! final score can be, its ceiling. A match is first bounded with its own
//! pin, trigger and hits and the recency boost at its most (see
//! [`super::params::most_recency`]), and worked out exactly only when that
//! bound reaches the top of the heap. So only the matches that can make the
//! top are worked out, and read.

use std::collections::HashSet;

use crate::rank::corpus::{Corpus, token_mask};
use crate::rank::params::{Params, Signals, Used, most_recency, pinned_and_hits, recency};

/// A match and the most its final score can be, ordered by that most:
/// `exact` once worked out (first among equals), else a bound above it.
pub(super) struct Ceiling {
    pub(super) most: f32,
    pub(super) doc: usize,
    pub(super) exact: bool,
}

impl PartialEq for Ceiling {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ceiling {}

impl PartialOrd for Ceiling {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ceiling {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.most
            .total_cmp(&other.most)
            .then(self.exact.cmp(&other.exact))
            .then(other.doc.cmp(&self.doc))
    }
}

/// The ceilings of one query's matches, from their lexical scores and what
/// the index knows of each memory.
pub(super) struct Bounds<'a> {
    corpus: &'a Corpus,
    params: &'a Params,
    scores: &'a [f32],
    query_mask: u64,
    signals: &'a [Signals],
    now_ms: i64,
    most_recent: Option<f32>,
}

impl<'a> Bounds<'a> {
    /// For a query of the tokens `query`, whose lexical score of document
    /// `d` is `scores[d]`, with each memory's `signals` as of `now_ms`.
    pub(super) fn new(
        corpus: &'a Corpus,
        params: &'a Params,
        scores: &'a [f32],
        query: &HashSet<String>,
        (signals, now_ms): (&'a [Signals], i64),
    ) -> Self {
        let query_mask = token_mask(query.iter().map(String::as_str));
        let most_recent = most_recency(params);
        Bounds { corpus, params, scores, query_mask, signals, now_ms, most_recent }
    }

    /// The lexical score of `d`.
    pub(super) fn relevance(&self, d: usize) -> f32 {
        self.scores[d]
    }

    /// The first ceiling of `d` put on the heap: a bound, or exact when the
    /// recency boost has no most.
    pub(super) fn first(&self, d: usize) -> Ceiling {
        Ceiling { most: self.of(d, self.most_recent), doc: d, exact: self.most_recent.is_none() }
    }

    /// A bound worked out exactly; None once it is.
    pub(super) fn finer(&self, ceiling: &Ceiling) -> Option<Ceiling> {
        let doc = ceiling.doc;
        (!ceiling.exact).then(|| Ceiling { most: self.of(doc, None), doc, exact: true })
    }

    /// The most the final score of `d` can be, with the recency boost taken
    /// at `most_recent` when given (a bound, then).
    fn of(&self, d: usize, most_recent: Option<f32>) -> f32 {
        let (corpus, params) = (self.corpus, self.params);
        let stats =
            if most_recent.is_some() { corpus.pin_and_triggers(d) } else { corpus.boosts(d) };
        let trigger = if stats.may_fire(self.query_mask) { params.trigger.max(0.0) } else { 0.0 };
        let signals = self.signals.get(d).copied().unwrap_or_default();
        let [pinned, hits] = pinned_and_hits(params, stats.pinned, signals.hits);
        let recent = most_recent.unwrap_or_else(|| {
            let (updated, last_hit) = (stats.updated, signals.last_hit);
            recency(params, Used { updated, last_hit, now_ms: self.now_ms })
        });
        let boosts = 1.0 + [pinned, hits, recent].iter().sum::<f32>();
        (self.scores[d] + trigger) * boosts * (1.0 + 1e-5)
    }
}
