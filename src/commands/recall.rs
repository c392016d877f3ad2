//! `mem recall`: the command line of [`crate::ops::recall`]; a query of
//! `-` is read from stdin.

use crate::base::error::{Error, Result};
use crate::commands::filter::Filter;
use crate::ops::recall::{DEFAULT_LIMIT, Options, Report, run as recall};
use crate::settings::Context;

const EXAMPLES: &str = "\
Examples:
  mem recall 部署
  mem recall how do we deploy -n 3
  mem recall --category pitfalls timezone
  mem recall --json -- \"--force push\"        (`--` before a query that starts with -)
  mem recall --explain pnpm
  mem recall --role reviewer --tag db migrations

Without --role, $MEM_ROLE is the role; memories private to a role
(`role:` in their frontmatter) reach only that role.";

/// Find the memories that best match a query.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Words to look for, in any language (several words are one query;
    /// `-` reads them from stdin)
    #[arg(required = true, value_name = "QUERY")]
    pub query: Vec<String>,
    /// How many results to show
    #[arg(short = 'n', long = "limit", default_value_t = DEFAULT_LIMIT, value_parser = clap::value_parser!(u16).range(1..))]
    pub limit: u16,
    /// `--category`, `--kind`, `--tag`; `--role` (default: $MEM_ROLE):
    /// without a role, memories private to a role are left out
    #[command(flatten)]
    pub filter: Filter,
    /// Include superseded memories
    #[arg(long)]
    pub all: bool,
    /// Show how each score was made
    #[arg(long)]
    pub explain: bool,
    /// Do not count hits in .state.json
    #[arg(long)]
    pub no_track: bool,
    /// Only text the user trusted, as an agent gets it (`mem trust`): a
    /// project memory added or changed since is named, not shown
    #[arg(long)]
    pub trusted: bool,
}

/// Rank and, unless told not to, count the hits.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options {
        query: query_text(&args.query)?,
        limit: usize::from(args.limit),
        filter: args.filter.criteria(),
        all: args.all,
        explain: args.explain,
        track: !args.no_track,
        trusted: args.trusted,
        ..Options::new("")
    };
    recall(ctx, &options)
}

/// The query: the words given, or stdin for `-`.
fn query_text(words: &[String]) -> Result<String> {
    if words != ["-"] {
        return Ok(words.join(" "));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(std::io::stdin(), 1 << 20), &mut text)
        .map_err(|e| Error::input(format!("cannot read the query from stdin: {e}")))?;
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(Error::input("the query on stdin is empty")
            .hint("pipe some words in, or give them as arguments"));
    }
    Ok(text)
}
