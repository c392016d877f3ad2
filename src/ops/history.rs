//! A memory's history: the versions `mem remember` saved before each
//! update, newest first.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::time::relative_age;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::settings::Context;
use crate::store::write::{history_dir, version_name};

/// One saved version.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    /// The `updated` time of that version, epoch ms.
    pub updated: i64,
    /// The order of versions saved under the same time (1, 2, …).
    #[serde(skip)]
    pub number: u32,
    pub age: String,
    pub file: PathBuf,
    pub bytes: u64,
}

/// Saved versions of `rel` in every selected root, newest first.
pub fn versions(ctx: &Context, rel: &RelPath) -> Result<Vec<(Scope, Version)>> {
    let mut out = Vec::new();
    for root in ctx.read_roots()? {
        let dir = history_dir(&root.dir, rel);
        // Never listed through a link; only the names mem writes are versions.
        if crate::store::write::check_target(&root.dir, &dir).is_err() {
            continue;
        }
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((updated, n)) = version_name(&name) else { continue };
            // A regular file only: a folder or a link by that name is no version.
            let Ok(kind) = entry.file_type() else { continue };
            if !kind.is_file() {
                continue;
            }
            let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
            let age = relative_age(updated, ctx.now_ms, ctx.lang);
            out.push((root.scope, Version { updated, number: n, age, file: entry.path(), bytes }));
        }
    }
    // Two versions saved under one time are numbered in the order they were saved.
    out.sort_by(|a, b| {
        (b.1.updated, b.1.number)
            .cmp(&(a.1.updated, a.1.number))
            .then_with(|| b.1.file.cmp(&a.1.file))
    });
    Ok(out)
}
