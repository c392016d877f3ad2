//! `mem context`: the command line of [`crate::ops::context`]. A hook's
//! JSON (or, for `--query -`, the prompt) is read from stdin by `input`.

mod input;

use crate::base::error::Result;
use crate::model::usage::Relevance;
use crate::ops::context::{Format, Options, Report, run as context};
use crate::settings::Context;

const EXAMPLES: &str = "\
Examples:
  mem context                               plan, rules, pinned memories and routing
  mem context --query \"fix the deploy script\" --budget 1500
  mem context --file web/app/page.tsx --format xml
  mem context --query \"deploy\" --min-relevance low   matches however long unused
  echo '{\"session_id\":\"s1\",\"source\":\"startup\"}' | mem context --hook
  echo '{\"session_id\":\"s1\",\"prompt\":\"why is checkout slow\"}' | mem context --query -
  MEM_TRUST_ALL=1 mem context --json        (CI: inject untrusted project roots too)

With a session id (from --hook or --query - JSON, or --session), a prompt
gets only memories that session was not shown yet; after `compact` or `clear`
it starts over. Pinned memories and matches go in at or above
--min-relevance (a memory unused for 30 days counts one level lower);
rules always. Nothing to say prints nothing.";

/// Print the memory an agent should see now.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Add the memories that best match this text; `-` reads the prompt from
    /// stdin (a hook's JSON with `prompt`, `session_id`, `cwd`, or plain text):
    /// with a session id, only matches that session was not shown yet
    #[arg(long)]
    pub query: Option<String>,
    /// Token cap on everything printed (CJK characters count one each, other
    /// text one per four characters) [default: 2000; 400 with --query -]
    #[arg(long)]
    pub budget: Option<usize>,
    /// Add memories whose `paths:` globs match this project file (repeatable)
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: Format,
    /// Act as this agent role [env: MEM_ROLE]
    #[arg(long)]
    pub role: Option<String>,
    /// Do not count hits for the matches shown
    #[arg(long)]
    pub no_track: bool,
    /// Pinned memories with their whole body (rules always have theirs)
    #[arg(long)]
    pub full: bool,
    /// Read a session-start hook's JSON from stdin (`session_id`, `source`:
    /// startup, resume, clear, compact; `cwd`)
    #[arg(long, conflicts_with = "query")]
    pub hook: bool,
    /// The agent session this block is for (what it was shown is remembered)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Pinned memories and matches only at or above this relevance in
    /// effect (declared, one step lower per 30 days without use); rules
    /// always
    #[arg(long, value_name = "LEVEL", default_value = "medium", value_parser = crate::commands::filter::relevance_parser())]
    pub min_relevance: Relevance,
}

/// Build the block: the prompt and the hook's fields from stdin when asked.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    crate::ops::context::check_format(ctx, args.format)?;
    let stdin_query = args.query.as_deref() == Some("-");
    let hook = if stdin_query || args.hook { Some(input::read(stdin_query)?) } else { None };
    let hook = hook.unwrap_or_default();
    let options = Options {
        query: if stdin_query { hook.prompt } else { args.query.clone() },
        prompt_mode: stdin_query,
        source: hook.source,
        cwd: hook.cwd,
        budget: args.budget,
        files: args.files.clone(),
        format: args.format,
        role: args.role.clone(),
        track: !args.no_track,
        full: args.full,
        session: args.session.clone().or(hook.session_id),
        min_relevance: args.min_relevance,
    };
    context(ctx, &options)
}
