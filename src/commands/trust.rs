//! `mem trust` / `mem untrust`: the command line of [`crate::ops::trust`]:
//! the review shown (through a pager on a terminal) and a question asked
//! before anything is recorded.

use std::io::{BufRead, IsTerminal, Write};
use std::process::{Command, Stdio};

use crate::base::error::Result;
use crate::base::text::terminal_safe;
use crate::ops::trust::{Report, approve, decline, review, revoke};
use crate::output::Style;
use crate::settings::Context;

/// Trust this project's memory as it is now: `mem context` and `mem mcp`
/// inject it. Shows what is new or changed since the last time first.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Review .memory/ first (its rules become instructions to your agent), then:
  mem trust          show what is new or changed, ask, and record it
  mem trust --yes    record without asking (scripts)
A file changed from outside mem (a git pull, another program) is held back
from agents until it is trusted again; writes made through mem keep trust.")]
pub struct Args {
    /// Record without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Stop injecting this project's memory.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  mem untrust")]
pub struct UntrustArgs {}

/// Review the project root, then trust it as it is.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let mut pending = review(ctx)?;
    let changed = pending.report.changed;
    let confirmed = if !changed || args.yes || ctx.json {
        args.yes || !changed
    } else if std::io::stdin().is_terminal() {
        let style = Style { color: ctx.color };
        let review = pending.report.review_text(&style);
        let text = terminal_safe(&review, ctx.color);
        // A pager on a terminal only; never when the output goes elsewhere.
        if !(std::io::stdout().is_terminal() && page(&text)) {
            print!("{text}");
        }
        pending.report.shown = true;
        ask("Trust these files? [y/N] ")
    } else {
        false
    };
    if confirmed { approve(ctx, pending) } else { Ok(decline(pending)) }
}

/// Untrust the project root.
pub fn untrust(ctx: &Context, _args: &UntrustArgs) -> Result<Report> {
    revoke(ctx)
}

/// Ask a yes/no question on the terminal; only `y` or `yes` is yes.
fn ask(question: &str) -> bool {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

/// Show `text` through a pager: `$PAGER`, else `less -RFX` when there is
/// one; false when none ran (the caller prints it).
fn page(text: &str) -> bool {
    let mut command = match std::env::var("PAGER") {
        Ok(pager) if !pager.trim().is_empty() => shell(&pager),
        _ if on_path("less") => {
            let mut less = Command::new("less");
            less.args(["-R", "-F", "-X"]);
            less
        }
        _ => return false,
    };
    let Ok(mut child) = command.stdin(Stdio::piped()).spawn() else { return false };
    if let Some(mut stdin) = child.stdin.take() {
        // The reader may quit before the end: that is not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    // 127: the shell found no such command.
    child.wait().is_ok_and(|status| status.code() != Some(127))
}

#[cfg(unix)]
fn shell(line: &str) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(line);
    sh
}

#[cfg(not(unix))]
fn shell(line: &str) -> Command {
    let mut words = line.split_whitespace();
    let mut command = Command::new(words.next().unwrap_or("more"));
    command.args(words);
    command
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}
