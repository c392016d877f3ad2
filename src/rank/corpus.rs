//! Corpus statistics, computed once per run: a term dictionary, per-term
//! postings with per-field counts, and field lengths. Scoring a query then
//! touches only the postings of its own terms.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use crate::memory::Memory;
use crate::rank::tokenize::{Tokenizer, is_cjk};

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
    vocab: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    lengths: Vec<[u32; FIELDS]>,
    avg: [f32; FIELDS],
    /// Each memory's `load_when` triggers, as token lists.
    triggers: Vec<Vec<(String, Vec<String>)>>,
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
            vocab: HashMap::new(),
            postings: Vec::new(),
            lengths: Vec::with_capacity(memories.len()),
            avg: [0.0; FIELDS],
            triggers: Vec::with_capacity(memories.len()),
        };
        let mut counts: HashMap<u32, [u16; FIELDS]> = HashMap::new();
        for (doc, memory) in memories.iter().enumerate() {
            counts.clear();
            let mut lengths = [0u32; FIELDS];
            for (f, text) in field_texts(memory).iter().enumerate() {
                tokenizer.tokens(text, |tok| {
                    let id = corpus.intern(tok);
                    let tf = &mut counts.entry(id).or_insert([0; FIELDS])[f];
                    *tf = tf.saturating_add(1);
                    lengths[f] += 1;
                });
            }
            for (&term, &tf) in &counts {
                corpus.postings[term as usize].push(Posting { doc: doc as u32, tf });
            }
            corpus.lengths.push(lengths);
            let triggers = memory.load_when.iter().map(|t| (t.clone(), corpus.token_list(t)));
            corpus.triggers.push(triggers.filter(|(_, toks)| !toks.is_empty()).collect());
        }
        for list in &mut corpus.postings {
            list.sort_unstable_by_key(|p| p.doc);
        }
        let n = memories.len().max(1) as f32;
        for f in 0..FIELDS {
            let total: u64 = corpus.lengths.iter().map(|l| l[f] as u64).sum();
            corpus.avg[f] = (total as f32 / n).max(1.0);
        }
        corpus
    }

    fn intern(&mut self, tok: &str) -> u32 {
        if let Some(&id) = self.vocab.get(tok) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.vocab.insert(tok.into(), id);
        self.postings.push(Vec::new());
        id
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

    /// Field lengths (in tokens) of one document.
    pub fn lengths(&self, doc: usize) -> &[u32; FIELDS] {
        &self.lengths[doc]
    }

    /// Average field lengths over the corpus.
    pub fn avg_lengths(&self) -> &[f32; FIELDS] {
        &self.avg
    }

    /// The `load_when` triggers of one document: (as written, tokens).
    pub fn triggers(&self, doc: usize) -> &[(String, Vec<String>)] {
        &self.triggers[doc]
    }

    /// The postings for a query token. A lone CJK character also matches
    /// every bigram that contains it, so a one-character query finds text.
    pub fn postings(&self, token: &str) -> Cow<'_, [Posting]> {
        let own = self.vocab.get(token).map(|&id| self.postings[id as usize].as_slice());
        let mut chars = token.chars();
        let lone_cjk = match (chars.next(), chars.next()) {
            (Some(c), None) if is_cjk(c) => Some(c),
            _ => None,
        };
        let Some(c) = lone_cjk else {
            return Cow::Borrowed(own.unwrap_or(&[]));
        };
        let mut merged: HashMap<u32, [u16; FIELDS]> = HashMap::new();
        let bigrams = self
            .vocab
            .iter()
            .filter(|(t, _)| t.chars().count() == 2 && t.contains(c) && t.chars().all(is_cjk))
            .map(|(_, &id)| self.postings[id as usize].as_slice());
        for list in own.into_iter().chain(bigrams) {
            for p in list {
                let tf = merged.entry(p.doc).or_insert([0; FIELDS]);
                for (sum, add) in tf.iter_mut().zip(p.tf) {
                    *sum = sum.saturating_add(add);
                }
            }
        }
        let mut list: Vec<Posting> =
            merged.into_iter().map(|(doc, tf)| Posting { doc, tf }).collect();
        list.sort_unstable_by_key(|p| p.doc);
        Cow::Owned(list)
    }
}
