//! One module per verb. Each has its clap `Args`, a `run` that does the work
//! and returns a report, and the report's human rendering.

pub mod agent;
pub mod clean;
pub mod compile;
pub mod completions;
pub mod context;
pub mod edit;
pub mod export;
pub mod forget;
pub mod history;
pub mod hook;
pub mod init;
pub mod inspect;
pub mod lint;
pub mod list;
pub mod mcp;
pub mod merge_driver;
pub mod prompt;
pub mod recall;
pub mod remember;
pub mod stats;
pub mod trust;

use crate::base::error::Result;
use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::output::emit;

/// Run a parsed command line; returns the exit code.
///
/// Run from an agent host's hook (`mem context --hook` or `--query -`), a
/// failure says so on stderr and exits 1: an exit 2 would make some hosts
/// block the user's prompt, and the session must go on without memory.
pub fn run(cli: Cli) -> Result<i32> {
    let hook = matches!(&cli.command,
        Command::Context(a) if a.hook || a.query.as_deref() == Some("-"));
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
    let ctx = Context::resolve(&cli.global.options())?;
    for note in &ctx.roots.notes {
        eprintln!("warning: {}", crate::base::text::terminal_safe(note, false));
    }
    Ok(match &cli.command {
        Command::Init(args) => emit(&ctx, &init::run(&ctx, args)?),
        Command::Remember(args) => emit(&ctx, &remember::run(&ctx, args)?),
        Command::Forget(args) => emit(&ctx, &forget::run(&ctx, args)?),
        Command::Restore(args) => emit(&ctx, &forget::restore(&ctx, args)?),
        Command::List(args) => emit(&ctx, &list::run(&ctx, args)?),
        Command::Recall(args) => emit(&ctx, &recall::run(&ctx, args)?),
        Command::Compile(args) => emit(&ctx, &compile::run(&ctx, args)?),
        Command::Hook(args) => emit(&ctx, &hook::run(&ctx, args)?),
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
        Command::Completions(args) => emit(&ctx, &completions::run(&ctx, args)?),
        Command::Man(args) => emit(&ctx, &completions::man(&ctx, args)?),
        Command::Stats(args) => emit(&ctx, &stats::run(&ctx, args)?),
        Command::Export(args) => emit(&ctx, &export::run(&ctx, args)?),
        Command::Import(args) => emit(&ctx, &export::import(&ctx, args)?),
        Command::Clean(args) => emit(&ctx, &clean::run(&ctx, args)?),
        Command::Lint(args) => emit(&ctx, &lint::run(&ctx, args)?),
        Command::Edit(args) => emit(&ctx, &edit::run(&ctx, args)?),
        Command::Inspect(args) => emit(&ctx, &inspect::run(&ctx, args)?),
        Command::History(args) => emit(&ctx, &history::run(&ctx, args)?),
        Command::Mcp(args) => mcp::run(&cli.global.options(), args).map(|()| 0)?,
    })
}
