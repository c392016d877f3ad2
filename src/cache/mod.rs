//! The per-root cache: disposable files under `<root>/.cache/` that let a
//! command answer without reading every memory. `index.bin` holds what
//! every memory file was (name, size, a stamp of mtime, ctime and inode),
//! per-document ranking statistics, each memory's metadata as a record,
//! and packed term tables; `delta.bin`, in the same format, holds the files
//! changed since `index.bin` was built.
//!
//! Opening a cache file maps and checks whole only the part every query
//! needs (the file list, the statistics and the term tables' block
//! indexes). Records, dictionary blocks and postings are read with
//! positional reads when a query asks for them, each checked on its own.
//! A missing, truncated, corrupt or other-version cache is rebuilt, and
//! files are replaced atomically, so concurrent readers never see half of
//! one. A damaged cache is handled in one place, [`distrust`].
//!
//! A file per concern:
//!
//! - [`names`]: the file list, searched as it lies; [`records`]: a
//!   memory's metadata as a record; [`format`](mod@format): the layout, and how a
//!   cache file is written; [`cached`]: a cache file opened and checked,
//!   its columns and records.
//! - [`fresh`]: which entries still hold, the delta, the racy check,
//!   confirming and rebuilding; [`docs`]: a root ready for ranking, and
//!   memories read from their records on first use.
//! - `mapped`: the mapping and its SIGBUS guard; `packed`: term tables
//!   as the cache stores them; [`snapshot`]: what each category folder
//!   held; [`stamp`]: a root that compiled clean; [`watch`]: a long-lived
//!   process listing a root from file-system events.

use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use self::cached::{delta_path, open};
use self::docs::CHUNK;
use self::names::walk_order;
use crate::model::memory::Memory;
use crate::model::roots::Root;
use crate::rank::corpus::{Corpus, Stats};
use crate::rank::tokenize::Tokenizer;
use crate::store::scan::{Listing, Problem, Scan, entries, load_files};

pub mod cached;
pub mod docs;
pub mod format;
pub mod fresh;
pub mod held;
mod kept;
mod mapped;
pub mod names;
mod packed;
pub mod records;
pub mod snapshot;
pub mod stamp;
#[cfg(test)]
mod tests;
pub mod watch;

pub use cached::{discard, distrust, path};
pub use docs::{Docs, Indexed};
pub use format::RACY_NS;
pub use fresh::index_root;

/// A root's memories as their frontmatter says, and the files that could
/// not be read, through the cache when it is there (only changed files are
/// read), never writing it: for commands that need metadata, not ranking.
/// `listings` is the root as [`snapshot::list`] saw it.
pub fn memories(root: &Root, listings: &[Listing]) -> Scan {
    scan_listed(root, listings)
}

/// The memories of `roots` (project before global) with their metadata
/// (not their bodies), shadowing resolved, through the cache.
pub fn scan_all(roots: &[&Root]) -> crate::store::scan::Tree {
    crate::store::scan::resolve(roots.iter().map(|root| (root.scope, scan_root(root))))
}

/// Every memory of a root with its metadata (bodies are not read) and the
/// problems found, through the cache: only the files that changed since it
/// was built are read.
pub fn scan_root(root: &Root) -> Scan {
    let (listings, problems) = snapshot::list(root, true);
    let mut scan = scan_listed(root, &listings);
    scan.problems.extend(problems);
    scan.problems.sort_by(|a, b| a.path.cmp(&b.path));
    scan
}

pub(super) fn scan_listed(root: &Root, listings: &[Listing]) -> Scan {
    let all = || load_files(root.scope, &entries(listings));
    let Some(cached) = open(root, &path(root)) else { return all() };
    let Some(records) = cached.records(root.scope) else { return all() };
    let (live, mut changed) = cached.match_listings(listings);
    let mut scan = Scan::default();
    let mut take = |records: Vec<(Memory, Vec<String>)>, live: &[bool]| {
        for ((m, messages), _) in records.into_iter().zip(live).filter(|(_, live)| **live) {
            let path = m.path.under(&root.dir);
            scan.problems.extend(messages.into_iter().map(|m| Problem::field(path.clone(), m)));
            scan.memories.push(m);
        }
    };
    take(records, &live);
    // Files changed since the base was built, as the delta has them.
    let delta = if changed.is_empty() { None } else { open(root, &delta_path(root)) };
    if let Some((records, delta)) = delta.and_then(|d| Some((d.records(root.scope)?, d))) {
        let mut live = vec![false; delta.len()];
        changed.retain(|f| match delta.current(f) {
            Some(doc) => {
                live[doc] = true;
                false
            }
            None => true,
        });
        take(records, &live);
    }
    let fresh = load_files(root.scope, &changed);
    scan.memories.extend(fresh.memories);
    scan.problems.extend(fresh.problems);
    scan.memories.sort_by(|a, b| walk_order(&a.path, &b.path));
    scan
}

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
pub fn index_all_read(roots: &[&Root]) -> (Arc<Vec<Memory>>, Library) {
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
pub fn index_all(roots: &[&Root]) -> Library {
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
    let loaded = (0..len.div_ceil(CHUNK)).map(|_| OnceCell::new()).collect();
    let corpus = Corpus::assemble(live, stats, tables);
    let docs = Docs { roots: indexed, firsts, len, loaded, damaged: Cell::new(false) };
    Library { docs, corpus, problems }
}
