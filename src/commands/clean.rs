//! `mem clean`: the command line of [`crate::ops::clean`].

use crate::base::error::Result;
use crate::commands::filter::Filter;
use crate::ops::clean::{Options, Report};
use crate::settings::Context;

/// List (or, with --yes, trash) stale, unused memories.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem clean                       dry run: what would go, and why\n  mem clean --max-age-days 90 --max-hits 1\n  mem clean --min-relevance medium   what fell below medium (what `mem context` leaves out)\n  mem clean --category facts --yes\n  mem clean -n 20 --yes           the 20 longest unchanged"
)]
pub struct Args {
    /// Candidates were not updated for this many days [default: 180,
    /// unless --min-relevance chooses the candidates]
    #[arg(long, value_name = "DAYS")]
    pub max_age_days: Option<u32>,
    /// Candidates were recalled at most this many times [default: 0,
    /// unless --min-relevance chooses the candidates]
    #[arg(long, value_name = "N")]
    pub max_hits: Option<u64>,
    /// `--category`, `--kind`, `--tag`, `--role`, `--tier` narrow the
    /// candidates; `--min-relevance LEVEL` chooses them: the memories whose
    /// relevance in effect is below LEVEL (what `mem context --min-relevance
    /// LEVEL` leaves out)
    #[command(flatten)]
    pub filter: Filter,
    /// At most this many candidates, the longest unused first
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
    /// Move the candidates to .trash/ (restorable with `mem restore`)
    #[arg(long, conflicts_with = "dry_run")]
    pub yes: bool,
    /// Only list the candidates (what `mem clean` does without --yes)
    #[arg(long)]
    pub dry_run: bool,
}

/// Find and, with --yes, trash the candidates.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options {
        max_age_days: args.max_age_days,
        max_hits: args.max_hits,
        filter: args.filter.criteria(),
        limit: args.limit,
        yes: args.yes,
        dry_run: args.dry_run,
    };
    crate::ops::clean::run(ctx, &options)
}
