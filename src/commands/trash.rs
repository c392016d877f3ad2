//! `mem trash`: the command line of [`crate::ops::trash`].

use crate::base::error::Result;
use crate::ops::trash::{Options, Report, run as list};
use crate::settings::Context;

/// List the trashed memories of the selected roots.
#[derive(Debug, Default, clap::Args)]
#[command(
    after_help = "Examples:\n  mem trash\n  mem trash -n 5 --json\n  mem restore facts/node-version-18"
)]
pub struct Args {
    /// At most this many, newest first
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
}

/// List `<root>/.trash/<category>/<slug>.<ms>.md`, newest first.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    list(ctx, &Options { limit: args.limit })
}
