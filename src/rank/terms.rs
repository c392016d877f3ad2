//! Term tables: built in memory from memories, or stored by the index and
//! read through [`StoredTerms`]; a segment is a run of documents with its
//! table.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::base::codec::Hash64;
use crate::base::parallel;
use crate::model::memory::Memory;
use crate::rank::fields::{FIELDS, Posting};
use crate::rank::stats::DocStats;
use crate::rank::tokenize::{Kind, Tokenizer};

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

/// A term table the index keeps in its files (see `cache::packed`): what
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

/// The term dictionary's maps: hashed with the crate's [`Hash64`], several
/// times faster than the default SipHash on short keys. Terms come from the
/// user's own files, so resistance to crafted collisions is not needed.
type TermMap<K, V = u32> = HashMap<K, V, BuildHasherDefault<Hash64>>;

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
    pub(crate) fn build_parallel(memories: &[Memory], tokenizer: &Tokenizer) -> Vec<Segment> {
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
    pub(crate) fn postings(&self, tok: &str) -> Cow<'_, [Posting]> {
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
    pub(crate) fn each_posting(&self, tok: &str, mut emit: impl FnMut(Posting)) {
        match self {
            Terms::Built(b) => b.postings(tok).iter().for_each(|p| emit(*p)),
            Terms::Stored(s) => s.each_posting(tok, &mut emit),
        }
    }
}
