//! `mem compile`: the command line of [`crate::ops::compile`].

use crate::base::error::Result;
use crate::ops::compile::{Options, Report, run as compile};
use crate::settings::Context;

const EXAMPLES: &str = "\
Examples:
  mem compile                 regenerate indexes and ROOT.md tables
  mem compile --check         in CI: exit 1 and show the diff when stale
  mem compile --check --staged   in a pre-commit hook: judge what the commit will hold
  mem compile --fix-markers   add the generated sections to a ROOT.md that lacks them";

/// Regenerate `<category>/index.md` and the generated tables of ROOT.md.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Write nothing; print what would change and exit 1 if anything is stale
    #[arg(long)]
    pub check: bool,
    /// Append the `registry` / `routing` sections to a ROOT.md without them
    #[arg(long)]
    pub fix_markers: bool,
    /// With --check: judge the files staged for the next commit (git's
    /// index), not the working tree
    #[arg(long, requires = "check", conflicts_with = "fix_markers")]
    pub staged: bool,
}

/// Compile every selected root.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    compile(ctx, &Options { check: args.check, fix_markers: args.fix_markers, staged: args.staged })
}
