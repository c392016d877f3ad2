//! Trust for project roots. A project root arrives with `git clone`, and its
//! rules would become instructions in an agent's prompt; so `mem context`
//! and the MCP server inject a project root only after the user trusted it.
//! Trust is the root's canonical path plus the SHA-256 of its ROOT.md, kept
//! in the global root's `.state.json` (per device, outside any repository):
//! a change to ROOT.md's hand-written text needs trusting again.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::merge::outside;
use crate::roots::Root;
use crate::state::{self, Trust};

/// A project root's identity: canonical path and the hash of ROOT.md's
/// hand-written text (the generated tables change with every memory, and
/// are derived from files the user already sees; the prose is what is trusted).
pub fn fingerprint(project: &Root) -> Result<(String, String)> {
    let dir = project.dir.canonicalize().map_err(|e| Error::io(&project.dir, e))?;
    let root_md = dir.join("ROOT.md");
    let text = std::fs::read_to_string(&root_md).map_err(|e| Error::io(&root_md, e))?;
    let prose = outside(&text).unwrap_or(text);
    let hash = Sha256::digest(prose.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    Ok((dir.display().to_string(), hash))
}

/// True when `project` is trusted as it is now.
pub fn is_trusted(global_dir: &Path, project: &Root) -> bool {
    let Ok((path, hash)) = fingerprint(project) else { return false };
    state::load(global_dir).0.trusted.get(&path).is_some_and(|t| t.root_md_sha256 == hash)
}

/// Record trust in `project`; returns its canonical path.
pub fn trust(global_dir: &Path, project: &Root, now_ms: i64) -> Result<PathBuf> {
    let (path, hash) = fingerprint(project)?;
    state::update(global_dir, now_ms, |s| {
        s.trusted.insert(path.clone(), Trust { root_md_sha256: hash, at: now_ms });
    })?;
    Ok(PathBuf::from(path))
}

/// Forget trust in `project`; returns whether it was trusted.
pub fn untrust(global_dir: &Path, project: &Root, now_ms: i64) -> Result<bool> {
    let dir = project.dir.canonicalize().unwrap_or_else(|_| project.dir.clone());
    let key = dir.display().to_string();
    let mut removed = false;
    state::update(global_dir, now_ms, |s| removed = s.trusted.remove(&key).is_some())?;
    Ok(removed)
}
