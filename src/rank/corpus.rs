//! Corpus statistics, computed once per run: a term dictionary, per-term
//! postings with per-field counts, and field lengths. Scoring a query then
//! touches only the postings of its own terms.

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

/// The indexed memories.
pub struct Corpus {
    tokenizer: Tokenizer,
    vocab: TermMap<Box<str>>,
    /// Ids of the tokens of one or two characters (every CJK token), keyed
    /// by the characters themselves: no string to follow and compare.
    short: TermMap<u64>,
    postings: Vec<Vec<Posting>>,
    lengths: Vec<[u32; FIELDS]>,
    avg: [f32; FIELDS],
    /// Per document: its summary is the body's first paragraph, not written.
    derived_summary: Vec<bool>,
    /// Each memory's `load_when` triggers, as token lists.
    triggers: Vec<Vec<(String, Vec<String>)>>,
}

/// A map keyed by terms or term ids, with the fast [`TermHasher`].
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

impl Corpus {
    /// Index `memories`; document ids are their positions in the slice.
    pub fn build(memories: &[Memory]) -> Corpus {
        let tokenizer = Tokenizer::new();
        let mut corpus = Corpus {
            tokenizer,
            vocab: TermMap::default(),
            short: TermMap::default(),
            postings: Vec::new(),
            lengths: Vec::with_capacity(memories.len()),
            avg: [0.0; FIELDS],
            derived_summary: memories.iter().map(|m| m.summary_derived).collect(),
            triggers: Vec::with_capacity(memories.len()),
        };
        let mut counts: TermMap<u32, [u16; FIELDS]> = TermMap::default();
        for (doc, memory) in memories.iter().enumerate() {
            counts.clear();
            let mut lengths = [0u32; FIELDS];
            for (f, text) in field_texts(memory).iter().enumerate() {
                tokenizer.tokens(text, |tok| {
                    let id = corpus.intern(tok);
                    let tf = &mut counts.entry(id).or_insert([0; FIELDS])[f];
                    *tf = tf.saturating_add(1);
                    if Kind::of(tok) != Kind::Unigram {
                        lengths[f] += 1;
                    }
                });
            }
            // Documents go in order, so every list stays sorted by document.
            for (&term, &tf) in &counts {
                corpus.postings[term as usize].push(Posting { doc: doc as u32, tf });
            }
            corpus.lengths.push(lengths);
            let triggers = memory.load_when.iter().map(|t| (t.clone(), corpus.token_list(t)));
            corpus.triggers.push(triggers.filter(|(_, toks)| !toks.is_empty()).collect());
        }
        let n = memories.len().max(1) as f32;
        for f in 0..FIELDS {
            let total: u64 = corpus.lengths.iter().map(|l| l[f] as u64).sum();
            corpus.avg[f] = (total as f32 / n).max(1.0);
        }
        corpus
    }

    /// The id of a token, assigned on first sight.
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

    /// The id of a token, if it was ever seen.
    fn id(&self, tok: &str) -> Option<u32> {
        match short_key(tok) {
            Some(key) => self.short.get(&key).copied(),
            None => self.vocab.get(tok).copied(),
        }
    }

    /// The tokenizer the corpus was built with.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The tokens of `text`, in order.
    pub fn token_list(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.tokenizer.tokens(text, |t| out.push(t.to_string()));
        out
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Field lengths of one document, in tokens other than CJK unigrams
    /// (they restate the bigrams of the same text).
    pub fn lengths(&self, doc: usize) -> &[u32; FIELDS] {
        &self.lengths[doc]
    }

    /// True when the summary of `doc` was taken from its body.
    pub fn derived_summary(&self, doc: usize) -> bool {
        self.derived_summary[doc]
    }

    /// Average field lengths over the corpus.
    pub fn avg_lengths(&self) -> &[f32; FIELDS] {
        &self.avg
    }

    /// The `load_when` triggers of one document: (as written, tokens).
    pub fn triggers(&self, doc: usize) -> &[(String, Vec<String>)] {
        &self.triggers[doc]
    }

    /// The postings of a token, by document; empty when it never occurs.
    pub fn postings(&self, token: &str) -> &[Posting] {
        self.id(token).map_or(&[], |id| self.postings[id as usize].as_slice())
    }
}
