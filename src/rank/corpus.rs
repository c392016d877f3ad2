//! Corpus statistics, computed once per run: a term dictionary, per-term
//! postings with per-field counts, and field lengths. Scoring a query then
//! touches only the postings of its own terms.

use crate::base::parallel;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use crate::memory::Memory;
use crate::rank::tokenize::{Kind, Tokenizer};

/// Number of scored fields.
pub const FIELDS: usize = 7;

/// The parts of a memory that are scored, each with its own weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Title,
    Summary,
    Highlight,
    LoadWhen,
    Tags,
    Path,
    Body,
}

impl Field {
    /// Every field, in index order.
    pub const ALL: [Field; FIELDS] = [
        Field::Title,
        Field::Summary,
        Field::Highlight,
        Field::LoadWhen,
        Field::Tags,
        Field::Path,
        Field::Body,
    ];

    /// The field's name as shown by `--explain`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Summary => "summary",
            Field::Highlight => "highlight",
            Field::LoadWhen => "load_when",
            Field::Tags => "tags",
            Field::Path => "path",
            Field::Body => "body",
        }
    }
}

/// One document's counts of one term, per field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub doc: u32,
    pub tf: [u16; FIELDS],
}

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
}

/// A run of documents' statistics: held in memory (built now), or kept
/// where they lie (a cache's columns) and read when asked for. Reads are in
/// bounds: a source checks its columns before it is made.
pub trait StatsColumns: Send + Sync {
    /// Number of documents.
    fn docs(&self) -> usize;
    /// What bounds the boosts of document `doc` (< `len`).
    fn boosts(&self, doc: usize) -> Boosts;
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

    fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        let (run, d) = self.locate(doc);
        run.lengths(d)
    }

    fn derived_summary(&self, doc: usize) -> bool {
        let (run, d) = self.locate(doc);
        run.derived_summary(d)
    }

    /// The field lengths of the documents `live` marks, summed.
    fn total_lengths(&self, live: &[bool]) -> [u64; FIELDS] {
        let mut totals = [0u64; FIELDS];
        for (run, &first) in self.runs.iter().zip(&self.firsts) {
            run.add_lengths(&live[first..first + run.docs()], &mut totals);
        }
        totals
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
    use crate::base::codec::mix;
    tokens.into_iter().fold(0, |mask, tok| {
        let h = mix(tok.bytes().fold(tok.len() as u64, |h, b| mix(h, u64::from(b))), 0);
        mask | 1 << (h % 64)
    })
}

/// A run of documents with its term table and per-document statistics.
pub struct Segment {
    pub terms: Terms,
    pub docs: Vec<DocStats>,
}

/// A term table: built in memory, or kept by the index in its files.
pub enum Terms {
    Built(Built),
    Stored(Box<dyn StoredTerms>),
}

/// A term table the index keeps in its files (see `index::packed`): what
/// ranking reads of it.
pub trait StoredTerms: Send + Sync {
    /// `emit` each posting of `token`, in document order (none when the
    /// table turns out damaged, which it then reports).
    fn each_posting(&self, token: &str, emit: &mut dyn FnMut(Posting));

    /// True once a read of the table failed its checksum: answers from it
    /// cannot be trusted.
    fn is_damaged(&self) -> bool;
}

/// A term table built from text.
#[derive(Default)]
pub struct Built {
    vocab: TermMap<Box<str>>,
    short: TermMap<u64>,
    postings: Vec<Vec<Posting>>,
}

type TermMap<K, V = u32> = HashMap<K, V, BuildHasherDefault<TermHasher>>;

/// The term dictionary's hasher: FxHash's multiply-rotate step, several
/// times faster than the default SipHash on short keys. Terms come from the
/// user's own files, so resistance to crafted collisions is not needed.
#[derive(Default)]
struct TermHasher(u64);

impl TermHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for TermHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    /// The multiply leaves the well-mixed bits high; rotate them into the
    /// low bits the table indexes by.
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// A token of one or two characters packed into a number.
fn short_key(tok: &str) -> Option<u64> {
    let mut chars = tok.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(a), b, None) => Some(u64::from(a) << 32 | b.map_or(0, u64::from)),
        _ => None,
    }
}

/// The texts of a memory, per field.
pub fn field_texts(m: &Memory) -> [Cow<'_, str>; FIELDS] {
    let path = format!("{} {}", m.path.category, m.path.slug.replace(['-', '_', '.'], " "));
    [
        Cow::Borrowed(m.title.as_str()),
        Cow::Borrowed(m.summary.as_str()),
        Cow::Borrowed(m.highlight.as_str()),
        Cow::Owned(m.load_when.join("\n")),
        Cow::Owned(m.tags.join("\n")),
        Cow::Owned(path),
        Cow::Borrowed(m.body.as_str()),
    ]
}

impl Built {
    fn intern(&mut self, tok: &str) -> u32 {
        let next = self.postings.len() as u32;
        let id = match short_key(tok) {
            Some(key) => *self.short.entry(key).or_insert(next),
            None => match self.vocab.get(tok) {
                Some(&id) => id,
                None => *self.vocab.entry(tok.into()).or_insert(next),
            },
        };
        if id == next {
            self.postings.push(Vec::new());
        }
        id
    }

    fn postings(&self, tok: &str) -> &[Posting] {
        let id = match short_key(tok) {
            Some(key) => self.short.get(&key),
            None => self.vocab.get(tok),
        };
        id.map_or(&[], |&id| self.postings[id as usize].as_slice())
    }

    /// Every term with its postings, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (String, &[Posting])> {
        let long = self.vocab.iter().map(|(t, &id)| (t.to_string(), id));
        let short = self.short.iter().map(|(&k, &id)| (short_token(k), id));
        long.chain(short).map(|(t, id)| (t, self.postings[id as usize].as_slice()))
    }
}

/// The token a `short_key` stands for.
fn short_token(key: u64) -> String {
    let a = char::from_u32((key >> 32) as u32).unwrap_or('\u{fffd}');
    let b = char::from_u32((key & 0xffff_ffff) as u32).filter(|&c| c != '\0');
    std::iter::once(a).chain(b).collect()
}

impl Segment {
    /// Tokenize `memories` into a segment; document ids start at 0.
    pub fn build(memories: &[Memory], tokenizer: &Tokenizer) -> Segment {
        let mut built = Built::default();
        let mut docs = Vec::with_capacity(memories.len());
        let mut counts: TermMap<u32, [u16; FIELDS]> = TermMap::default();
        for (doc, memory) in memories.iter().enumerate() {
            counts.clear();
            let mut len = [0u32; FIELDS];
            for (f, text) in field_texts(memory).iter().enumerate() {
                tokenizer.tokens(text, |tok| {
                    let id = built.intern(tok);
                    let tf = &mut counts.entry(id).or_insert([0; FIELDS])[f];
                    *tf = tf.saturating_add(1);
                    if Kind::of(tok) != Kind::Unigram {
                        len[f] += 1;
                    }
                });
            }
            for (&term, &tf) in &counts {
                built.postings[term as usize].push(Posting { doc: doc as u32, tf });
            }
            docs.push(DocStats::of(memory, len, tokenizer));
        }
        Segment { terms: Terms::Built(built), docs }
    }

    /// Build on every core: one segment per chunk of `memories`.
    fn build_parallel(memories: &[Memory], tokenizer: &Tokenizer) -> Vec<Segment> {
        let threads = parallel::threads();
        let chunk = memories.len().div_ceil(threads).max(512);
        if memories.len() <= chunk {
            return vec![Segment::build(memories, tokenizer)];
        }
        parallel::chunks(memories, chunk, |part| Segment::build(part, tokenizer))
    }

    /// Segments as one run of document statistics and their term tables,
    /// each with the first document it covers.
    pub fn split(segments: Vec<Segment>) -> (Vec<DocStats>, Vec<(u32, Terms)>) {
        let mut docs = Vec::with_capacity(segments.iter().map(|s| s.docs.len()).sum());
        let mut tables = Vec::with_capacity(segments.len());
        for mut segment in segments {
            tables.push((docs.len() as u32, segment.terms));
            docs.append(&mut segment.docs);
        }
        (docs, tables)
    }
}

impl Terms {
    fn postings(&self, tok: &str) -> Cow<'_, [Posting]> {
        match self {
            Terms::Built(b) => Cow::Borrowed(b.postings(tok)),
            Terms::Stored(s) => {
                let mut out = Vec::new();
                s.each_posting(tok, &mut |p| out.push(p));
                Cow::Owned(out)
            }
        }
    }

    /// `emit` each posting of `tok`, in document order.
    fn each_posting(&self, tok: &str, mut emit: impl FnMut(Posting)) {
        match self {
            Terms::Built(b) => b.postings(tok).iter().for_each(|p| emit(*p)),
            Terms::Stored(s) => s.each_posting(tok, &mut emit),
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
        Corpus { tokenizer, tables, live, live_count, docs, avg }
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
    pub fn postings(&self, token: &str) -> Cow<'_, [Posting]> {
        let all_live = self.live_count == self.live.len();
        if let [(0, only)] = self.tables.as_slice()
            && all_live
        {
            return only.postings(token);
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
        Cow::Owned(out)
    }
}

fn token_list(tokenizer: &Tokenizer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenizer.tokens(text, |t| out.push(t.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_in_runs_read_as_one_sequence() {
        let doc = |i: u32| DocStats {
            lengths: [i; FIELDS],
            derived_summary: i % 2 == 1,
            boosts: Boosts { updated: i64::from(i), ..Boosts::default() },
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
        for (d, want) in all.iter().enumerate() {
            assert_eq!(stats.boosts(d), want.boosts, "doc {d}");
            assert_eq!(stats.lengths(d), want.lengths);
            assert_eq!(stats.derived_summary(d), want.derived_summary);
        }
    }
}
