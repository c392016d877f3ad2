//! Trust for project roots, file by file. A project root arrives with
//! `git clone` or `git pull`, and what `mem context` and the MCP server
//! inject becomes an instruction to an agent; so only content the user
//! trusted is injected.
//!
//! `mem trust` records, in the global root (`.trust/<key>.json`, per
//! device, outside any repository), the project root's canonical path, its
//! identity and a digest of every file that can be injected: the
//! hand-written text of `ROOT.md` (outside the generated regions) and every
//! memory file, whole. A file whose digest is not recorded (added or changed
//! since, from outside `mem`) is held back and named; the rest of the root
//! still works. A write made through `mem` on a trusted root records what
//! it wrote ([`wrote`]).
//!
//! The identity is a random id kept in the project root's own (git-ignored)
//! `.state.json` when it is first trusted: a different repository cloned to
//! a trusted path has no such id, so it is not trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::error::{Error, Result};
use crate::files::{self, Links, MAX_FILE_BYTES, MAX_GENERATED_BYTES, Refusal};
use crate::frontmatter::Document;
use crate::memory::Memory;
use crate::merge::outside;
use crate::relpath::RelPath;
use crate::roots::Root;
use crate::scan::{self, Problem};
use crate::state;
use crate::write::{lock_file, write_atomic};

const DIR: &str = ".trust";
const VERSION: u32 = 1;
/// The key under which `ROOT.md`'s hand-written text is recorded.
pub const ROOT_MD: &str = "ROOT.md";
/// The largest trust record read (a digest per memory of a large root).
const MAX_RECORD_BYTES: u64 = 256 << 20;

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

/// The digest recorded for a file's bytes: SHA-256, first 128 bits in hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// `ROOT.md`'s hand-written text: everything outside its generated regions
/// (which change with every memory and are derived from files themselves
/// trusted one by one).
pub fn prose(root_md: &str) -> String {
    outside(root_md).unwrap_or_else(|| root_md.to_string())
}

/// How far a project root's text may reach an agent.
#[derive(Debug)]
pub enum Gate {
    /// Everything (`MEM_TRUST_ALL=1`, or the global root).
    All,
    /// Nothing: the root was never trusted here, or is not the root that was.
    Nothing,
    /// The files whose digest the user trusted.
    Files(Record),
}

impl Gate {
    /// The gate for `project`, as recorded in the global root.
    pub fn of(global: &Path, project: &Root, trust_all: bool) -> Gate {
        if trust_all {
            return Gate::All;
        }
        match load(global, project) {
            Some(record) => Gate::Files(record),
            None => Gate::Nothing,
        }
    }

    /// The memories that were resident when trusted (empty unless
    /// [`Gate::Files`]).
    pub fn resident(&self) -> impl Iterator<Item = &String> {
        match self {
            Gate::Files(record) => Some(record.resident.iter()),
            _ => None,
        }
        .into_iter()
        .flatten()
    }

    /// True when nothing of the root may pass.
    pub fn is_closed(&self) -> bool {
        matches!(self, Gate::Nothing)
    }

    /// True when `bytes`, the content of `key`, may pass.
    pub fn allows(&self, key: &str, bytes: &[u8]) -> bool {
        match self {
            Gate::All => true,
            Gate::Nothing => false,
            Gate::Files(record) => record.files.get(key).is_some_and(|d| *d == digest(bytes)),
        }
    }

    /// The text of memory `rel` of `root`, read once and checked, when it
    /// may pass.
    pub fn text(&self, root: &Root, rel: &RelPath) -> Option<String> {
        if self.is_closed() {
            return None;
        }
        let path = rel.under(&root.dir);
        let text = files::read_text(&root.dir, &path, Links::Inside, MAX_FILE_BYTES).ok()?;
        self.allows(&rel.file(), text.as_bytes()).then_some(text)
    }

    /// The memory `rel` of `root`, read and parsed from the bytes that were
    /// checked, when they may pass.
    pub fn memory(&self, root: &Root, rel: &RelPath) -> Option<Memory> {
        let text = self.text(root, rel)?;
        let path = rel.under(&root.dir);
        let doc = Document::parse(&text).ok()?;
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map(crate::base::time::epoch_ms)
            .unwrap_or(0);
        Some(Memory::from_document(rel.clone(), root.scope, &doc, mtime).0)
    }

    /// `ROOT.md`'s hand-written text, as far as it may pass.
    pub fn root_md(&self, root: &Root) -> RootMd {
        let path = root.dir.join(ROOT_MD);
        let text = match files::read_text(&root.dir, &path, Links::Inside, MAX_GENERATED_BYTES) {
            Ok(text) => text,
            Err(Some(Refusal::Missing)) => return RootMd::Missing,
            Err(_) => return RootMd::HeldBack,
        };
        let prose = prose(&text);
        if self.allows(ROOT_MD, prose.as_bytes()) {
            RootMd::Trusted(prose)
        } else {
            RootMd::HeldBack
        }
    }
}

/// `ROOT.md`'s hand-written text, seen through a [`Gate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootMd {
    Missing,
    /// The text, as it was trusted.
    Trusted(String),
    /// Unreadable, or changed since it was trusted.
    HeldBack,
}

/// The record for `project`, if it was trusted and is still the same root.
pub fn load(global: &Path, project: &Root) -> Option<Record> {
    let canonical = project.dir.canonicalize().ok()?;
    let id = state::load(&project.dir).0.root_id?;
    let record = read_record(global, &canonical)?;
    (record.root == canonical.display().to_string() && record.id == id).then_some(record)
}

fn record_path(global: &Path, canonical: &Path) -> PathBuf {
    let key = digest(canonical.as_os_str().as_encoded_bytes());
    global.join(DIR).join(format!("{key}.json"))
}

fn lock_path(global: &Path, canonical: &Path) -> PathBuf {
    record_path(global, canonical).with_extension("lock")
}

/// One file as it is now, against what was trusted.
#[derive(Debug, Clone, Serialize)]
pub struct Reviewed {
    /// [`ROOT_MD`] or `category/slug.md`.
    pub path: String,
    /// `new` (never trusted) or `changed` (trusted with other content).
    pub status: &'static str,
    /// Injected as an instruction (ROOT.md, a rule, a pinned memory): the
    /// text is shown before it is trusted.
    pub resident: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its `load_when` triggers: the routing table injects them at every
    /// session start, resident or not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
}

/// What `mem trust` is about to record.
#[derive(Debug, Default)]
pub struct Review {
    pub canonical: PathBuf,
    /// The root is trusted here, but this is not the folder that was (a new
    /// clone at the same path, say): everything is reviewed again.
    pub other_root: bool,
    /// Files new or changed since the last trust, in path order.
    pub pending: Vec<Reviewed>,
    /// Files trusted before and gone since.
    pub removed: Vec<String>,
    /// Files that cannot be read and are not trusted.
    pub unreadable: Vec<Problem>,
    /// Every digest to record.
    files: BTreeMap<String, String>,
    /// The memories resident as they are now.
    resident: BTreeSet<String>,
}

/// Compare every injectable file of `project` with what was trusted.
pub fn review(global: &Path, project: &Root) -> Result<Review> {
    let canonical = project.dir.canonicalize().map_err(|e| Error::io(&project.dir, e))?;
    let before = load(global, project);
    let recorded = read_record(global, &canonical);
    let mut review = Review {
        canonical,
        other_root: before.is_none() && recorded.is_some(),
        ..Review::default()
    };
    let trusted = before.map(|r| r.files).unwrap_or_default();
    // `memory` is None for ROOT.md and for a file that does not parse: both
    // are shown whole, as a rule would be (the second is never injected).
    let mut consider = |path: String, text: &str, memory: Option<Memory>| {
        let resident = memory.as_ref().is_none_or(Memory::is_resident);
        if memory.as_ref().is_some_and(Memory::is_resident) {
            review.resident.insert(path.clone());
        }
        let d = digest(text.as_bytes());
        let status = match trusted.get(&path) {
            Some(t) if *t == d => None,
            Some(_) => Some("changed"),
            None => Some("new"),
        };
        if let Some(status) = status {
            let triggers = memory.map(|m| m.load_when).unwrap_or_default();
            let text = resident.then(|| text.to_string());
            review.pending.push(Reviewed { path: path.clone(), status, resident, text, triggers });
        }
        review.files.insert(path, d);
    };
    let unreadable = |path: &Path, why: Option<Refusal>| match why {
        Some(why) => Problem::refused(path, &why),
        None => Problem::refused(path, &Refusal::Io(std::io::Error::other("not valid UTF-8"))),
    };
    let root_md = project.dir.join(ROOT_MD);
    match files::read_text(&project.dir, &root_md, Links::Inside, MAX_GENERATED_BYTES) {
        Ok(text) => consider(ROOT_MD.into(), &prose(&text), None),
        Err(why) => review.unreadable.push(unreadable(&root_md, why)),
    }
    let (entries, problems) = scan::walk(project);
    review.unreadable.extend(problems.into_iter().filter(|p| p.skipped));
    for f in entries {
        match files::read_text(&project.dir, &f.path, Links::Inside, MAX_FILE_BYTES) {
            Ok(text) => {
                let memory = Document::parse(&text)
                    .ok()
                    .map(|doc| Memory::from_document(f.rel.clone(), project.scope, &doc, 0).0);
                consider(f.rel.file(), &text, memory);
            }
            Err(why) => review.unreadable.push(unreadable(&f.path, why)),
        }
    }
    review.removed = trusted.keys().filter(|k| !review.files.contains_key(*k)).cloned().collect();
    Ok(review)
}

fn read_record(global: &Path, canonical: &Path) -> Option<Record> {
    let path = record_path(global, canonical);
    let bytes = files::read(global, &path, Links::Never, MAX_RECORD_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Record `review` as what the user trusts of `project`.
pub fn record(global: &Path, project: &Root, review: &Review, now_ms: i64) -> Result<()> {
    let id = root_id(project, now_ms)?;
    let _lock = lock(global, &review.canonical)?;
    let record = Record {
        version: VERSION,
        root: review.canonical.display().to_string(),
        id,
        at: now_ms,
        files: review.files.clone(),
        resident: review.resident.clone(),
    };
    save(global, &review.canonical, &record)
}

/// Forget trust in `project`; returns whether it was trusted.
pub fn untrust(global: &Path, project: &Root) -> Result<bool> {
    let canonical = project.dir.canonicalize().unwrap_or_else(|_| project.dir.clone());
    let path = record_path(global, &canonical);
    if path.symlink_metadata().is_err() {
        return Ok(false);
    }
    let _lock = lock(global, &canonical)?;
    crate::write::remove_file(global, &path)?;
    Ok(true)
}

/// After `mem` wrote `new` to `rel` of a trusted `project` (whose content
/// was `old`, or nothing): keep the root trusted for what was written.
/// Content that was held back stays held back, whatever was changed in it.
pub fn wrote(global: &Path, project: &Root, rel: &RelPath, old: Option<&[u8]>, new: &[u8]) {
    // The global root is the user's own: nothing is recorded for it.
    if project.scope != crate::roots::Scope::Project {
        return;
    }
    // Trust is derived data: a failure here only holds the file back.
    let _ = update(global, project, |record| {
        let key = rel.file();
        let was_trusted = match old {
            None => true,
            Some(old) => record.files.get(&key).is_some_and(|d| *d == digest(old)),
        };
        if was_trusted {
            record.files.insert(key.clone(), digest(new));
            let resident = std::str::from_utf8(new)
                .ok()
                .and_then(|t| Document::parse(t).ok())
                .is_some_and(|doc| {
                    Memory::from_document(rel.clone(), project.scope, &doc, 0).0.is_resident()
                });
            if resident {
                record.resident.insert(key);
            } else {
                record.resident.remove(&key);
            }
        }
    });
}

/// After `mem` rewrote ROOT.md of a trusted `project` from `old` to `new`:
/// its hand-written text stays trusted if it was.
pub fn wrote_root_md(global: &Path, project: &Root, old: &str, new: &str) {
    let (old, new) = (digest(prose(old).as_bytes()), digest(prose(new).as_bytes()));
    if old == new {
        return;
    }
    let _ = update(global, project, |record| {
        if record.files.get(ROOT_MD) == Some(&old) {
            record.files.insert(ROOT_MD.to_string(), new);
        }
    });
}

/// Trust a project root that `mem init` has just made: its ROOT.md, as
/// written, and nothing else that may already be in the folder.
pub fn trust_new_root(global: &Path, project: &Root, root_md: &str, now_ms: i64) -> Result<()> {
    let canonical = project.dir.canonicalize().map_err(|e| Error::io(&project.dir, e))?;
    let id = root_id(project, now_ms)?;
    let _lock = lock(global, &canonical)?;
    let mut record = read_record(global, &canonical).filter(|r| r.id == id).unwrap_or_else(|| {
        Record { version: VERSION, root: canonical.display().to_string(), id, ..Record::default() }
    });
    record.at = now_ms;
    record.files.insert(ROOT_MD.to_string(), digest(prose(root_md).as_bytes()));
    save(global, &canonical, &record)
}

fn update(global: &Path, project: &Root, change: impl FnOnce(&mut Record)) -> Result<()> {
    let Some(before) = load(global, project) else { return Ok(()) };
    let canonical = PathBuf::from(&before.root);
    let _lock = lock(global, &canonical)?;
    // Read again under the lock: another process may have written since.
    let Some(mut record) = load(global, project) else { return Ok(()) };
    change(&mut record);
    save(global, &canonical, &record)
}

fn lock(global: &Path, canonical: &Path) -> Result<std::fs::File> {
    let file = lock_file(global, &lock_path(global, canonical))?;
    file.lock().map_err(|e| Error::io(&lock_path(global, canonical), e))?;
    Ok(file)
}

fn save(global: &Path, canonical: &Path, record: &Record) -> Result<()> {
    let json = serde_json::to_vec(record).map_err(|e| Error::input(e.to_string()))?;
    write_atomic(global, &record_path(global, canonical), &json)
}

/// The project root's id, made (and kept in its `.state.json`) if it has none.
fn root_id(project: &Root, now_ms: i64) -> Result<String> {
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
fn fresh_id() -> String {
    let mut seed = Vec::new();
    for i in 0..4u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        seed.extend(h.finish().to_le_bytes());
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    seed.extend(now.map_or(0, |d| d.as_nanos()).to_le_bytes());
    seed.extend(std::process::id().to_le_bytes());
    digest(&seed)
}
