//! `mem import`: the command line of [`crate::ops::import`]; a file of
//! `-` is read from stdin.

use std::path::PathBuf;

use crate::base::error::{Error, Result};
use crate::ops::import::{Options, Report};
use crate::settings::Context;

/// Bring back memories from `mem export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem import memory.json --dry-run\n  mem --global import memory.json      into the global root, with the project's memories too\n  mem import memory.json --yes         replace live files that differ"
)]
pub struct Args {
    /// A file written by `mem export` (`-` reads it from stdin)
    pub file: PathBuf,
    /// Show what would happen (with --yes: what --yes would do); write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Replace live files that differ (their previous text goes to .history/)
    #[arg(long)]
    pub yes: bool,
    /// Import even memories whose text looks like it holds a credential
    #[arg(long)]
    pub allow_secret: bool,
}

/// Import the export the command line names.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let text = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| Error::input(format!("cannot read the export from stdin: {e}")))?;
        text
    } else {
        std::fs::read_to_string(&args.file).map_err(|e| Error::io(&args.file, e))?
    };
    let options = Options {
        file: args.file.clone(),
        text,
        dry_run: args.dry_run,
        yes: args.yes,
        allow_secret: args.allow_secret,
    };
    crate::ops::import::run(ctx, &options)
}
