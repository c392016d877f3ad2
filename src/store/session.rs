//! What an agent's session has already been shown, so that a prompt's
//! matches never repeat what the session start, an earlier prompt or a
//! `memory_recall` gave it.
//!
//! Derived data, per root, git-ignored: `<root>/.cache/sessions/<key>.json`,
//! one file per session id, written atomically under a lock. Bounded: at
//! most [`MAX_SHOWN`] memories per session and [`MAX_SESSIONS`] sessions per
//! root; a session untouched for [`EXPIRES_MS`] is removed by the next write.
//! A record keeps its session's id (when it can name one, see
//! [`valid_id`]): [`recent`] lists the sessions a root has seen, which
//! `mem prompt consolidate` checks against the memories' `source_sessions`.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::error::Result;
use crate::model::roots::{Root, Scope};
use crate::store::files::{self, Links};
use crate::store::write::{lock_file, write_atomic};

/// Memories remembered per session; the oldest are forgotten first.
pub const MAX_SHOWN: usize = 2048;
/// Sessions kept per root; the least recently used are removed first.
pub const MAX_SESSIONS: usize = 128;
/// A session untouched this long is removed (7 days).
pub const EXPIRES_MS: i64 = 7 * crate::base::time::DAY_MS;
const MAX_BYTES: u64 = 1 << 20;

/// The longest session id kept.
pub const MAX_ID: usize = 128;

/// Whether `id` can name a session in a memory's `source_sessions`: 1 to
/// [`MAX_ID`] letters, digits, `.`, `_`, `:` or `-` (a UUID, `ses_7f3a9c`).
pub fn valid_id(id: &str) -> bool {
    (1..=MAX_ID).contains(&id.len())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
}

/// What a session id must look like, for a message.
pub const ID_RULE: &str = "1 to 128 letters, digits, `.`, `_`, `:` or `-`";

/// Where a session started, as agent hosts name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Startup,
    Resume,
    /// The conversation was cleared: the agent holds nothing it was given.
    Clear,
    /// The context was compacted: the agent holds nothing it was given.
    Compact,
}

impl Source {
    /// `startup`, `resume`, `clear` or `compact`; anything else is a startup.
    pub fn parse(s: &str) -> Source {
        match s {
            "resume" => Source::Resume,
            "clear" => Source::Clear,
            "compact" => Source::Compact,
            _ => Source::Startup,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// Epoch ms of the last write.
    at: i64,
    /// Relative paths shown, oldest first.
    shown: Vec<String>,
    /// The session's id (absent in records written before ids were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

fn dir(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("sessions")
}

fn file(root: &Root, id: &str) -> PathBuf {
    dir(root).join(format!("{}.json", crate::store::trust::key(id.as_bytes())))
}

/// What the session record keeps of a memory shown: its path and version,
/// so a memory updated since is shown again.
pub fn key(path: &str, updated: i64) -> String {
    format!("{path}@{updated}")
}

/// What session `id` was shown over the roots a command reads, locked
/// (root by root) from this read until [`Shown::record`]: the one way
/// `mem context` and `memory_recall` see and extend a session.
#[derive(Debug)]
pub struct Shown {
    id: String,
    roots: Vec<(Scope, Held)>,
    seen: HashSet<(Scope, String)>,
}

impl Shown {
    /// Lock and read session `id` of `roots`; with `fresh`, what it was
    /// shown before does not count (and is dropped when recording).
    pub fn open(roots: &[&Root], id: &str, fresh: bool) -> Shown {
        let roots: Vec<(Scope, Held)> = roots.iter().map(|r| (r.scope, Held::open(r))).collect();
        let seen = if fresh {
            HashSet::new()
        } else {
            roots.iter().flat_map(|(s, h)| h.shown(id).into_iter().map(|k| (*s, k))).collect()
        };
        Shown { id: id.to_string(), roots, seen }
    }

    /// How many memories the session was shown.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// True when nothing was shown yet.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// True when this version of `path` of the root of `scope` was shown.
    pub fn contains(&self, scope: Scope, path: &str, updated: i64) -> bool {
        self.seen.contains(&(scope, key(path, updated)))
    }

    /// Record `shown` (root, path, updated) as shown; `fresh` drops what
    /// was recorded before. Derived data: a root that cannot keep it only
    /// repeats itself, so nothing here fails.
    pub fn record<'a>(
        &self,
        shown: impl IntoIterator<Item = (Scope, &'a str, i64)>,
        fresh: bool,
        now_ms: i64,
    ) {
        let shown: Vec<(Scope, &str, i64)> = shown.into_iter().collect();
        for (scope, held) in &self.roots {
            let keys: Vec<String> = shown
                .iter()
                .filter(|(s, ..)| s == scope)
                .map(|(_, path, updated)| key(path, *updated))
                .collect();
            let _ = held.record(&self.id, &keys, fresh, now_ms);
        }
    }
}

/// A root's session records, locked while held: what a prompt reads as
/// already shown and what it then records are one step, so two prompts of
/// one session at once never both show the same memory.
#[derive(Debug)]
pub struct Held {
    root: Root,
    _lock: Option<std::fs::File>,
}

impl Held {
    /// Lock the records of `root` (unlocked when the lock cannot be had:
    /// derived data, at worst a repeat).
    pub fn open(root: &Root) -> Held {
        let lock = lock_file(&root.dir, &dir(root).join(".lock")).ok().filter(|f| f.lock().is_ok());
        Held { root: root.clone(), _lock: lock }
    }

    /// The keys already shown in session `id`.
    pub fn shown(&self, id: &str) -> BTreeSet<String> {
        read(&self.root, &file(&self.root, id))
            .map(|r| r.shown.into_iter().collect())
            .unwrap_or_default()
    }

    /// Record `paths` (keys, see [`key`]) as shown in session `id`; with
    /// `fresh`, what was recorded before is dropped first (the agent's
    /// context was cleared).
    pub fn record(&self, id: &str, paths: &[String], fresh: bool, now_ms: i64) -> Result<()> {
        write_record(&self.root, id, paths, fresh, now_ms)
    }
}

fn read(root: &Root, path: &Path) -> Option<Record> {
    let bytes = files::read(&root.dir, path, Links::Never, MAX_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_record(root: &Root, id: &str, paths: &[String], fresh: bool, now_ms: i64) -> Result<()> {
    if paths.is_empty() && !fresh {
        return Ok(());
    }
    let target = file(root, id);
    let mut record =
        if fresh { Record::default() } else { read(root, &target).unwrap_or_default() };
    for p in paths {
        if !record.shown.contains(p) {
            record.shown.push(p.clone());
        }
    }
    let over = record.shown.len().saturating_sub(MAX_SHOWN);
    record.shown.drain(..over);
    record.at = now_ms;
    record.id = valid_id(id).then(|| id.to_string());
    let json =
        serde_json::to_vec(&record).map_err(|e| crate::base::error::Error::input(e.to_string()))?;
    write_atomic(&root.dir, &target, &json)?;
    prune(root, &target, now_ms);
    Ok(())
}

/// The sessions `root` saw within [`EXPIRES_MS`] of `now_ms`, as (id,
/// epoch ms last seen), most recent first.
pub fn recent(root: &Root, now_ms: i64) -> Vec<(String, i64)> {
    let Ok(entries) = std::fs::read_dir(dir(root)) else { return Vec::new() };
    let mut out: Vec<(String, i64)> = entries
        .flatten()
        .take(4 * MAX_SESSIONS)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| read(root, &e.path()))
        .filter(|r| now_ms.saturating_sub(r.at) <= EXPIRES_MS)
        .filter_map(|r| r.id.filter(|id| valid_id(id)).map(|id| (id, r.at)))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Remove expired sessions and the least recently used past the limit.
fn prune(root: &Root, keep: &Path, now_ms: i64) {
    let Ok(entries) = std::fs::read_dir(dir(root)) else { return };
    let mut sessions: Vec<(i64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            let at = e.metadata().and_then(|m| m.modified()).map(crate::base::time::epoch_ms);
            (at.unwrap_or(0), e.path())
        })
        .collect();
    sessions.sort_by(|a, b| b.cmp(a));
    for (i, (at, path)) in sessions.iter().enumerate() {
        let expired = now_ms.saturating_sub(*at) > EXPIRES_MS || i >= MAX_SESSIONS;
        if expired && path != keep {
            let _ = crate::store::write::remove_file(&root.dir, path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::roots::Scope;

    #[test]
    fn a_session_remembers_what_it_was_shown_and_starts_over() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
        let held = Held::open(&root);
        held.record("s1", &["rules/a.md".into()], false, 10).unwrap();
        held.record("s1", &["facts/b.md".into(), "rules/a.md".into()], false, 20).unwrap();
        assert_eq!(held.shown("s1").len(), 2);
        assert!(held.shown("s2").is_empty());
        held.record("s1", &[], true, 30).unwrap();
        assert!(held.shown("s1").is_empty());
    }

    #[test]
    fn a_root_lists_the_sessions_it_saw_with_their_ids() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
        let held = Held::open(&root);
        held.record("ses_1", &["a/b.md".into()], false, 10).unwrap();
        held.record("ses_2", &[], true, 20).unwrap();
        held.record("not an id", &[], true, 30).unwrap();
        assert_eq!(recent(&root, 40), [("ses_2".to_string(), 20), ("ses_1".to_string(), 10)]);
        assert!(recent(&root, 10 + EXPIRES_MS + 1).iter().all(|(id, _)| id != "ses_1"));
        assert!(
            valid_id("0b6c1f9e-6a39-4f0b-9d0e-2b7f3c1d9a10") && !valid_id("a/b") && !valid_id("")
        );
    }

    #[test]
    fn a_session_is_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
        let many: Vec<String> = (0..MAX_SHOWN + 10).map(|i| format!("facts/m{i}.md")).collect();
        let held = Held::open(&root);
        held.record("s", &many, false, 1).unwrap();
        let shown = held.shown("s");
        assert_eq!(shown.len(), MAX_SHOWN);
        assert!(!shown.contains("facts/m0.md") && shown.contains("facts/m10.md"));
    }
}
