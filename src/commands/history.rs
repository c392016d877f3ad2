//! `mem history`: the saved versions of one memory, newest first.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::base::time::relative_age;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{history_dir, version_name};

/// List the saved versions of a memory (written by `mem remember` before each update).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem history decisions/store-format\n  mem history decisions/store-format -n 1 --json   the last saved version"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::completions::memory_paths))]
    pub path: String,
    /// At most this many, newest first
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
}

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

/// The versions found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: String,
    /// The root holding the memory (or its versions).
    pub root: Option<Scope>,
    pub versions: Vec<Version>,
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

/// List the versions.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let live = ctx.locate(&rel)?;
    let versions = versions(ctx, &rel)?;
    if live.is_none() && versions.is_empty() {
        let ask = crate::commands::naming::nearest_memories(ctx, &rel, false);
        return Err(Error::input(format!("{rel}: no such memory and no saved versions"))
            .hint(ask.unwrap_or_else(|| "check the path with `mem list`".to_string())));
    }
    let root = live.map(|(r, _)| r.scope).or(versions.first().map(|v| v.0));
    let limit = args.limit.map_or(usize::MAX, |n| n as usize);
    let versions = versions.into_iter().take(limit).map(|(_, v)| v).collect();
    Ok(Report { path: rel.file(), root, versions })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.versions.is_empty() {
            return format!("{}: no saved versions yet\n", style.path(&self.path));
        }
        let mut out = format!(
            "{} — {} saved version(s), newest first\n",
            style.path(&self.path),
            self.versions.len()
        );
        for v in &self.versions {
            out.push_str(&format!(
                "  {}  {:<14}  {}\n",
                crate::base::time::local_minute(v.updated),
                v.age,
                style.dim(&v.file.display().to_string())
            ));
        }
        out
    }
}
