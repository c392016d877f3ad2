//! The selected roots indexed as one corpus: a [`Library`]. A watching
//! process (see [`super::watch`]) keeps the last one while its key holds:
//! each root's kept listing and the identity of each of its cache files,
//! the same key meaning the same documents in the same order, so a kept
//! library answers as a fresh one would.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use super::cached::{self, distrust};
use super::docs::{CHUNK, Docs, Indexed};
use super::fresh::index_root;
use super::{kept, watch};
use crate::model::memory::Memory;
use crate::model::roots::Root;
use crate::rank::corpus::{Corpus, Stats};
use crate::rank::tokenize::Tokenizer;
use crate::store::scan::Problem;

/// The library of the last roots indexed whole, by its key.
static LIBRARY: Mutex<Option<(kept::LibraryKey, Arc<Library>)>> = Mutex::new(None);

/// The key of `roots` now; None unless each is watched and unchanged.
fn library_key(roots: &[&Root]) -> Option<kept::LibraryKey> {
    let identity = |path: &std::path::Path| {
        let (file, _) =
            crate::store::files::open(path.parent()?, path, crate::store::files::Links::Never)
                .ok()?;
        crate::store::identity::identity(&file)
    };
    roots
        .iter()
        .map(|root| {
            let id = watch::kept_id(root)?;
            Some((id, identity(&cached::path(root)), identity(&cached::delta_path(root))))
        })
        .collect()
}

/// The selected roots indexed as one corpus, and their problems.
pub struct Library {
    pub docs: Docs,
    pub corpus: Corpus,
    pub problems: Vec<Problem>,
}

impl Library {
    /// True once something read from a cache while answering turned out
    /// damaged (a record, a term table, a mapping truncated in place): the
    /// answer cannot be trusted; [`distrust`] says whether to answer again.
    pub fn is_damaged(&self) -> bool {
        self.corpus.is_damaged() || self.docs.is_damaged()
    }
}

/// [`index_all`] with every memory read: for commands that look at all of
/// them. A damaged record drops the caches and indexes again from the files.
/// A watching process reads them once while the roots and their cache
/// files stay the same, before and after the library is built.
pub fn index_all_read(roots: &[&Root]) -> (Arc<Vec<Memory>>, Arc<Library>) {
    let before = library_key(roots);
    let lib = index_all(roots);
    let key = before.filter(|before| library_key(roots).as_ref() == Some(before));
    let mut kept = kept::MEMORIES.lock().unwrap_or_else(|p| p.into_inner());
    if let (Some(key), Some((of, memories))) = (&key, kept.as_ref())
        && key == of
    {
        return (Arc::clone(memories), lib);
    }
    if let Some(memories) = lib.docs.to_vec().map(Arc::new) {
        if let Some(key) = key {
            *kept = Some((key, Arc::clone(&memories)));
        }
        return (memories, lib);
    }
    drop(kept);
    distrust(roots);
    let lib = index_all(roots);
    (Arc::new(lib.docs.to_vec().unwrap_or_default()), lib)
}

/// Index the selected roots as one corpus, project first. A global memory
/// at the same path as a live project memory is shadowed: known, not ranked.
/// A watching process answers with the library it kept while the roots'
/// key is the same before and after it was built.
pub fn index_all(roots: &[&Root]) -> Arc<Library> {
    let before = library_key(roots);
    if let Some(key) = &before
        && let Some(lib) = kept_library(key)
    {
        return lib;
    }
    let mut lib = build(roots);
    let key = before.filter(|before| library_key(roots).as_ref() == Some(before));
    let Some(key) = key.filter(|_| !lib.is_damaged()) else { return Arc::new(lib) };
    lib.corpus.keep_in_memory();
    let lib = Arc::new(lib);
    *LIBRARY.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, Arc::clone(&lib)));
    lib
}

/// The library kept for `key`, unless something read from it since turned
/// out damaged (then it is dropped, and built again).
fn kept_library(key: &kept::LibraryKey) -> Option<Arc<Library>> {
    let mut kept = LIBRARY.lock().unwrap_or_else(|p| p.into_inner());
    let (of, lib) = kept.as_ref()?;
    if lib.is_damaged() {
        *kept = None;
        return None;
    }
    (of == key).then(|| Arc::clone(lib))
}

/// [`index_all`], built now.
fn build(roots: &[&Root]) -> Library {
    let tokenizer = Tokenizer::new();
    let mut indexed: Vec<Indexed> = roots.iter().map(|root| index_root(root, &tokenizer)).collect();
    // A later root's memory at a path an earlier root has is shadowed: it
    // exists (its root's `live` says so) but is not ranked.
    let shadowed: Vec<Vec<usize>> = (0..indexed.len())
        .map(|k| {
            let (earlier, later) = (&indexed[..k], &indexed[k]);
            if earlier.iter().all(|e| e.len() == 0) {
                return Vec::new();
            }
            (0..later.len())
                .filter(|&d| later.live[d])
                .filter(|&d| {
                    let (category, slug) = later.key(d);
                    earlier.iter().any(|e| e.find_live(category, slug).is_some())
                })
                .collect()
        })
        .collect();
    let mut live = Vec::new();
    let mut stats = Stats::default();
    let mut tables = Vec::new();
    let mut problems = Vec::new();
    let mut firsts = Vec::new();
    for (ix, shadowed) in indexed.iter_mut().zip(shadowed) {
        let first = live.len();
        firsts.push(first);
        live.extend_from_slice(&ix.live);
        for d in shadowed {
            live[first + d] = false;
        }
        stats.append(std::mem::take(&mut ix.stats));
        tables.extend(ix.tables.drain(..).map(|(f, t)| (f + first as u32, t)));
        problems.append(&mut ix.problems);
    }
    let len = live.len();
    let loaded = (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect();
    let corpus = Corpus::assemble(live, stats, tables);
    let docs = Docs {
        roots: indexed,
        firsts,
        len,
        loaded,
        damaged: AtomicBool::new(false),
        found: Mutex::default(),
    };
    Library { docs, corpus, problems }
}
