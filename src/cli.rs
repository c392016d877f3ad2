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

/// The verbs, in one table: each row is a variant of [`Command`] (with its
/// clap attributes), the verb's name on the command line and in `--json`
/// output, and what running it is, given `ctx` (the resolved [`Context`]),
/// `args` (the verb's parsed arguments) and `global` (the global flags).
/// The enum, [`Command::name`] and the dispatch are all made from it, so a
/// new verb is one row here (and its module).
macro_rules! verbs {
    (|$ctx:ident, $args:ident, $global:ident| $(
        $(#[$attr:meta])*
        $variant:ident($type:ty) $name:literal => $run:expr
    ),* $(,)?) => {
        /// The verbs.
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $(
                $(#[$attr])*
                #[command(name = $name)]
                $variant($type),
            )*
        }

        impl Command {
            /// The command's name, as `--json` output names it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Command::$variant(_) => $name,)*
                }
            }
        }

        /// Run `command` with the context resolved for it; returns the exit code.
        fn dispatch($ctx: &Context, $global: &GlobalArgs, command: &Command) -> Result<i32> {
            Ok(match command {
                $(Command::$variant($args) => $run,)*
            })
        }
    };
}

verbs! { |ctx, args, global|
    #[command(visible_alias = "search")]
    Recall(recall::Args) "recall" => emit(ctx, &recall::run(ctx, args)?),
    Remember(remember::Args) "remember" => emit(ctx, &remember::run(ctx, args)?),
    List(list::Args) "list" => emit(ctx, &list::run(ctx, args)?),
    #[command(visible_alias = "show")]
    Inspect(inspect::Args) "inspect" => emit(ctx, &inspect::run(ctx, args)?),
    History(history::Args) "history" => emit(ctx, &history::run(ctx, args)?),
    Edit(edit::Args) "edit" => emit(ctx, &edit::run(ctx, args)?),
    Forget(forget::Args) "forget" => emit(ctx, &forget::run(ctx, args)?),
    Restore(forget::RestoreArgs) "restore" => emit(ctx, &forget::restore(ctx, args)?),
    #[command(visible_alias = "mv")]
    Rename(rename::Args) "rename" => emit(ctx, &rename::run(ctx, args)?),
    /// What `forget` and `clean --yes` put in the trash, newest first
    Trash(trash::Args) "trash" => emit(ctx, &trash::run(ctx, args)?),
    Context(context::Args) "context" => {
        let report = context::run(ctx, args)?;
        let (code, whole) = crate::output::emit_whole(ctx, &report);
        if whole {
            report.after_print(ctx);
        }
        code
    },
    Mcp(mcp::Args) "mcp" => mcp::run(&global.options(), args).map(|()| 0)?,
    Prompt(prompt::Args) "prompt" => emit(ctx, &prompt::run(ctx, args)?),
    Consolidate(consolidate::Args) "consolidate" => emit(ctx, &consolidate::run(ctx, args)?),
    Trust(trust::Args) "trust" => emit(ctx, &trust::run(ctx, args)?),
    Untrust(trust::UntrustArgs) "untrust" => emit(ctx, &trust::untrust(ctx, args)?),
    Compile(compile::Args) "compile" => emit(ctx, &compile::run(ctx, args)?),
    Hook(hook::Args) "hook" => emit(ctx, &hook::run(ctx, args)?),
    Init(init::Args) "init" => emit(ctx, &init::run(ctx, args)?),
    Stats(stats::Args) "stats" => emit(ctx, &stats::run(ctx, args)?),
    Lint(lint::Args) "lint" => emit(ctx, &lint::run(ctx, args)?),
    Clean(clean::Args) "clean" => emit(ctx, &clean::run(ctx, args)?),
    Export(export::Args) "export" => match args.format.host() {
        Some(host) => emit(ctx, &export::run_host(ctx, args, host)?),
        None => emit(ctx, &export::run(ctx, args)?),
    },
    Import(import::Args) "import" => emit(ctx, &import::run(ctx, args)?),
    Model(model::Args) "model" => emit(ctx, &model::run(ctx, args)?),
    Setup(setup::Args) "setup" => emit(ctx, &setup::run(ctx, args)?),
    Doctor(doctor::Args) "doctor" => emit(ctx, &doctor::run(ctx, args)?),
    Completions(completions::Args) "completions" =>
        emit(ctx, &completions::run(ctx, args, Cli::command())?),
    Man(completions::ManArgs) "man" => emit(ctx, &completions::man(ctx, args, Cli::command())?),
    #[command(hide = true)]
    MergeDriver(merge_driver::Args) "merge-driver" => emit(ctx, &merge_driver::run(ctx, args)?),
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

fn run_command(cli: Cli) -> Result<i32> {
    let mut ctx = Context::resolve(&cli.global.options())?;
    ctx.command = cli.command.name();
    for note in &ctx.roots.notes {
        eprintln!("warning: {}", crate::base::text::terminal_safe(note, false));
    }
    dispatch(&ctx, &cli.global, &cli.command)
}
