//! `mem trust` / `mem untrust`: allow (or stop) a project root's memories
//! being injected into an agent's context.

use std::path::PathBuf;

use serde::Serialize;

use crate::context::Context;
use crate::error::Result;
use crate::output::Style;
use crate::trust;

/// Trust this project's memory: `mem context` and `mem mcp` will inject it.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Review .memory/ first (its rules become instructions to your agent), then:\n  mem trust"
)]
pub struct Args {}

/// Stop injecting this project's memory.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  mem untrust")]
pub struct UntrustArgs {}

/// What changed.
#[derive(Debug, Serialize)]
pub struct Report {
    pub root: PathBuf,
    pub trusted: bool,
    pub changed: bool,
}

/// Trust the project root.
pub fn run(ctx: &Context, _args: &Args) -> Result<Report> {
    let root = ctx.project_root()?;
    let changed = !trust::is_trusted(&ctx.roots.global.dir, root);
    let path = trust::trust(&ctx.roots.global.dir, root, ctx.now_ms)?;
    Ok(Report { root: path, trusted: true, changed })
}

/// Untrust the project root.
pub fn untrust(ctx: &Context, _args: &UntrustArgs) -> Result<Report> {
    let root = ctx.project_root()?;
    let changed = trust::untrust(&ctx.roots.global.dir, root, ctx.now_ms)?;
    Ok(Report { root: root.dir.clone(), trusted: false, changed })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let root = style.path(&self.root.display().to_string());
        match (self.trusted, self.changed) {
            (true, true) => format!(
                "trusted {root}\n  its rules and memories will be injected by `mem context` and `mem mcp`\n  a change to its ROOT.md needs `mem trust` again\n"
            ),
            (true, false) => format!("{root} was already trusted\n"),
            (false, true) => format!("no longer trusted: {root}\n"),
            (false, false) => format!("{root} was not trusted\n"),
        }
    }
}
