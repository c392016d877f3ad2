//! The command line: global options and the list of verbs. Each verb's own
//! arguments live beside its behaviour in `commands/<verb>.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::commands::{
    clean, compile, completions, context, edit, export, forget, history, hook, init, inspect, lint,
    list, mcp, merge_driver, prompt, recall, remember, stats, trust,
};
use crate::context::Options;

const EXAMPLES: &str = "\
Examples:
  mem recall 部署                            the memories that best match, ranked
  mem init                                  create .memory/ in this project
  mem remember pitfalls/tz-offset \"Orders use UTC; the UI converts\" --kind pitfall
  mem list --sort recent
  mem inspect decisions/store-format
  mem forget facts/old-node-version && mem restore facts/old-node-version
  mem --project fixtures/demo list --json
  mem mcp                                   serve the memory tools to an MCP client (stdio)

Roots: the project root is .memory/ in the nearest ancestor holding .memory/ROOT.md
(or --project DIR, $MEM_PROJECT_DIR); the global root is $MEM_GLOBAL_DIR, else
$XDG_CONFIG_HOME/mem/memory, else ~/.config/mem/memory.";

/// A filesystem-native Markdown memory for coding agents and the people beside them.
#[derive(Debug, Parser)]
#[command(name = "mem", version, after_help = EXAMPLES, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Use the project whose memory is DIR/.memory (instead of searching upwards)
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Use only the global root
    #[arg(long, global = true, conflicts_with = "project_only")]
    pub global: bool,
    /// Use only the project root
    #[arg(long, global = true)]
    pub project_only: bool,
    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,
}

impl GlobalArgs {
    /// The options as the engine takes them.
    pub fn options(&self) -> Options {
        Options {
            project: self.project.clone(),
            global_only: self.global,
            project_only: self.project_only,
            json: self.json,
        }
    }
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    Recall(recall::Args),
    Remember(remember::Args),
    List(list::Args),
    Inspect(inspect::Args),
    History(history::Args),
    Edit(edit::Args),
    Forget(forget::Args),
    Restore(forget::RestoreArgs),
    Context(context::Args),
    Mcp(mcp::Args),
    Prompt(prompt::Args),
    Trust(trust::Args),
    Untrust(trust::UntrustArgs),
    Compile(compile::Args),
    Hook(hook::Args),
    Init(init::Args),
    Stats(stats::Args),
    Lint(lint::Args),
    Clean(clean::Args),
    Export(export::Args),
    Import(export::ImportArgs),
    Completions(completions::Args),
    Man(completions::ManArgs),
    #[command(hide = true)]
    MergeDriver(merge_driver::Args),
}
