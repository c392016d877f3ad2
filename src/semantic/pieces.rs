//! A Unigram vocabulary (sentencepiece's model, which multilingual-e5 and
//! XLM-R use) kept as flat arrays: the pieces' text in id order, their
//! scores, and their ids sorted by piece, searched by bisection. Reading it
//! back costs a copy, where the `tokenizers` crate builds a trie of 250,000
//! pieces and a hash map of them (most of a second). It tokenizes exactly as
//! the crate's `Unigram` does: the same best path, ties, fused unknowns and
//! byte fallback (tests compare the two on the real model and on random
//! vocabularies).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::{Model, Token};

use crate::base::codec::{get_bytes, put_bytes, read_varint, varint};

/// What an unknown character scores below the lowest piece (the crate's
/// `K_UNK_PENALTY`).
const UNK_PENALTY: f64 = 10.0;

/// A Unigram vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct Pieces {
    /// Every piece, in id order, one after the other (whole text when
    /// built from a vocabulary; only compared with text when read back).
    text: Vec<u8>,
    /// Where each piece ends in `text`.
    ends: Vec<u32>,
    scores: Vec<f64>,
    /// The ids in the order of their pieces' bytes, one per distinct piece:
    /// of a piece listed twice, the last id (the one the crate's map keeps).
    sorted: Vec<u32>,
    unk: Option<u32>,
    byte_fallback: bool,
    min_score: f64,
}

/// The best way found to reach a place in the text.
#[derive(Clone, Copy)]
struct Step {
    id: u32,
    score: f64,
    from: Option<usize>,
}

impl Pieces {
    /// The vocabulary of `(piece, score)` in id order, as the crate's
    /// `Unigram::from` takes it.
    pub fn new(
        vocab: &[(String, f64)],
        unk: Option<usize>,
        byte_fallback: bool,
    ) -> Result<Pieces, String> {
        if unk.is_some_and(|u| u >= vocab.len()) {
            return Err("its unk_id is outside the vocabulary".into());
        }
        let mut text = Vec::new();
        let mut ends = Vec::with_capacity(vocab.len());
        for (piece, _) in vocab {
            text.extend_from_slice(piece.as_bytes());
            ends.push(u32::try_from(text.len()).map_err(|_| "its vocabulary is too large")?);
        }
        let scores = vocab.iter().map(|(_, s)| *s).collect();
        let count = u32::try_from(vocab.len()).map_err(|_| "its vocabulary is too large")?;
        let mut sorted: Vec<u32> = (0..count).collect();
        // Stable: equal pieces keep their id order, and the last one stays.
        sorted.sort_by(|&a, &b| vocab[a as usize].0.cmp(&vocab[b as usize].0));
        sorted.reverse();
        sorted.dedup_by(|a, b| vocab[*a as usize].0 == vocab[*b as usize].0);
        sorted.reverse();
        let unk = unk.map(|u| u as u32);
        Ok(Pieces::assemble(text, ends, scores, sorted, unk, byte_fallback))
    }

    fn assemble(
        text: Vec<u8>,
        ends: Vec<u32>,
        scores: Vec<f64>,
        sorted: Vec<u32>,
        unk: Option<u32>,
        byte_fallback: bool,
    ) -> Pieces {
        let mut min_score = f64::INFINITY;
        for &s in &scores {
            if s < min_score {
                min_score = s;
            }
        }
        Pieces { text, ends, scores, sorted, unk, byte_fallback, min_score }
    }

    /// How many pieces there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn piece(&self, id: u32) -> &[u8] {
        let id = id as usize;
        let start = if id == 0 { 0 } else { self.ends.get(id - 1).map_or(0, |&e| e as usize) };
        let end = self.ends.get(id).map_or(0, |&e| e as usize);
        self.text.get(start..end).unwrap_or_default()
    }

    fn id_of(&self, piece: &str) -> Option<u32> {
        let piece = piece.as_bytes();
        let at = self.sorted.binary_search_by(|&id| self.piece(id).cmp(piece)).ok()?;
        Some(self.sorted[at])
    }

    /// Every piece that starts `s`, shortest first: (length, id).
    fn prefixes(&self, s: &str, mut found: impl FnMut(usize, u32)) {
        let (mut lo, mut hi) = (0, self.sorted.len());
        for (k, &c) in s.as_bytes().iter().enumerate() {
            // All of sorted[lo..hi] start with s[..k]: keep those whose next byte is c.
            let next = |id: u32| self.piece(id).get(k).copied();
            let range = &self.sorted[lo..hi];
            let first = range.partition_point(|&id| next(id).is_none_or(|b| b < c));
            let last = range.partition_point(|&id| next(id).is_none_or(|b| b <= c));
            (lo, hi) = (lo + first, lo + last);
            if lo >= hi {
                return;
            }
            if self.piece(self.sorted[lo]).len() == k + 1 && s.is_char_boundary(k + 1) {
                found(k + 1, self.sorted[lo]);
            }
        }
    }

    /// The pieces of `s` (byte ranges) on its best path, runs of unknown
    /// characters fused into one.
    fn best_path(&self, s: &str) -> tokenizers::Result<Vec<(usize, usize)>> {
        let size = s.len();
        let unk_score = self.min_score - UNK_PENALTY;
        let mut best = vec![Step { id: 0, score: 0.0, from: None }; size + 1];
        let mut start = 0;
        while start < size {
            let here = best[start].score;
            let char_len = s[start..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            self.prefixes(&s[start..], |len, id| {
                let to = &mut best[start + len];
                let score = self.scores[id as usize] + here;
                if to.from.is_none() || score > to.score {
                    *to = Step { id, score, from: Some(start) };
                }
                single |= len == char_len;
            });
            if !single {
                let to = &mut best[start + char_len];
                let score = unk_score + here;
                if to.from.is_none() || score > to.score {
                    let id = self.unk.ok_or("an unknown character, and no unk_id")?;
                    *to = Step { id, score, from: Some(start) };
                }
            }
            start += char_len;
        }
        let mut out = Vec::new();
        let mut unknown: Option<(usize, usize)> = None;
        let mut end = size;
        while end > 0 {
            let step = best[end];
            let from = step.from.ok_or("no path through the text")?;
            if Some(step.id) == self.unk {
                unknown = Some((from, unknown.map_or(end, |(_, e)| e)));
            } else {
                out.extend(unknown.take());
                out.push((from, end));
            }
            end = from;
        }
        out.extend(unknown);
        out.reverse();
        Ok(out)
    }

    /// The tokens of `s`, as the crate's `Unigram::tokenize` gives them.
    pub fn tokens(&self, s: &str) -> tokenizers::Result<Vec<Token>> {
        if s.is_empty() {
            return Ok(Vec::new());
        }
        let mut tokens = Vec::new();
        for (start, end) in self.best_path(s)? {
            let piece = &s[start..end];
            let offsets = (start, end);
            if let Some(id) = self.id_of(piece) {
                tokens.push(Token::new(id, piece.to_string(), offsets));
                continue;
            }
            if self.byte_fallback {
                let bytes: Option<Vec<Token>> = piece
                    .bytes()
                    .map(|b| {
                        let name = format!("<0x{b:02X}>");
                        self.id_of(&name).map(|id| Token::new(id, name, offsets))
                    })
                    .collect();
                if let Some(bytes) = bytes {
                    tokens.extend(bytes);
                    continue;
                }
            }
            let id = self.unk.ok_or("an unknown piece, and no unk_id")?;
            tokens.push(Token::new(id, piece.to_string(), offsets));
        }
        Ok(tokens)
    }

    /// Append the vocabulary to `out`, for [`Pieces::decode`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_bytes(&self.text, out);
        let words = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        put_bytes(&words(&self.ends), out);
        put_bytes(&words(&self.sorted), out);
        put_bytes(&self.scores.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(), out);
        varint(self.unk.map_or(0, |u| u64::from(u) + 1), out);
        out.push(u8::from(self.byte_fallback));
    }

    /// A vocabulary written by [`Pieces::encode`], from the front of `at`;
    /// None unless every piece lies in the text and every id is one. The
    /// order of the sorted ids is not checked (250,000 comparisons on every
    /// start): the file is checksummed, and ids out of order give other
    /// tokens, never a fault; a piece that is not whole text matches none.
    pub fn decode(at: &mut &[u8]) -> Option<Pieces> {
        let text = get_bytes(at)?.to_vec();
        let words = |b: &[u8]| -> Vec<u32> {
            b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        let ends = words(get_bytes(at)?);
        let sorted = words(get_bytes(at)?);
        let scores: Vec<f64> = get_bytes(at)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let unk = match read_varint(at)? {
            0 => None,
            u => Some(u32::try_from(u - 1).ok()?),
        };
        let (&fallback, rest) = at.split_first()?;
        *at = rest;
        let n = ends.len();
        let mut start = 0;
        for &end in &ends {
            let end = end as usize;
            if end < start {
                return None;
            }
            start = end;
        }
        let fits = start == text.len()
            && scores.len() == n
            && unk.is_none_or(|u| (u as usize) < n)
            && fallback <= 1
            && sorted.iter().all(|&id| (id as usize) < n);
        fits.then(|| Pieces::assemble(text, ends, scores, sorted, unk, fallback == 1))
    }
}

impl Model for Pieces {
    type Trainer = UnigramTrainer;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        self.tokens(sequence)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.id_of(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        ((id as usize) < self.len()).then(|| String::from_utf8_lossy(self.piece(id)).into_owned())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        let text = |id| String::from_utf8_lossy(self.piece(id)).into_owned();
        self.sorted.iter().map(|&id| (text(id), id)).collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.len()
    }

    fn save(&self, _: &Path, _: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        Err("a prepared vocabulary is saved with its model folder, not on its own".into())
    }

    fn get_trainer(&self) -> UnigramTrainer {
        UnigramTrainer::default()
    }
}

#[cfg(test)]
mod tests;
