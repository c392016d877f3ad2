//! The mark a write through mem leaves while it changes memories
//! (`.cache/compile-pending`, local and never committed), removed by the
//! recompile that follows: still there with no command at work, it says a
//! write stopped half way and the generated files may be stale.

use std::path::PathBuf;

use crate::model::roots::Root;
use crate::store::write::remove_file;

/// The marker of `root`.
pub(crate) fn marker(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("compile-pending")
}

/// Whether the marker is there: a write under way, or one that stopped.
pub(crate) fn marked(root: &Root) -> bool {
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
pub fn clear(root: &Root) {
    if marked(root) {
        let _ = remove_file(&root.dir, &marker(root));
    }
}
