//! `mem forget` and `mem restore`: the command line of [`crate::ops::forget`].

use crate::base::error::Result;
use crate::ops::forget::{Options, Report, RestoreOptions, Restored};
use crate::settings::Context;

/// Move a memory to the trash (restorable with `mem restore`).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem forget facts/node-version-18\n  mem forget facts/node-version-18 --dry-run   what would move, and where"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub path: String,
    /// Show what would move; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Bring back the newest trashed copy of a memory.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem restore facts/node-version-18\n  mem restore facts/a decisions/b   (all or none)\n  mem restore --all                  everything in the trash whose place is free\n  mem trash                          what can be restored"
)]
pub struct RestoreArgs {
    /// The memories, as CATEGORY/SLUG: each is checked before any is moved
    #[arg(required_unless_present = "all", conflicts_with = "all", num_args = 1..)]
    pub paths: Vec<String>,
    /// Every memory in the trash of the selected roots, its newest copy; one
    /// whose path holds a live file again stays in the trash, with a note
    #[arg(long)]
    pub all: bool,
    /// Show what would come back; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Move the visible copy of the memory to the trash.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options { path: args.path.clone(), dry_run: args.dry_run, as_agent: false };
    crate::ops::forget::run(ctx, &options)
}

/// Move the newest trashed copy back.
pub fn restore(ctx: &Context, args: &RestoreArgs) -> Result<Restored> {
    let options =
        RestoreOptions { paths: args.paths.clone(), all: args.all, dry_run: args.dry_run };
    crate::ops::forget::restore(ctx, &options)
}
