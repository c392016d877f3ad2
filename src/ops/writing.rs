//! A write through mem that stopped half way (a `kill -9`, a crash, a
//! power cut) between changing a memory and recompiling leaves `index.md`
//! and ROOT.md's tables stale, and the pre-commit hook then refuses a
//! commit the user did not break. So a command that changes memories
//! first records "compile pending" (`.cache/compile-pending`, local and
//! never committed) and removes it with the recompile that follows. The
//! next command that takes the root's write lock and finds it recompiles
//! first; `mem lint` and `mem compile --check` name it.

use crate::base::error::Result;
use crate::model::roots::Root;
use crate::ops::compile::refresh;
pub use crate::store::pending::{CAUSE, FIX, clear, interrupted};
use crate::store::pending::{marked, marker};
use crate::store::write::{RootLock, lock_root, write_atomic};

/// The write lock of a root whose memories a command is about to change:
/// what an interrupted write left stale is recompiled first, then the
/// marker is set. Dropped, it removes the marker and releases the lock.
#[derive(Debug)]
pub struct Writing {
    root: Root,
    _lock: RootLock,
}

/// Take `root`'s write lock for a change to its memories.
pub fn writing(root: &Root) -> Result<Writing> {
    let lock = lock_root(&root.dir)?;
    if marked(root) {
        // Logged by `mem mcp` (the command line sets up the log).
        #[cfg(feature = "cli")]
        tracing::info!("{}: recompiling after an interrupted write", root.dir.display());
        refresh(root)?;
    }
    // Best effort: a read-only `.cache` must not stop a write.
    let _ = write_atomic(
        &root.dir,
        &marker(root),
        b"a write through mem is under way; if no mem command runs, `mem compile` finishes it\n",
    );
    Ok(Writing { root: root.clone(), _lock: lock })
}

/// [`writing`] for several roots, in the one order every command takes
/// locks in (project first), each once.
pub fn writing_all(roots: &[&Root]) -> Result<Vec<Writing>> {
    let mut roots: Vec<&Root> = roots.to_vec();
    roots.sort_by_key(|r| r.scope);
    roots.dedup_by(|a, b| a.dir == b.dir);
    roots.into_iter().map(writing).collect()
}

impl Drop for Writing {
    /// The command ended (its recompile done, or its change undone or never
    /// made): only a kill leaves the marker.
    fn drop(&mut self) {
        clear(&self.root);
    }
}
