//! `mem rename`: the command line of [`crate::ops::rename`].

use crate::base::error::Result;
use crate::ops::rename::{Options, Report};
use crate::settings::Context;

/// Move a memory to another path.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem rename facts/node facts/node-version\n  mem rename facts/deploy-notes pitfalls/deploy-notes\n  mem mv facts/a facts/b --dry-run"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub from: String,
    /// Its new path, as CATEGORY/SLUG (in the same root)
    pub to: String,
    /// Show what would move and which memories would be relinked; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Create the new path's category even though its name is close to one
    /// that exists (refused otherwise, as a likely typo)
    #[arg(long)]
    pub new_category: bool,
}

/// Rename the memory.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options {
        from: args.from.clone(),
        to: args.to.clone(),
        dry_run: args.dry_run,
        new_category: args.new_category,
    };
    crate::ops::rename::run(ctx, &options)
}
