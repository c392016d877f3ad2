//! `mem history`: the saved versions of one memory, newest first.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::ops::history::{Version, versions};
use crate::output::Style;
use crate::settings::Context;

/// List the saved versions of a memory (written by `mem remember` before each update).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem history decisions/store-format\n  mem history decisions/store-format -n 1 --json   the last saved version"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub path: String,
    /// At most this many, newest first
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
}

/// The versions found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: String,
    /// The root holding the memory (or its versions).
    pub root: Option<Scope>,
    pub versions: Vec<Version>,
}

/// List the versions.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let live = ctx.locate(&rel)?;
    let versions = versions(ctx, &rel)?;
    if live.is_none() && versions.is_empty() {
        let ask = crate::ops::naming::nearest_memories(ctx, &rel, false);
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
