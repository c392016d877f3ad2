//! What `mem trust` shows before it records, and what writes through `mem`
//! record so that trust follows them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::Root;
use crate::store::files::{self, Links, MAX_FILE_BYTES, MAX_GENERATED_BYTES, Refusal};
use crate::store::scan::{self, Problem};

use super::record::{
    ROOT_MD, Record, VERSION, digest, load, lock, matches, prose, read_record, record_path,
    root_id, same, save, update,
};

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
    /// Not resident: what a prompt it matches injects of it (`text` is
    /// then absent): its title, kind, summary (or the start of its body)
    /// and highlight.
    #[serde(flatten)]
    pub injected: Option<Injected>,
}

/// What a match on a prompt injects of a memory that is not resident.
#[derive(Debug, Clone, Serialize)]
pub struct Injected {
    pub title: String,
    pub kind: String,
    pub summary: String,
    pub highlight: String,
}

impl Injected {
    fn of(m: &Memory) -> Injected {
        Injected {
            title: m.title.clone(),
            kind: m.kind.clone(),
            summary: m.match_summary(),
            highlight: m.highlight.clone(),
        }
    }
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
            Some(t) if same(t, &d) => None,
            Some(_) => Some("changed"),
            None => Some("new"),
        };
        if let Some(status) = status {
            let injected = memory.as_ref().filter(|_| !resident).map(Injected::of);
            let triggers = memory.map(|m| m.load_when).unwrap_or_default();
            let text = resident.then(|| text.to_string());
            review.pending.push(Reviewed {
                path: path.clone(),
                status,
                resident,
                text,
                triggers,
                injected,
            });
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
    crate::store::write::remove_file(global, &path)?;
    Ok(true)
}

/// After `mem` wrote `new` to `rel` of a trusted `project` (whose content
/// was `old`, or nothing): keep the root trusted for what was written.
/// Content that was held back stays held back, whatever was changed in it.
pub fn wrote(global: &Path, project: &Root, rel: &RelPath, old: Option<&[u8]>, new: &[u8]) {
    // The global root is the user's own: nothing is recorded for it.
    if project.scope != crate::model::roots::Scope::Project {
        return;
    }
    // Trust is derived data: a failure here only holds the file back.
    let _ = update(global, project, |record| {
        let key = rel.file();
        let was_trusted = match old {
            None => true,
            Some(old) => record.files.get(&key).is_some_and(|d| matches(d, old)),
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

/// A memory of `project` moved from `from` to `to` through `mem`, its
/// bytes unchanged: a trusted file stays trusted at its new path; a file
/// held back stays held back (its new path has no record).
pub fn renamed(global: &Path, project: &Root, from: &RelPath, to: &RelPath, bytes: &[u8]) {
    if project.scope != crate::model::roots::Scope::Project {
        return;
    }
    let _ = update(global, project, |record| {
        let (old, new) = (from.file(), to.file());
        if record.files.get(&old).is_some_and(|d| matches(d, bytes)) {
            record.files.remove(&old);
            record.resident.remove(&old);
            record.files.insert(new.clone(), digest(bytes));
            // Resident or not at its new path (a rule moved out of `rules/`
            // may no longer be one).
            let resident =
                std::str::from_utf8(bytes).ok().and_then(|t| Document::parse(t).ok()).is_some_and(
                    |doc| Memory::from_document(to.clone(), project.scope, &doc, 0).0.is_resident(),
                );
            if resident {
                record.resident.insert(new);
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
        if record.files.get(ROOT_MD).is_some_and(|d| same(d, &old)) {
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
