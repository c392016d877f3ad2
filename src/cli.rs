//! The command line: global options and the list of verbs, and the
//! dispatch to them. Each verb's own arguments live beside its behaviour in
//! `commands/<verb>.rs` (or `commands/<verb>/`).

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::base::error::Result;
use crate::commands::{
    clean, compile, completions, consolidate, context, doctor, edit, export, forget, history, hook,
    import, init, inspect, lint, list, mcp, merge_driver, model, prompt, recall, remember, rename,
    setup, stats, trash, trust,
};
use crate::output::emit;
use crate::settings::Context;
use crate::settings::{ColorWhen, Options};

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
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub project: Option<PathBuf>,
    /// Use only the global root
    #[arg(long, global = true, conflicts_with = "project_only", help_heading = GLOBAL)]
    pub global: bool,
    /// Use only the project root
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub project_only: bool,
    /// Print machine-readable JSON
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// When to colour output (auto: on a terminal, unless NO_COLOR; CLICOLOR_FORCE forces it)
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value = "auto", help_heading = GLOBAL)]
    pub color: Color,
    /// Print nothing on standard output on success (warnings and errors still go to stderr)
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
}

/// The help heading of the options every command takes.
const GLOBAL: &str = "Global options";

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

impl GlobalArgs {
    /// The options as the engine takes them.
    pub fn options(&self) -> Options {
        Options {
            project: self.project.clone(),
            global_only: self.global,
            project_only: self.project_only,
            json: self.json,
            color: match self.color {
                Color::Auto => ColorWhen::Auto,
                Color::Always => ColorWhen::Always,
                Color::Never => ColorWhen::Never,
            },
            quiet: self.quiet,
        }
    }
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(visible_alias = "search")]
    Recall(recall::Args),
    Remember(remember::Args),
    List(list::Args),
    #[command(visible_alias = "show")]
    Inspect(inspect::Args),
    History(history::Args),
    Edit(edit::Args),
    Forget(forget::Args),
    Restore(forget::RestoreArgs),
    #[command(visible_alias = "mv")]
    Rename(rename::Args),
    /// What `forget` and `clean --yes` put in the trash, newest first
    Trash(trash::Args),
    Context(context::Args),
    Mcp(mcp::Args),
    Prompt(prompt::Args),
    Consolidate(consolidate::Args),
    Trust(trust::Args),
    Untrust(trust::UntrustArgs),
    Compile(compile::Args),
    Hook(hook::Args),
    Init(init::Args),
    Stats(stats::Args),
    Lint(lint::Args),
    Clean(clean::Args),
    Export(export::Args),
    Import(import::Args),
    Model(model::Args),
    Setup(setup::Args),
    Doctor(doctor::Args),
    Completions(completions::Args),
    Man(completions::ManArgs),
    #[command(hide = true)]
    MergeDriver(merge_driver::Args),
}

/// Run a parsed command line; returns the exit code.
///
/// Run from an agent host's hook (`mem context --hook` or `--query -`), a
/// failure says so on stderr and exits 1: an exit 2 would make some hosts
/// block the user's prompt, and the session must go on without memory.
/// `mem consolidate --hook` exits 0 even then, with one line on stderr: a
/// failing end-of-turn hook is shown to the user as an error at every turn.
pub fn run(cli: Cli) -> Result<i32> {
    let hook = matches!(&cli.command,
        Command::Context(a) if a.hook || a.query.as_deref() == Some("-"));
    if matches!(&cli.command, Command::Consolidate(a) if a.hook) {
        return Ok(match run_command(cli) {
            Ok(_) => 0,
            Err(err) => {
                let text = crate::base::text::one_line(&err.message).into_owned();
                let text = crate::base::text::terminal_safe(&text, false);
                eprintln!("mem: {text}; no consolidation this turn");
                0
            }
        });
    }
    match run_command(cli) {
        // Output that could not be written: said on stderr already.
        Ok(2) if hook => Ok(1),
        Err(err) if hook => {
            let text = crate::base::text::terminal_safe(&err.to_string(), false).into_owned();
            eprintln!(
                "mem: {text}\nmem: no memory for this prompt; the session goes on without it"
            );
            Ok(1)
        }
        other => other,
    }
}

impl Command {
    /// The command's name, as `--json` output names it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Recall(_) => "recall",
            Command::Remember(_) => "remember",
            Command::List(_) => "list",
            Command::Inspect(_) => "inspect",
            Command::History(_) => "history",
            Command::Edit(_) => "edit",
            Command::Forget(_) => "forget",
            Command::Restore(_) => "restore",
            Command::Rename(_) => "rename",
            Command::Trash(_) => "trash",
            Command::Context(_) => "context",
            Command::Mcp(_) => "mcp",
            Command::Prompt(_) => "prompt",
            Command::Consolidate(_) => "consolidate",
            Command::Trust(_) => "trust",
            Command::Untrust(_) => "untrust",
            Command::Compile(_) => "compile",
            Command::Hook(_) => "hook",
            Command::Model(_) => "model",
            Command::Setup(_) => "setup",
            Command::Doctor(_) => "doctor",
            Command::Init(_) => "init",
            Command::Stats(_) => "stats",
            Command::Lint(_) => "lint",
            Command::Clean(_) => "clean",
            Command::Export(_) => "export",
            Command::Import(_) => "import",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::MergeDriver(_) => "merge-driver",
        }
    }
}

fn run_command(cli: Cli) -> Result<i32> {
    let mut ctx = Context::resolve(&cli.global.options())?;
    ctx.command = cli.command.name();
    for note in &ctx.roots.notes {
        eprintln!("warning: {}", crate::base::text::terminal_safe(note, false));
    }
    Ok(match &cli.command {
        Command::Init(args) => emit(&ctx, &init::run(&ctx, args)?),
        Command::Remember(args) => emit(&ctx, &remember::run(&ctx, args)?),
        Command::Forget(args) => emit(&ctx, &forget::run(&ctx, args)?),
        Command::Restore(args) => emit(&ctx, &forget::restore(&ctx, args)?),
        Command::Rename(args) => emit(&ctx, &rename::run(&ctx, args)?),
        Command::Trash(args) => emit(&ctx, &trash::run(&ctx, args)?),
        Command::List(args) => emit(&ctx, &list::run(&ctx, args)?),
        Command::Recall(args) => emit(&ctx, &recall::run(&ctx, args)?),
        Command::Compile(args) => emit(&ctx, &compile::run(&ctx, args)?),
        Command::Hook(args) => emit(&ctx, &hook::run(&ctx, args)?),
        Command::Model(args) => emit(&ctx, &model::run(&ctx, args)?),
        Command::Setup(args) => emit(&ctx, &setup::run(&ctx, args)?),
        Command::Doctor(args) => emit(&ctx, &doctor::run(&ctx, args)?),
        Command::MergeDriver(args) => emit(&ctx, &merge_driver::run(&ctx, args)?),
        Command::Context(args) => {
            let report = context::run(&ctx, args)?;
            let (code, whole) = crate::output::emit_whole(&ctx, &report);
            if whole {
                report.after_print(&ctx);
            }
            code
        }
        Command::Trust(args) => emit(&ctx, &trust::run(&ctx, args)?),
        Command::Untrust(args) => emit(&ctx, &trust::untrust(&ctx, args)?),
        Command::Prompt(args) => emit(&ctx, &prompt::run(&ctx, args)?),
        Command::Consolidate(args) => emit(&ctx, &consolidate::run(&ctx, args)?),
        Command::Completions(args) => emit(&ctx, &completions::run(&ctx, args, Cli::command())?),
        Command::Man(args) => emit(&ctx, &completions::man(&ctx, args, Cli::command())?),
        Command::Stats(args) => emit(&ctx, &stats::run(&ctx, args)?),
        Command::Export(args) => match args.format.host() {
            Some(host) => emit(&ctx, &export::run_host(&ctx, args, host)?),
            None => emit(&ctx, &export::run(&ctx, args)?),
        },
        Command::Import(args) => emit(&ctx, &import::run(&ctx, args)?),
        Command::Clean(args) => emit(&ctx, &clean::run(&ctx, args)?),
        Command::Lint(args) => emit(&ctx, &lint::run(&ctx, args)?),
        Command::Edit(args) => emit(&ctx, &edit::run(&ctx, args)?),
        Command::Inspect(args) => emit(&ctx, &inspect::run(&ctx, args)?),
        Command::History(args) => emit(&ctx, &history::run(&ctx, args)?),
        Command::Mcp(args) => mcp::run(&cli.global.options(), args).map(|()| 0)?,
    })
}
