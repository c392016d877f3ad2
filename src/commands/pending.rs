//! A write through mem that stopped half way (a `kill -9`, a crash, a
//! power cut) between changing a memory and recompiling leaves `index.md`
//! and ROOT.md's tables stale, and the pre-commit hook then refuses a
//! commit the user did not break. So a command that changes memories
//! first records "compile pending" (`.cache/compile-pending`, local and
//! never committed) and removes it with the recompile that follows. The
//! next command that takes the root's write lock and finds it recompiles
//! first; `mem lint` and `mem compile --check` name it.

use std::path::PathBuf;

use crate::base::error::Result;
use crate::commands::compile::refresh;
use crate::model::roots::Root;
use crate::store::write::{RootLock, lock_root, remove_file, write_atomic};

/// The marker of `root`.
fn marker(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("compile-pending")
}

/// Whether the marker is there: a write under way, or one that stopped.
fn marked(root: &Root) -> bool {
    marker(root).symlink_metadata().is_ok_and(|m| m.file_type().is_file())
}

/// Whether a write through mem stopped before its recompile: the marker is
/// there and no command holds the root's write lock (one that does is
/// still writing).
pub fn interrupted(root: &Root) -> bool {
    marked(root) && !crate::store::write::root_locked(&root.dir)
}

/// What `lint` and `compile --check` say of an interrupted write.
pub const CAUSE: &str = "a write through mem stopped before its recompile (killed or crashed), so ROOT.md's tables or an index.md may be stale";

/// The fix for it.
pub const FIX: &str =
    "run `mem compile` (the next write through mem does it too), then commit what it changed";

/// Done once the generated files follow the memories: by every recompile.
pub(crate) fn clear(root: &Root) {
    if marked(root) {
        let _ = remove_file(&root.dir, &marker(root));
    }
}

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
