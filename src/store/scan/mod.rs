//! Walk a root and read its memories. A file that cannot be read is a
//! [`Problem`] in the result, never an abort, and never rewritten.
//!
//! Layout is fixed by the spec: `<root>/<category>/<slug>.md`. Hidden entries,
//! `ROOT.md` and `index.md` are never memories; anything else that looks like
//! one but is misplaced is reported, not silently skipped.
//!
//! [`found`] holds what a scan yields, [`listing`] finds the files,
//! [`reading`] reads them. There is one walker, [`list_with`]: [`walk`]
//! lists a root's memory files through it (for commands that read every
//! file), and the index lists through it with its folder snapshots
//! ([`crate::cache::snapshot::list`]), so an unchanged folder is not read.

pub mod found;
pub mod listing;
pub mod reading;

/// Files larger than this are reported and skipped.
pub use crate::store::files::MAX_FILE_BYTES;
pub use found::{FileEntry, Problem, Scan, Tree, resolve, stamp};
pub use listing::{Known, Listed, Listing, entries, list, list_with, walk};
pub use reading::{load, load_files, load_files_counted};
