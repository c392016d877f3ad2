//! The trust record of a project root, kept in the global root: reading,
//! writing under a lock, and the root's identity.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::error::{Error, Result};
use crate::model::regions::outside;
use crate::model::relpath::RelPath;
use crate::model::roots::Root;
use crate::store::files::{self, Links};
use crate::store::identity::{Identity, identity};
use crate::store::state;
use crate::store::write::{lock_file, write_atomic};

pub(super) const DIR: &str = ".trust";
/// 2: full SHA-256 digests. A version 1 record's digests are the first
/// 128 bits; they are still compared (by that prefix) and are replaced by
/// full ones on the next trust or write through `mem`.
pub(super) const VERSION: u32 = 2;
/// The key under which `ROOT.md`'s hand-written text is recorded.
pub const ROOT_MD: &str = "ROOT.md";
/// The largest trust record read (a digest per memory of a large root).
pub(super) const MAX_RECORD_BYTES: u64 = 256 << 20;

/// What the user trusted of one project root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// The project root's canonical path.
    pub root: String,
    /// The root's identity: the id in its `.state.json`.
    pub id: String,
    /// When it was last trusted (epoch ms).
    pub at: i64,
    /// Digest per file: [`ROOT_MD`] or `category/slug.md`.
    pub files: BTreeMap<String, String>,
    /// The memories that were resident (rules, pinned) when trusted: one
    /// that stops being resident through a change from outside `mem` (a
    /// `superseded_by` or `role` added by a pull) is named, not dropped.
    #[serde(default)]
    pub resident: BTreeSet<String>,
}

/// The digest recorded for a file's bytes: SHA-256, all 256 bits in hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The hex length of a digest a version 1 record holds (128 bits).
const OLD_DIGEST_LEN: usize = 32;

/// True when `recorded` (a full digest, or a version 1 record's first 128
/// bits) is the digest `full` ([`digest`]'s) stands for.
pub fn same(recorded: &str, full: &str) -> bool {
    match recorded.len() {
        OLD_DIGEST_LEN => full.get(..OLD_DIGEST_LEN) == Some(recorded),
        _ => recorded == full,
    }
}

/// True when `recorded` is the digest of `bytes` (see [`same`]).
pub fn matches(recorded: &str, bytes: &[u8]) -> bool {
    same(recorded, &digest(bytes))
}

/// A short name for `bytes` (128 bits of SHA-256 in hex): a record's file
/// name, a root's id. Not a digest of trusted content.
pub fn key(bytes: &[u8]) -> String {
    digest(bytes)[..OLD_DIGEST_LEN].to_string()
}

/// `ROOT.md`'s hand-written text: everything outside its generated regions
/// (which change with every memory and are derived from files themselves
/// trusted one by one).
pub fn prose(root_md: &str) -> String {
    outside(root_md).unwrap_or_else(|| root_md.to_string())
}

/// The record for `project`, if it was trusted and is still the same root.
pub fn load(global: &Path, project: &Root) -> Option<Record> {
    load_shared(global, project).map(Arc::unwrap_or_clone)
}

/// [`load`], shared: a process that reads the same record file again (a
/// `mem mcp` answering many calls) parses it once while the file stays the
/// same (its device, inode, size, mtime and ctime).
pub fn load_shared(global: &Path, project: &Root) -> Option<Arc<Record>> {
    let canonical = project.dir.canonicalize().ok()?;
    let id = state::load_shared(&project.dir).0.root_id.clone()?;
    let record = read_shared(global, &canonical)?;
    (record.root == canonical.display().to_string() && record.id == id).then_some(record)
}

/// The record file as last parsed in this process, by its identity.
type Parsed = Option<(PathBuf, Identity, Arc<Record>)>;

fn read_shared(global: &Path, canonical: &Path) -> Option<Arc<Record>> {
    static LAST: Mutex<Parsed> = Mutex::new(None);
    let path = record_path(global, canonical);
    let (file, size) = files::open(global, &path, Links::Never).ok()?;
    let identity = identity(&file)?;
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((p, i, record)) = last.as_ref()
        && *p == path
        && *i == identity
    {
        return Some(Arc::clone(record));
    }
    let bytes = files::read_open(file, size, MAX_RECORD_BYTES).ok()?;
    let record = Arc::new(serde_json::from_slice::<Record>(&bytes).ok()?);
    *last = Some((path, identity, Arc::clone(&record)));
    Some(record)
}

/// The folder of the trust records: written (atomically, so its own time
/// changes) whenever a project is trusted or untrusted.
pub fn records_dir(global: &Path) -> PathBuf {
    global.join(DIR)
}

pub fn record_path(global: &Path, canonical: &Path) -> PathBuf {
    let key = key(canonical.as_os_str().as_encoded_bytes());
    global.join(DIR).join(format!("{key}.json"))
}

pub(super) fn lock_path(global: &Path, canonical: &Path) -> PathBuf {
    record_path(global, canonical).with_extension("lock")
}

pub(super) fn read_record(global: &Path, canonical: &Path) -> Option<Record> {
    let path = record_path(global, canonical);
    let bytes = files::read(global, &path, Links::Never, MAX_RECORD_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub(super) fn update(
    global: &Path,
    project: &Root,
    change: impl FnOnce(&mut Record),
) -> Result<()> {
    let Some(before) = load(global, project) else { return Ok(()) };
    let canonical = PathBuf::from(&before.root);
    let _lock = lock(global, &canonical)?;
    // Read again under the lock: another process may have written since.
    let Some(mut record) = load(global, project) else { return Ok(()) };
    upgrade(project, &mut record);
    change(&mut record);
    save(global, &canonical, &record)
}

/// A version 1 record, in full: each digest of 128 bits whose file still
/// matches it gets the file's full digest; a file that changed since keeps
/// its old one, and stays held back.
fn upgrade(project: &Root, record: &mut Record) {
    if record.version >= VERSION {
        return;
    }
    for (key, recorded) in &mut record.files {
        if recorded.len() != OLD_DIGEST_LEN {
            continue;
        }
        let bytes = if key == ROOT_MD {
            let path = project.dir.join(ROOT_MD);
            files::read_text(&project.dir, &path, Links::Inside, files::MAX_GENERATED_BYTES)
                .ok()
                .map(|text| prose(&text).into_bytes())
        } else {
            RelPath::parse(key).ok().and_then(|rel| {
                let path = rel.under(&project.dir);
                files::read(&project.dir, &path, Links::Inside, files::MAX_FILE_BYTES).ok()
            })
        };
        if let Some(full) = bytes.map(|b| digest(&b))
            && same(recorded, &full)
        {
            *recorded = full;
        }
    }
    record.version = VERSION;
}

pub(super) fn lock(global: &Path, canonical: &Path) -> Result<std::fs::File> {
    let file = lock_file(global, &lock_path(global, canonical))?;
    file.lock().map_err(|e| Error::io(&lock_path(global, canonical), e))?;
    Ok(file)
}

pub(super) fn save(global: &Path, canonical: &Path, record: &Record) -> Result<()> {
    let json = serde_json::to_vec(record).map_err(|e| Error::input(e.to_string()))?;
    write_atomic(global, &record_path(global, canonical), &json)
}

/// The project root's id, made (and kept in its `.state.json`) if it has none.
pub(super) fn root_id(project: &Root, now_ms: i64) -> Result<String> {
    if let Some(id) = state::load(&project.dir).0.root_id {
        return Ok(id);
    }
    let mut id = None;
    state::update(&project.dir, now_ms, |s| {
        id = Some(s.root_id.get_or_insert_with(fresh_id).clone());
    })?;
    id.ok_or_else(|| Error::input("the project root's id could not be kept"))
}

/// 128 random bits in hex, from the process's random hash keys, the clock
/// and the process id.
pub(super) fn fresh_id() -> String {
    let mut seed = Vec::new();
    for i in 0..4u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        seed.extend(h.finish().to_le_bytes());
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    seed.extend(now.map_or(0, |d| d.as_nanos()).to_le_bytes());
    seed.extend(std::process::id().to_le_bytes());
    key(&seed)
}
