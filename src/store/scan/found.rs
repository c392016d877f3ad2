//! What a scan yields: problems, file entries and their stamps, the
//! memories of a root, and the tree of all roots.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::store::files::Refusal;

/// A file that could not be used as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    /// True when the file was skipped; false for a field that was defaulted.
    pub skipped: bool,
    /// Where a refused symlink points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
}

impl Problem {
    /// A field of the memory at `path` that was defaulted (the file is used).
    pub fn field(path: PathBuf, message: String) -> Problem {
        Problem { path, line: None, message, skipped: false, target: None }
    }

    /// A file that was not read, and why.
    pub fn refused(path: &Path, why: &Refusal) -> Problem {
        Problem {
            path: path.to_path_buf(),
            line: None,
            message: why.to_string(),
            skipped: true,
            target: why.target().map(Path::to_path_buf),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", crate::base::text::one_line(&self.path.display().to_string()))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", crate::base::text::one_line(&self.message))?;
        if self.skipped {
            f.write_str(" (skipped)")?;
        }
        Ok(())
    }
}

/// Everything read from one root.
#[derive(Debug, Default)]
pub struct Scan {
    pub memories: Vec<Memory>,
    pub problems: Vec<Problem>,
}

/// The memories of all active roots, with shadowing resolved.
#[derive(Debug, Default)]
pub struct Tree {
    /// Visible memories: project first, then global, each sorted by path.
    pub memories: Vec<Memory>,
    /// Global memories hidden by a project memory at the same path.
    pub shadowed: Vec<Memory>,
    pub problems: Vec<Problem>,
}

/// The scans of the roots (project before global) as one tree, shadowing
/// resolved.
pub fn resolve(scans: impl IntoIterator<Item = (Scope, Scan)>) -> Tree {
    let mut tree = Tree::default();
    let mut seen = BTreeMap::new();
    for (scope, scan) in scans {
        tree.problems.extend(scan.problems);
        for memory in scan.memories {
            if seen.contains_key(&memory.path) {
                tree.shadowed.push(memory);
            } else {
                seen.insert(memory.path.clone(), scope);
                tree.memories.push(memory);
            }
        }
    }
    tree
}

/// A memory file found by [`walk`](super::listing::walk), with what identifies its version.
#[derive(Debug, Clone)]
pub struct FileEntry {
    pub rel: RelPath,
    pub path: PathBuf,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: u64,
    /// Status change time (nanoseconds) and inode: what a restored mtime
    /// cannot hide.
    pub ctime_ns: u64,
    pub ino: u64,
}

impl FileEntry {
    /// When the file last changed: the later of its mtime and ctime. An
    /// edit is recent if either is; a restored mtime (`touch -r`) cannot
    /// make a file just written look settled.
    pub fn changed_ns(&self) -> u64 {
        self.mtime_ns.max(self.ctime_ns)
    }

    /// What identifies this version of the file: size apart, its mtime,
    /// ctime and inode in one number. An edit that keeps the size and puts
    /// the mtime back (`touch -r`) still changes the ctime; a file replaced
    /// by another changes the inode.
    pub fn stamp(&self) -> u64 {
        stamp(self.mtime_ns, self.ctime_ns, self.ino)
    }
}

/// [`FileEntry::stamp`] of three numbers.
pub fn stamp(mtime_ns: u64, ctime_ns: u64, ino: u64) -> u64 {
    use crate::base::codec::mix;
    mix(mix(mix(0x243f_6a88_85a3_08d3, mtime_ns), ctime_ns), ino)
}

pub(crate) fn skip(path: &Path, message: &str) -> Problem {
    Problem {
        path: path.to_path_buf(),
        line: None,
        message: message.to_string(),
        skipped: true,
        target: None,
    }
}
