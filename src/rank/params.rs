//! The scorer's constants, and the boosts they make: pinned, often hit and
//! recent (by a half-life of the last update, or by the tier of the last
//! use). Every number that shapes the ranking lives in [`Params`], so
//! `--explain` and the evaluation harness see the scorer the command uses.

use crate::model::usage::Tier;
use crate::rank::corpus::FIELDS;

/// The scorer's constants.
#[derive(Debug, Clone)]
pub struct Params {
    pub k1: f32,
    /// Length normalisation per field.
    pub b: [f32; FIELDS],
    /// Weight per field (title, summary, highlight, load_when, tags, path, body).
    pub weight: [f32; FIELDS],
    /// Summary weight in place of `weight[summary]` when the summary was not
    /// written but taken from the body's first paragraph, which is already
    /// scored as body.
    pub derived_summary: f32,
    /// Scale of a word-pair term (`support group`), relative to a word.
    pub pair: f32,
    /// Scale of a CJK bigram, relative to a Latin word: a word is a whole
    /// unit of meaning, a bigram one of several overlapping pieces of text.
    pub bigram: f32,
    /// Scale of a CJK bigram with a function character (`的公`, `是类`),
    /// relative to a bigram.
    pub function_bigram: f32,
    /// Scale of a single CJK character, relative to a bigram.
    pub unigram: f32,
    /// Exponent of query coverage (share of the query's idf a memory matched).
    pub coverage: f32,
    /// Added when a whole `load_when` trigger occurs in the query.
    pub trigger: f32,
    /// Multiplier added for a pinned memory.
    pub pinned: f32,
    /// Multiplier added per natural-log unit of hits, and its cap.
    pub hits: f32,
    pub hits_cap: f32,
    /// Multiplier added for a recent memory: for one updated just now,
    /// halving every `half_life_days`; or times its tier's weight.
    pub recency: f32,
    pub half_life_days: f64,
    /// What the recency boost measures (see [`Recency`]).
    pub recency_by: Recency,
}

/// What makes a memory recent for the ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recency {
    /// The time since its last update, halving the boost every
    /// `half_life_days`.
    HalfLife,
    /// The tier of its last use (hot 1.0, warm 0.7, cool 0.3; see
    /// [`crate::model::usage::Tier`]).
    Tiers,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k1: 1.0,
            b: [0.3, 0.5, 0.3, 0.2, 0.2, 0.3, 0.85],
            weight: [3.0, 2.0, 2.0, 3.0, 2.0, 1.0, 1.0],
            derived_summary: 1.0,
            pair: 0.25,
            bigram: 0.625,
            function_bigram: 0.6,
            unigram: 0.3,
            coverage: 0.0,
            trigger: 4.0,
            pinned: 0.1,
            hits: 0.04,
            hits_cap: 0.2,
            recency: 0.1,
            half_life_days: 30.0,
            recency_by: Recency::HalfLife,
        }
    }
}

/// Per-memory signals that live outside the Markdown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signals {
    pub hits: u32,
    /// Epoch ms of the last hit (0: never).
    pub last_hit: i64,
}

/// When a memory was updated and last hit, and now.
#[derive(Debug, Clone, Copy)]
pub(super) struct Used {
    pub(super) updated: i64,
    pub(super) last_hit: i64,
    pub(super) now_ms: i64,
}

impl Used {
    /// Whole days since its last use (the later of hit and update).
    pub(super) fn days(self) -> i64 {
        self.now_ms.saturating_sub(self.updated.max(self.last_hit)).max(0)
            / crate::base::time::DAY_MS
    }
}

/// The multipliers added for a pinned, an often-hit and a recent memory; 0
/// where one does not apply. The ranker bounds a memory's score with these
/// before reading it, so they depend only on what the index and the hit
/// records know.
pub(super) fn boost_factors(p: &Params, pinned: bool, hits: u32, used: Used) -> [f32; 3] {
    let [pinned, hits] = pinned_and_hits(p, pinned, hits);
    [pinned, hits, recency(p, used)]
}

/// The pinned and the hits multipliers of [`boost_factors`].
pub(super) fn pinned_and_hits(p: &Params, pinned: bool, hits: u32) -> [f32; 2] {
    let pinned = if pinned { p.pinned } else { 0.0 };
    let hits = if hits > 0 { (p.hits * (1.0 + hits as f32).ln()).min(p.hits_cap) } else { 0.0 };
    [pinned, hits]
}

/// The recency multiplier of [`boost_factors`].
pub(super) fn recency(p: &Params, used: Used) -> f32 {
    match p.recency_by {
        Recency::HalfLife => {
            let age_days = (used.now_ms.saturating_sub(used.updated).max(0) as f64)
                / crate::base::time::DAY_MS as f64;
            let decay = 0.5f64.powf(age_days / p.half_life_days) as f32;
            if decay * p.recency >= 0.001 { p.recency * decay } else { 0.0 }
        }
        Recency::Tiers => p.recency * Tier::of_days(used.days()).weight(),
    }
}

/// The most [`recency`] can be for any memory, when that is worth knowing
/// before working it out (a power per memory): a half-life's decay is at
/// most 1 while the half-life is positive. None otherwise (by tier it is
/// cheap to work out).
pub(super) fn most_recency(p: &Params) -> Option<f32> {
    (p.recency_by == Recency::HalfLife && p.half_life_days > 0.0).then(|| p.recency.max(0.0))
}
