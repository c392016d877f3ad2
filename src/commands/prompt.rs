//! `mem prompt`: the command line of [`crate::ops::prompt`].

use crate::base::error::Result;
use crate::ops::prompt::{Options, Report, run as prompt};
use crate::settings::Context;

/// Print a prompt for an agent.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub kind: Kind,
}

/// The prompts.
#[derive(Debug, clap::Subcommand)]
pub enum Kind {
    /// Review recent work and write or update memories
    #[command(
        after_help = "Examples:\n  mem prompt consolidate\n  mem prompt consolidate --since 2026-11-01"
    )]
    Consolidate {
        /// Only work since this date (ISO 8601); memories updated since are marked
        #[arg(long)]
        since: Option<String>,
    },
}

/// Build the prompt.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let Kind::Consolidate { since } = &args.kind;
    prompt(ctx, &Options { since: since.clone() })
}
