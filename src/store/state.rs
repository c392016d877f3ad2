//! `.state.json`: hit counts per memory, kept outside the Markdown so that a
//! recall never dirties a file or a git diff, and since when the file has
//! recorded them (the start of the days a memory can be seen unused, see
//! [`crate::model::usage`]).
//!
//! Updates are read-modify-write under an exclusive lock on a separate
//! `.state.json.lock` (never replaced, so the lock always guards the live
//! file), and the new state is written by temp file + rename. A corrupt file
//! is set aside as `.state.json.bad-<ms>` and rebuilt: it is derived data.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
use crate::model::consolidation::Consolidation;
use crate::store::files::Refusal;
use crate::store::identity::{Parsed, Unread};
use crate::store::write::write_atomic;

const FILE: &str = ".state.json";
const LOCK: &str = ".state.json.lock";
const VERSION: u32 = 1;
/// The largest state file read: hit counts of a few hundred thousand memories.
const MAX_STATE_BYTES: u64 = 256 << 20;

/// The hit record of one memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hits {
    pub count: u64,
    /// Epoch ms of the last hit.
    pub last: i64,
}

/// The whole state file of a root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    /// Per relative path (`category/slug.md`).
    #[serde(default)]
    pub hits: BTreeMap<String, Hits>,
    /// This root's identity for trust (see `trust`): made when it is first
    /// trusted, never committed, so another clone at the same path differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    /// Epoch ms this file began recording use (absent in files written
    /// before it was kept: see [`State::began`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
    /// `mem consolidate`'s setting and turn counts (see
    /// [`crate::model::consolidation`]).
    #[serde(default, skip_serializing_if = "Consolidation::is_empty")]
    pub consolidation: Consolidation,
}

impl State {
    /// Since when use has been recorded: `since`, else (an older file) its
    /// earliest hit; None when it cannot tell.
    pub fn began(&self) -> Option<i64> {
        self.since.or_else(|| self.hits.values().map(|h| h.last).filter(|&t| t > 0).min())
    }
}

/// The state file's path in `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// Read a root's state. A missing file is an empty state; a corrupt one is
/// an empty state plus a warning (it is set aside on the next write).
pub fn load(root: &Path) -> (State, Option<String>) {
    let (state, warning) = load_shared(root);
    (Arc::unwrap_or_clone(state), warning)
}

/// [`load`], shared: a process that reads the same state file again (a
/// `mem mcp` answering many calls, or one command reading it for the
/// trust gate and then for hit counts) parses it once while the file stays
/// the same (its device, inode, size, mtime and ctime: `mem` replaces it
/// whole, so each write makes a new one).
pub fn load_shared(root: &Path) -> (Arc<State>, Option<String>) {
    match read_shared(root) {
        Ok(state) => (state, None),
        Err(why) => (Arc::default(), Some(why)),
    }
}

/// The state files last parsed in this process: a process reads the
/// global root's and at most a few projects'.
static PARSED: Parsed<State> = Parsed::new();

fn read_shared(root: &Path) -> std::result::Result<Arc<State>, String> {
    let file = path(root);
    match PARSED.read((root, &file), MAX_STATE_BYTES, |bytes| parse(&file, bytes)) {
        Ok(state) => Ok(state),
        Err(Unread::Refused(Refusal::Missing)) => Ok(Arc::default()),
        Err(Unread::Refused(e)) => Err(format!("{}: {e}", file.display())),
        Err(Unread::Unparsed(why)) => Err(why),
    }
}

fn parse(file: &Path, bytes: &[u8]) -> std::result::Result<State, String> {
    serde_json::from_slice::<State>(bytes)
        .map_err(|e| format!("{} is corrupt ({e}); hit counts start again", file.display()))
}

/// Count one hit for each of `paths` at `now_ms`. Returns warnings (a
/// corrupt file that was set aside).
pub fn record(root: &Path, paths: &[String], now_ms: i64) -> Result<Vec<String>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    update(root, now_ms, |state| {
        for p in paths {
            let hits = state.hits.entry(p.clone()).or_default();
            hits.count += 1;
            hits.last = hits.last.max(now_ms);
        }
    })
}

/// Change a root's state under its lock and save it atomically. Returns
/// warnings (a corrupt file that was set aside).
pub fn update(root: &Path, now_ms: i64, change: impl FnOnce(&mut State)) -> Result<Vec<String>> {
    fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let lock_path = root.join(LOCK);
    let lock = crate::store::write::lock_file(root, &lock_path)?;
    lock.lock().map_err(|e| Error::io(&lock_path, e))?;
    let mut warnings = Vec::new();
    // The file as on disk now, under the lock: parsed again unless it is
    // the very file last parsed or written (the same identity).
    let mut state = match read_shared(root) {
        Ok(state) => Arc::unwrap_or_clone(state),
        Err(why) => {
            let bad = root.join(format!("{FILE}.bad-{now_ms}"));
            if fs::rename(path(root), &bad).is_ok() {
                warnings.push(format!("{why}; the old file was kept as {}", bad.display()));
            }
            State::default()
        }
    };
    state.version = VERSION;
    if state.since.is_none() {
        state.since = Some(state.began().map_or(now_ms, |t| t.min(now_ms)));
    }
    change(&mut state);
    let json = serde_json::to_vec_pretty(&state).map_err(|e| Error::input(e.to_string()))?;
    write_atomic(root, &path(root), &json)?;
    // Still under the lock, so no other `mem` has written since.
    PARSED.wrote((root, &path(root)), Arc::new(state));
    drop(lock);
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_missing_file_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(load(tmp.path()).0, State::default());
        record(tmp.path(), &["a/b.md".into(), "a/c.md".into()], 10).unwrap();
        record(tmp.path(), &["a/b.md".into()], 20).unwrap();
        let (state, warning) = load(tmp.path());
        assert!(warning.is_none());
        assert_eq!(state.hits["a/b.md"], Hits { count: 2, last: 20 });
        assert_eq!(state.hits["a/c.md"], Hits { count: 1, last: 10 });
        assert_eq!(state.since, Some(10), "recording began with the first write");
    }

    #[test]
    fn a_shared_state_is_parsed_once_and_follows_every_write() {
        let tmp = tempfile::tempdir().unwrap();
        record(tmp.path(), &["a/b.md".into()], 10).unwrap();
        let first = load_shared(tmp.path()).0;
        assert!(Arc::ptr_eq(&first, &load_shared(tmp.path()).0), "unchanged: parsed once");
        record(tmp.path(), &["a/b.md".into()], 20).unwrap();
        assert_eq!(load_shared(tmp.path()).0.hits["a/b.md"].count, 2, "mem's own write");
        // Another program writing in place, same length: a new change time.
        let file = path(tmp.path());
        let text = fs::read_to_string(&file).unwrap().replace("\"count\": 2", "\"count\": 7");
        std::io::Write::write_all(
            &mut fs::OpenOptions::new().write(true).open(&file).unwrap(),
            text.as_bytes(),
        )
        .unwrap();
        assert_eq!(load_shared(tmp.path()).0.hits["a/b.md"].count, 7, "a write in place");
        record(tmp.path(), &["a/b.md".into()], 30).unwrap();
        assert_eq!(load(tmp.path()).0.hits["a/b.md"].count, 8, "a write starts from the disk");
        let text = fs::read_to_string(&file).unwrap().replace("\"count\": 8", "\"count\": 3");
        fs::write(&file, text).unwrap();
        record(tmp.path(), &["a/b.md".into()], 40).unwrap();
        assert_eq!(load(tmp.path()).0.hits["a/b.md"].count, 4, "after another program's write");
        fs::remove_file(&file).unwrap();
        assert!(load_shared(tmp.path()).0.hits.is_empty(), "removed");
    }

    #[test]
    fn an_older_file_began_with_its_first_hit() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(path(tmp.path()), r#"{"version":1,"hits":{"a/b.md":{"count":2,"last":50},"a/c.md":{"count":1,"last":20}}}"#).unwrap();
        assert_eq!(load(tmp.path()).0.began(), Some(20));
        record(tmp.path(), &["a/b.md".into()], 90).unwrap();
        assert_eq!(load(tmp.path()).0.since, Some(20));
        assert_eq!(State::default().began(), None);
    }

    #[test]
    fn corrupt_state_is_set_aside_and_rebuilt() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(path(tmp.path()), "{ not json").unwrap();
        assert!(load(tmp.path()).1.is_some());
        let warnings = record(tmp.path(), &["a/b.md".into()], 7).unwrap();
        assert_eq!(warnings.len(), 1);
        assert_eq!(fs::read_to_string(tmp.path().join(".state.json.bad-7")).unwrap(), "{ not json");
        assert_eq!(load(tmp.path()).0.hits["a/b.md"].count, 1);
    }
}
