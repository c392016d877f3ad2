//! `mem trust` / `mem untrust`: allow (or stop) a project root's memories
//! being injected into an agent's context, file by file.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::base::error::Result;
use crate::base::text::{one_line, terminal_safe};
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::Problem;
use crate::store::trust::{self, Reviewed};

/// How many paths of files gone since the last trust are listed by name.
const LISTED: usize = 40;

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

/// What changed.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The project root's folder (`dir` in JSON, as in `stats` and `inspect`).
    #[serde(rename = "dir")]
    pub root: PathBuf,
    pub trusted: bool,
    pub changed: bool,
    /// A different folder stands where a trusted root was (a new clone).
    pub other_root: bool,
    /// Files new or changed since the last trust.
    pub pending: Vec<Reviewed>,
    /// Files trusted before and gone since.
    pub removed: Vec<String>,
    /// Files that cannot be read, and so are never injected.
    pub unreadable: Vec<Problem>,
    /// Nothing was recorded: confirm with `--yes` (not on a terminal).
    pub unconfirmed: bool,
    #[serde(skip)]
    shown: bool,
}

/// Review the project root, then trust it as it is.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let root = ctx.project_root()?;
    let global = &ctx.roots.global.dir;
    let review = trust::review(global, root)?;
    let known = trust::load(global, root).is_some();
    let changed = !known || !review.pending.is_empty() || !review.removed.is_empty();
    let mut report = Report {
        root: review.canonical.clone(),
        trusted: false,
        changed,
        other_root: review.other_root,
        pending: review.pending.clone(),
        removed: review.removed.clone(),
        unreadable: review.unreadable.clone(),
        unconfirmed: false,
        shown: false,
    };
    let confirmed = if !changed || args.yes || ctx.json {
        args.yes || !changed
    } else if std::io::stdin().is_terminal() {
        let style = Style { color: ctx.color };
        let review = report.review_text(&style);
        let text = terminal_safe(&review, ctx.color);
        // A pager on a terminal only; never when the output goes elsewhere.
        if !(std::io::stdout().is_terminal() && page(&text)) {
            print!("{text}");
        }
        report.shown = true;
        ask("Trust these files? [y/N] ")
    } else {
        false
    };
    if confirmed {
        trust::record(global, root, &review, ctx.now_ms)?;
        // What each file's digest is, kept so that later commands (the
        // pre-commit hook first) need not hash unchanged files to say what
        // is held back.
        crate::index::held::standing_now(global, root, true);
        report.trusted = true;
    } else {
        report.unconfirmed = true;
    }
    Ok(report)
}

/// Untrust the project root.
pub fn untrust(ctx: &Context, _args: &UntrustArgs) -> Result<Report> {
    let root = ctx.project_root()?;
    let changed = trust::untrust(&ctx.roots.global.dir, root)?;
    Ok(Report {
        root: root.dir.clone(),
        trusted: false,
        changed,
        other_root: false,
        pending: Vec::new(),
        removed: Vec::new(),
        unreadable: Vec::new(),
        unconfirmed: false,
        shown: false,
    })
}

/// Ask a yes/no question on the terminal; only `y` or `yes` is yes.
fn ask(question: &str) -> bool {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

impl Report {
    /// What is about to be trusted, every text that can reach an agent:
    /// ROOT.md, rules and pinned memories in full; of any other memory what
    /// a prompt it matches injects (title, kind, summary, highlight) and its
    /// triggers, one block per memory. Counts first.
    fn review_text(&self, style: &Style) -> String {
        let mut out = String::new();
        if self.other_root {
            out.push_str(&format!(
                "{} is not the folder that was trusted at this path (a new clone?): every file is reviewed again\n",
                self.root.display()
            ));
        }
        let whole = self.pending.iter().filter(|r| r.text.is_some()).count();
        let matched = self.pending.len() - whole;
        out.push_str(&format!(
            "{} files new or changed in {}: {whole} shown whole (ROOT.md, rules, pinned), {matched} as a prompt that matches them injects them; {} gone; {} not read\n",
            self.pending.len(),
            self.root.display(),
            self.removed.len(),
            self.unreadable.len()
        ));
        let bar = style.dim("│");
        for r in &self.pending {
            out.push_str(&format!("{:<8} {}\n", r.status, style.path(&r.path)));
            if let Some(text) = &r.text {
                for line in text.lines() {
                    out.push_str(&format!("  {bar} {line}\n"));
                }
            }
            if let Some(m) = &r.injected {
                for (name, value) in [
                    ("title", &m.title),
                    ("kind", &m.kind),
                    ("summary", &m.summary),
                    ("highlight", &m.highlight),
                ] {
                    if !value.trim().is_empty() {
                        out.push_str(&format!("  {bar} {name}: {}\n", one_line(value)));
                    }
                }
            }
            if r.text.is_none() && !r.triggers.is_empty() {
                let triggers: Vec<String> =
                    r.triggers.iter().map(|t| format!("\"{}\"", one_line(t))).collect();
                out.push_str(&format!("  {bar} load_when: {}\n", triggers.join(", ")));
            }
        }
        for path in self.removed.iter().take(LISTED) {
            out.push_str(&format!("{:<8} {path}\n", "gone"));
        }
        if self.removed.len() > LISTED {
            out.push_str(&format!("… and {} more gone\n", self.removed.len() - LISTED));
        }
        for p in &self.unreadable {
            out.push_str(&format!("{:<8} {p} (never injected)\n", "not read"));
        }
        out
    }
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

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let root = style.path(&self.root.display().to_string());
        let mut out = if self.shown { String::new() } else { self.review_text(style) };
        out.push_str(&match (self.trusted, self.changed, self.unconfirmed) {
            (_, _, true) => format!("nothing recorded for {root}\n"),
            (true, true, _) => format!(
                "trusted {root}\n  its rules and memories will be injected by `mem context` and `mem mcp`\n  a file changed from outside mem is held back until you trust it again\n"
            ),
            (true, false, _) => format!("{root} was already trusted as it is\n"),
            (false, true, _) => format!("no longer trusted: {root}\n"),
            (false, false, _) => format!("{root} was not trusted\n"),
        });
        out
    }

    fn notice(&self) -> Option<String> {
        self.unconfirmed.then(|| {
            "review the files above, then run `mem trust --yes` to record them".to_string()
        })
    }

    fn exit_code(&self) -> i32 {
        i32::from(self.unconfirmed)
    }
}
