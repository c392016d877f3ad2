//! Corpus statistics, computed once per run: a term dictionary, per-term
//! postings with per-field counts, and field lengths. Scoring a query then
//! touches only the postings of its own terms.
//!
//! [`fields`](crate::rank::fields), [`stats`](crate::rank::stats) and
//! [`terms`](crate::rank::terms) hold the parts; this is the whole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::model::memory::Memory;
pub use crate::rank::fields::{FIELDS, Field, Posting};
pub use crate::rank::stats::{Boosts, DocStats, Stats, StatsColumns, token_mask};
pub use crate::rank::terms::{Built, Segment, StoredTerms, Terms, field_texts};
use crate::rank::tokenize::Tokenizer;

/// The indexed memories: one or more segments of documents, each with its
/// own term table, plus per-document statistics. Documents can be marked
/// dead (deleted or shadowed) without rebuilding a segment.
pub struct Corpus {
    tokenizer: Tokenizer,
    /// Term tables, each with the first document it covers.
    tables: Vec<(u32, Terms)>,
    live: Vec<bool>,
    live_count: usize,
    docs: Stats,
    avg: [f32; FIELDS],
    /// The postings of tokens asked for, once a long-lived process keeps
    /// this corpus ([`keep_in_memory`](Self::keep_in_memory)).
    kept: Option<Mutex<Kept>>,
}

/// Postings kept by token, at most [`KEPT_POSTINGS`] in all.
#[derive(Default)]
struct Kept {
    by_token: HashMap<String, Arc<[Posting]>>,
    total: usize,
}

/// Postings a kept corpus holds at most (about 20 bytes each), beyond which
/// it starts again: a few frequent words' worth.
const KEPT_POSTINGS: usize = 1 << 20;

/// A token's postings: borrowed from a table, made now, or shared with
/// the ones a kept corpus holds.
pub enum Postings<'c> {
    Borrowed(&'c [Posting]),
    Owned(Vec<Posting>),
    Shared(Arc<[Posting]>),
}

impl std::ops::Deref for Postings<'_> {
    type Target = [Posting];

    fn deref(&self) -> &[Posting] {
        match self {
            Postings::Borrowed(p) => p,
            Postings::Owned(p) => p,
            Postings::Shared(p) => p,
        }
    }
}

impl Corpus {
    /// Index `memories`; document ids are their positions in the slice.
    pub fn build(memories: &[Memory]) -> Corpus {
        let tokenizer = Tokenizer::new();
        let (docs, tables) = Segment::split(Segment::build_parallel(memories, &tokenizer));
        Corpus::assemble(vec![true; memories.len()], docs.into(), tables)
    }

    /// Put together the statistics of every document and the term tables
    /// that cover them (each with its first document); `live` (one entry per
    /// document) marks those that may be ranked (dead ones are deleted or
    /// shadowed).
    pub fn assemble(live: Vec<bool>, docs: Stats, tables: Vec<(u32, Terms)>) -> Corpus {
        let tokenizer = Tokenizer::new();
        assert_eq!(docs.len(), live.len(), "statistics cover every document");
        let live_count = live.iter().filter(|l| **l).count();
        let totals = docs.total_lengths(&live);
        let avg = totals.map(|t| (t as f32 / live_count.max(1) as f32).max(1.0));
        Corpus { tokenizer, tables, live, live_count, docs, avg, kept: None }
    }

    /// The tokenizer the corpus was built with.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The tokens of `text`, in order.
    pub fn token_list(&self, text: &str) -> Vec<String> {
        token_list(&self.tokenizer, text)
    }

    /// Number of documents, dead ones included (ids run from 0 to this).
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Number of documents that may be ranked.
    pub fn live_len(&self) -> usize {
        self.live_count
    }

    /// True when `doc` may be ranked.
    pub fn is_live(&self, doc: usize) -> bool {
        self.live[doc]
    }

    /// Field lengths (in tokens) of one document.
    pub fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        self.docs.lengths(doc)
    }

    /// True when the document's summary was taken from its body.
    pub fn derived_summary(&self, doc: usize) -> bool {
        self.docs.derived_summary(doc)
    }

    /// What bounds a document's boosts, without reading it.
    pub fn boosts(&self, doc: usize) -> Boosts {
        self.docs.boosts(doc)
    }

    /// [`boosts`](Self::boosts) but for `updated`, perhaps left at 0.
    pub fn pin_and_triggers(&self, doc: usize) -> Boosts {
        self.docs.pin_and_triggers(doc)
    }

    /// Read every document's statistics into memory, and keep the postings
    /// of the tokens asked for, for the many queries of a long-lived
    /// process (a cache's are read where they lie, and checked, each time).
    pub fn keep_in_memory(&mut self) {
        self.docs.keep_in_memory();
        self.kept = Some(Mutex::default());
    }

    /// Average field lengths over the live documents.
    pub fn avg_lengths(&self) -> &[f32; FIELDS] {
        &self.avg
    }

    /// True when a packed table turned out damaged while answering: the
    /// answer cannot be trusted and the cache must be rebuilt.
    pub fn is_damaged(&self) -> bool {
        self.tables.iter().any(|(_, t)| matches!(t, Terms::Stored(s) if s.is_damaged()))
    }

    /// The postings of a token over the live documents, by document.
    pub fn postings(&self, token: &str) -> Postings<'_> {
        let Some(kept) = &self.kept else { return self.postings_now(token) };
        let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(shared) = kept.by_token.get(token) {
            return Postings::Shared(Arc::clone(shared));
        }
        let made = self.postings_now(token);
        if self.is_damaged() {
            return made;
        }
        let shared: Arc<[Posting]> = Arc::from(&*made);
        if kept.total + shared.len() > KEPT_POSTINGS {
            *kept = Kept::default();
        }
        kept.total += shared.len();
        kept.by_token.insert(token.to_string(), Arc::clone(&shared));
        Postings::Shared(shared)
    }

    /// [`postings`](Self::postings), read from the tables now.
    fn postings_now(&self, token: &str) -> Postings<'_> {
        let all_live = self.live_count == self.live.len();
        if let [(0, only)] = self.tables.as_slice()
            && all_live
        {
            return match only.postings(token) {
                std::borrow::Cow::Borrowed(p) => Postings::Borrowed(p),
                std::borrow::Cow::Owned(p) => Postings::Owned(p),
            };
        }
        let mut out = Vec::new();
        for (first, table) in &self.tables {
            table.each_posting(token, |p| {
                let doc = first.saturating_add(p.doc);
                if self.live.get(doc as usize) == Some(&true) {
                    out.push(Posting { doc, tf: p.tf });
                }
            });
        }
        Postings::Owned(out)
    }
}

fn token_list(tokenizer: &Tokenizer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenizer.tokens(text, |t| out.push(t.to_string()));
    out
}
