//! `mem list`: the command line of [`crate::ops::list`].

use crate::base::error::Result;
use crate::commands::filter::Filter;
use crate::ops::list::{Options, Report, Sort, run as list};
use crate::settings::Context;

/// List memories.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem list\n  mem list --long              each memory whole: summary, date, tags, triggers\n  mem list --category decisions --sort recent -n 5\n  mem list --kind pitfall --json\n  mem list --tag postgres --role reviewer\n  mem list --sort hits -n 10          the most recalled\n  mem list --tier cool --min-relevance high   important, but not used for a month"
)]
pub struct Args {
    #[command(flatten)]
    pub filter: Filter,
    /// Order of the list
    #[arg(long, value_enum, default_value = "name")]
    pub sort: Sort,
    /// At most this many, after sorting
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
    /// Each memory whole: the full title and summary, when it was updated,
    /// its tags and triggers (without it, one line each, cut to the terminal)
    #[arg(short = 'l', long)]
    pub long: bool,
}

/// Scan, filter, sort.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options {
        filter: args.filter.criteria(),
        sort: args.sort,
        limit: args.limit,
        long: args.long,
    };
    list(ctx, &options)
}
