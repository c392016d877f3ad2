//! A root ready for ranking, and the memories of all roots numbered as
//! the corpus numbers them, read from their records on first use.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::cached::Cached;
use super::names::walk_order;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::rank::corpus::{Stats, Terms};
use crate::rank::score::Memories;
use crate::store::scan::Problem;

/// One root ready for ranking: the documents of its cache files (the base,
/// then the delta), then the ones read now, each part in walk order.
pub struct Indexed {
    pub(super) scope: Scope,
    pub(super) parts: Vec<Cached>,
    pub(super) fresh: Vec<Memory>,
    /// Which documents exist now (a changed file's cached entry is dead).
    pub(super) live: Vec<bool>,
    pub(super) stats: Stats,
    /// Term tables, each with the first document it covers.
    pub(super) tables: Vec<(u32, Terms)>,
    pub(super) problems: Vec<Problem>,
}

impl Indexed {
    pub(super) fn len(&self) -> usize {
        self.live.len()
    }

    pub(super) fn cached_len(&self) -> usize {
        self.parts.iter().map(Cached::len).sum()
    }

    /// The cache file holding `doc`, and its number there.
    pub(super) fn part(&self, mut doc: usize) -> Option<(&Cached, usize)> {
        for part in &self.parts {
            if doc < part.len() {
                return Some((part, doc));
            }
            doc -= part.len();
        }
        None
    }

    pub(super) fn key(&self, doc: usize) -> (&str, &str) {
        match self.part(doc) {
            Some((c, doc)) => (c.category(doc), c.slug(doc)),
            None => {
                let m = &self.fresh[doc - self.cached_len()];
                (&m.path.category, &m.path.slug)
            }
        }
    }

    /// The live document at `category/slug`, if any.
    pub(super) fn find_live(&self, category: &str, slug: &str) -> Option<usize> {
        let key = RelPath { category: category.to_string(), slug: slug.to_string() };
        let fresh = self.fresh.binary_search_by(|m| walk_order(&m.path, &key));
        if let Ok(i) = fresh {
            let doc = self.cached_len() + i;
            return self.live[doc].then_some(doc);
        }
        let mut first = 0;
        for part in &self.parts {
            if let Some(doc) = part.find(category, slug).map(|d| first + d)
                && self.live[doc]
            {
                return Some(doc);
            }
            first += part.len();
        }
        None
    }

    /// Every memory of the cache files and read now, live or dead (bodies
    /// of cached ones are not read); None when a record is damaged.
    pub(super) fn all(&self) -> Option<Vec<Memory>> {
        let mut out = Vec::with_capacity(self.len());
        for part in &self.parts {
            out.extend(part.records(self.scope)?.into_iter().map(|(m, _)| m));
        }
        out.extend(self.fresh.iter().cloned());
        Some(out)
    }
}

/// The memories of the selected roots, numbered as the corpus numbers its
/// documents. Cached memories are read from their records on first use.
pub struct Docs {
    pub(super) roots: Vec<Indexed>,
    /// Each root's first document.
    pub(super) firsts: Vec<usize>,
    pub(super) len: usize,
    /// Cached memories read so far, in chunks of [`CHUNK`] made on first use
    /// (a query reads a few of a hundred thousand).
    pub(super) loaded: Vec<OnceLock<Box<[Loaded]>>>,
    pub(super) damaged: AtomicBool,
    /// What [`find`](Self::find) found, by scope and `category/slug`: a
    /// kept library (see [`super::library`]) is asked for the same hit
    /// records on every call.
    pub(super) found: Mutex<HashMap<(Scope, String), Option<usize>>>,
}

pub(super) type Loaded = OnceLock<Option<Box<Memory>>>;

pub(super) const CHUNK: usize = 256;

impl Docs {
    /// Number of documents, dead ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no documents at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn locate(&self, doc: usize) -> (&Indexed, usize) {
        let r = self.firsts.partition_point(|&f| f <= doc) - 1;
        (&self.roots[r], doc - self.firsts[r])
    }

    /// The scope, category and slug of a document, without reading it.
    pub fn key(&self, doc: usize) -> (Scope, &str, &str) {
        let (root, local) = self.locate(doc);
        let (category, slug) = root.key(local);
        (root.scope, category, slug)
    }

    /// The live document at `category/slug` in the root of `scope`.
    pub fn find(&self, scope: Scope, category: &str, slug: &str) -> Option<usize> {
        let key = (scope, format!("{category}/{slug}"));
        let mut found = self.found.lock().unwrap_or_else(|p| p.into_inner());
        *found.entry(key).or_insert_with(|| {
            let r = self.roots.iter().position(|r| r.scope == scope)?;
            Some(self.firsts[r] + self.roots[r].find_live(category, slug)?)
        })
    }

    /// True once a record failed its checksum: answers must not be trusted
    /// and the caches must be rebuilt.
    pub fn is_damaged(&self) -> bool {
        // A mapped cache truncated in place under us read as zeros.
        self.damaged.load(Ordering::Relaxed) || crate::cache::mapped::faulted()
    }

    /// Every memory the root of `scope` holds now, shadowed or not (bodies
    /// are not read); None when that root is not indexed or a record is
    /// damaged.
    pub fn root_memories(&self, scope: Scope) -> Option<Vec<Memory>> {
        let root = self.roots.iter().find(|r| r.scope == scope)?;
        let all = root.all()?.into_iter().zip(&root.live);
        Some(all.filter(|(_, live)| **live).map(|(m, _)| m).collect())
    }

    /// Every document's memory, in order; None when a record is damaged.
    pub fn to_vec(&self) -> Option<Vec<Memory>> {
        let mut out = Vec::with_capacity(self.len());
        for root in &self.roots {
            out.extend(root.all()?);
        }
        Some(out)
    }
}

impl Memories for Docs {
    fn memory(&self, doc: usize) -> Option<&Memory> {
        if doc >= self.len {
            return None;
        }
        let (root, local) = self.locate(doc);
        if let Some(fresh) = local.checked_sub(root.cached_len()) {
            return root.fresh.get(fresh);
        }
        let chunk = self.loaded.get(doc / CHUNK)?;
        let chunk = chunk.get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        chunk
            .get(doc % CHUNK)?
            .get_or_init(|| {
                let (cached, local) = root.part(local)?;
                let record = cached.record(local, root.scope).map(|(m, _)| Box::new(m));
                if record.is_none() {
                    self.damaged.store(true, Ordering::Relaxed);
                }
                record
            })
            .as_deref()
    }
}
