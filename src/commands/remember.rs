//! `mem remember`: the command line of [`crate::ops::remember`].

use crate::base::error::Result;
use crate::ops::remember::{Options, Report};
use crate::settings::Context;

const EXAMPLES: &str = "\
Examples:
  mem remember rules/deploy-pnpm \"部署脚本用 pnpm 而不是 npm\" --load-when 部署 --pin
  mem remember decisions/orm \"We use Drizzle\" --kind decision --supersedes decisions/prisma
  git log -1 --format=%B | mem remember facts/last-release -
  mem remember facts/node-version --summary \"Node 22 everywhere\"   (update one field)
  mem remember decisions/orm --relevance high --session ses_7f3a9c

--session (else $MEM_SESSION) adds the agent session to `source_sessions`.";

/// Create or update a memory.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub path: String,
    /// The Markdown body; `-` reads it from stdin. On update, omit it to keep the body
    pub body: Option<String>,
    /// Display title (default: the body's first heading)
    #[arg(long)]
    pub title: Option<String>,
    /// One-line summary (default: the body's first paragraph)
    #[arg(long)]
    pub summary: Option<String>,
    /// The key point, one line
    #[arg(long)]
    pub highlight: Option<String>,
    /// fact, rule, decision, preference, pitfall, lesson, reference, …
    #[arg(long)]
    pub kind: Option<String>,
    /// A phrase that should pull this memory in (repeatable; replaces the list)
    #[arg(long = "load-when", value_name = "PHRASE")]
    pub load_when: Vec<String>,
    /// A tag (repeatable, or comma-separated; replaces the list)
    #[arg(long = "tag", alias = "tags", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Always show this memory first
    #[arg(long, conflicts_with = "unpin")]
    pub pin: bool,
    /// Stop pinning this memory
    #[arg(long)]
    pub unpin: bool,
    /// Make the memory private to one agent role
    #[arg(long)]
    pub role: Option<String>,
    /// How much it matters: high, medium (the default) or low; the level in
    /// effect drops one step per 30 days without use
    #[arg(long, value_name = "LEVEL", value_parser = crate::commands::filter::relevance_parser())]
    pub relevance: Option<crate::model::usage::Relevance>,
    /// The agent session this is written in, added to `source_sessions`
    /// [env: MEM_SESSION]
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The older memory this one replaces (it gets `superseded_by`)
    #[arg(long, value_name = "CATEGORY/SLUG")]
    pub supersedes: Option<String>,
    /// Save even though the text looks like it holds a credential
    #[arg(long)]
    pub allow_secret: bool,
    /// Create the category even though its name is close to one that exists
    /// (refused otherwise, as a likely typo)
    #[arg(long)]
    pub new_category: bool,
}

/// Create or update the memory.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let options = Options {
        path: args.path.clone(),
        body: args.body.clone(),
        title: args.title.clone(),
        summary: args.summary.clone(),
        highlight: args.highlight.clone(),
        kind: args.kind.clone(),
        load_when: args.load_when.clone(),
        tags: args.tags.clone(),
        pin: args.pin,
        unpin: args.unpin,
        role: args.role.clone(),
        relevance: args.relevance,
        session: args.session.clone(),
        supersedes: args.supersedes.clone(),
        allow_secret: args.allow_secret,
        new_category: args.new_category,
        as_agent: false,
    };
    crate::ops::remember::run(ctx, &options)
}
