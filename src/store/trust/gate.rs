//! How far a project root's text may reach an agent, file by file.

use std::path::Path;
use std::sync::Arc;

use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::Root;
use crate::store::files::{self, Links, MAX_FILE_BYTES, MAX_GENERATED_BYTES, Refusal};

use super::record::{ROOT_MD, Record, load_shared, matches, prose};

/// How far a project root's text may reach an agent.
#[derive(Debug)]
pub enum Gate {
    /// Everything (`MEM_TRUST_ALL=1`, or the global root).
    All,
    /// Nothing: the root was never trusted here, or is not the root that was.
    Nothing,
    /// The files whose digest the user trusted.
    Files(Arc<Record>),
}

impl Gate {
    /// The gate for `project`, as recorded in the global root.
    pub fn of(global: &Path, project: &Root, trust_all: bool) -> Gate {
        if trust_all {
            return Gate::All;
        }
        match load_shared(global, project) {
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
            Gate::Files(record) => record.files.get(key).is_some_and(|d| matches(d, bytes)),
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
