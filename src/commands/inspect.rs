//! `mem inspect`: the command line of [`crate::ops::inspect`].

use crate::base::error::Result;
use crate::ops::inspect::{Options, Report};
use crate::settings::Context;

/// Show the roots, counts, shadowed files and problems; or one memory in full.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  mem inspect\n  mem inspect decisions/orm-drizzle --json")]
pub struct Args {
    /// A memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub path: Option<String>,
    /// Look for credentials in every memory file instead
    #[arg(long, conflicts_with = "path")]
    pub secrets: bool,
}

/// Build the overview or the detail.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options { path: args.path.clone(), secrets: args.secrets, as_agent: false };
    crate::ops::inspect::run(ctx, &options)
}
