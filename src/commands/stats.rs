//! `mem stats`: the command line of [`crate::ops::stats`].

use crate::base::error::Result;
use crate::commands::filter::Filter;
use crate::ops::stats::{Options, Report};
use crate::settings::Context;

/// Show what the memory roots hold.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem stats\n  mem stats --json\n  mem stats --role reviewer      what that agent role sees\n  mem stats --min-relevance high  the memories that matter most\n  MEM_MAX_ENTRIES=2000 mem stats"
)]
pub struct Args {
    #[command(flatten)]
    pub filter: Filter,
}

/// Gather the figures.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    crate::ops::stats::run(ctx, &Options { filter: args.filter.criteria() })
}
