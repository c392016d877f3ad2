//! `mem export`: the command line of [`crate::ops::export`].

use std::path::PathBuf;

use crate::base::error::Result;
use crate::commands::filter::Filter;
use crate::ops::export::{Format, HostReport, Options, Report};
use crate::ops::hostfiles::Host;
use crate::settings::Context;

/// Export every memory of the selected roots.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem export > memory.json\n  mem export --format markdown --output memory.md\n  mem --global export --output global.json\n  mem export --tag postgres --format markdown\n  mem export --format agents-md           the rules into AGENTS.md (Codex, Copilot, Gemini CLI, Aider, …)\n  mem export --format claude-md --check   exit 1 when CLAUDE.md is stale (CI, a hook)\n  mem export --format cursor-rules        one .cursor/rules/mem-*.mdc per rule"
)]
pub struct Args {
    /// json (one document, for import), markdown (one readable file), or the
    /// project's rules and pinned memories for hosts that read files:
    /// agents-md (AGENTS.md), claude-md (CLAUDE.md), cursor-rules (.cursor/rules/)
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Write to this file instead of stdout (agents-md, claude-md: instead of
    /// the project's file; cursor-rules: into this folder)
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// agents-md, claude-md, cursor-rules: write nothing; print a diff and
    /// exit 1 when the files are not what the memories say
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub filter: Filter,
}

impl Args {
    fn options(&self) -> Options {
        Options {
            format: self.format,
            output: self.output.clone(),
            check: self.check,
            filter: self.filter.criteria(),
        }
    }
}

/// Export as JSON or Markdown.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    crate::ops::export::run(ctx, &args.options())
}

/// Write (or check) a host's rule files.
pub fn run_host(ctx: &Context, args: &Args, host: Host) -> Result<HostReport> {
    crate::ops::export::run_host(ctx, &args.options(), host)
}
