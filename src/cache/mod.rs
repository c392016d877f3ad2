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
//!   memories read from their records on first use; `library`: the roots
//!   as one corpus, kept by a watching process while its key holds.
//! - `mapped`: the mapping and its SIGBUS guard; `packed`: term tables
//!   as the cache stores them; [`snapshot`]: what each category folder
//!   held; [`stamp`]: a root that compiled clean; [`watch`]: a long-lived
//!   process listing a root from file-system events.

use self::cached::{delta_path, open};
use self::names::walk_order;
use crate::model::memory::Memory;
use crate::model::roots::Root;
use crate::store::scan::{Listing, Problem, Scan, entries, load_files};

pub mod cached;
pub mod docs;
pub mod format;
pub mod fresh;
pub mod held;
mod kept;
mod library;
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
pub use library::{Library, index_all, index_all_read};

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
