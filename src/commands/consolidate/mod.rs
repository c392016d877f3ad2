//! `mem consolidate`: consolidation through the host's own agent. At the
//! end of a turn the host runs `mem consolidate --hook` (Claude Code's
//! `Stop` hook, the OpenCode plugin on `session.idle`); every N turns of a
//! session (default 3) that has not saved a memory itself and was not asked
//! before, it answers `{"decision": "block", "reason": …}`: the agent gets
//! consolidation instructions built from its recent turns and the memories
//! they touch, and saves memories citing the session before it stops. Off
//! unless `$MEM_CONSOLIDATE=1` or `mem consolidate --enable` (which `mem
//! setup <host> --consolidate` runs) turned it on; `stop_hook_active`
//! never blocks. Without `--hook` it shows or changes the setting.
//!
//! The setting and the turn counts live in the root's `.state.json` (see
//! [`crate::model::consolidation`]), changed under its lock and written
//! atomically. In hook mode no error reaches the host: it is one line on
//! stderr and exit 0 (see [`crate::cli::run`]).

mod input;
mod reason;
mod transcript;

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::consolidation::{DEFAULT_EVERY, Turns, due};
use crate::model::roots::{Root, Scope};
use crate::output::Style;
use crate::settings::Context;
use crate::store::{session, state};

const EXAMPLES: &str = "\
Examples:
  mem consolidate                   is it on, every how many turns, for how many sessions
  mem consolidate --enable          on for this clone's project root, every 3 turns
  mem consolidate --enable --every 5
  mem consolidate --disable
  echo '{\"session_id\":\"s1\",\"transcript_path\":\"/tmp/s1.jsonl\",\"stop_hook_active\":false}' | MEM_CONSOLIDATE=1 mem consolidate --hook

$MEM_CONSOLIDATE=1 turns it on and 0 off, whatever the setting says.
With --hook: the host's end-of-turn JSON on stdin; prints the host's
`{\"decision\": \"block\", \"reason\": …}` when consolidation is due, else
nothing; never fails the host (exit 0, one line on stderr).";

/// Ask the agent to save what its session learned, at the end of a turn.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Read the host's end-of-turn hook JSON from stdin (`session_id`,
    /// `transcript_path`, `stop_hook_active`, `cwd`) and answer it
    #[arg(long, conflicts_with_all = ["enable", "disable"])]
    pub hook: bool,
    /// Turn consolidation on for this root (kept in its `.state.json`)
    #[arg(long, conflicts_with = "disable")]
    pub enable: bool,
    /// Turn it off for this root ($MEM_CONSOLIDATE=1 still turns it on)
    #[arg(long)]
    pub disable: bool,
    /// Every this many turns of a session [default: the setting, else 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub every: Option<u32>,
}

/// What the host is told to do.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub decision: &'static str,
    pub reason: String,
}

/// The setting, and in hook mode the decision.
#[derive(Debug, Serialize)]
pub struct Report {
    pub enabled: bool,
    /// What decided it: `MEM_CONSOLIDATE`, `setting` or `default`.
    pub by: &'static str,
    pub every: u32,
    /// The root whose `.state.json` holds the setting and counts.
    pub root: Option<PathBuf>,
    /// Sessions whose turns are counted there.
    pub sessions: usize,
    /// Sessions consolidation was asked for.
    pub asked: usize,
    #[serde(skip)]
    hook: Option<Option<Decision>>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Run it.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    if args.hook {
        return hook(ctx, args);
    }
    if args.every.is_some() && !args.enable {
        // Shown or dropped without a word otherwise: it is stored with --enable.
        return Err(Error::input("--every is kept only with --enable (or used with --hook)")
            .hint("mem consolidate --enable --every N"));
    }
    if args.enable || args.disable {
        let root = ctx.write_root()?;
        let every = args.enable.then(|| args.every.unwrap_or(DEFAULT_EVERY));
        let warnings = state::update(&root.dir, ctx.now_ms, |s| s.consolidation.every = every)?;
        let mut report = status(ctx, args)?;
        report.warnings.extend(warnings);
        return Ok(report);
    }
    status(ctx, args)
}

/// On or off, and what decided it; `every` from the flag, the setting, else 3.
fn status(ctx: &Context, args: &Args) -> Result<Report> {
    let root = ctx.write_root().ok();
    let mut set = None;
    for r in [ctx.root(Scope::Project), ctx.root(Scope::Global)].into_iter().flatten() {
        set = set.or(state::load(&r.dir).0.consolidation.every);
    }
    let (enabled, by) = match switch()? {
        Some(on) => (on, "MEM_CONSOLIDATE"),
        None if set.is_some() => (true, "setting"),
        None => (false, "default"),
    };
    let counts = root.map(|r| state::load(&r.dir).0.consolidation.sessions).unwrap_or_default();
    Ok(Report {
        enabled,
        by,
        every: args.every.or(set).unwrap_or(DEFAULT_EVERY),
        root: root.map(|r| r.dir.clone()),
        sessions: counts.len(),
        asked: counts.values().filter(|t| t.asked.is_some()).count(),
        hook: None,
        warnings: Vec::new(),
    })
}

/// `$MEM_CONSOLIDATE`: `Some(on)` when set.
fn switch() -> Result<Option<bool>> {
    let Some(value) = std::env::var_os("MEM_CONSOLIDATE") else { return Ok(None) };
    match value.to_string_lossy().trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Ok(Some(true)),
        "0" | "off" | "false" | "no" | "" => Ok(Some(false)),
        other => Err(Error::input(format!("MEM_CONSOLIDATE=`{other}` is neither 1 nor 0"))
            .hint("set MEM_CONSOLIDATE=1 to turn consolidation on, 0 to turn it off, or unset it")),
    }
}

/// Answer the host's end-of-turn hook.
fn hook(ctx: &Context, args: &Args) -> Result<Report> {
    let input = input::read()?;
    let mut ctx = ctx.clone();
    if let Some(cwd) = &input.cwd
        && !ctx.roots.project_named
    {
        ctx.roots.project =
            crate::model::roots::find_project(cwd).map(|dir| Root { scope: Scope::Project, dir });
    }
    let ctx = &ctx;
    let mut report = status(ctx, args)?;
    report.hook = Some(None);
    let id = input.session_id.clone().filter(|id| session::valid_id(id));
    if id.is_none() && report.enabled && !input.stop_hook_active {
        // Not quoted: the host's input is not ours to echo.
        report.warnings.push(format!(
            "the hook's input has no session_id of {}: this turn is not counted",
            session::ID_RULE
        ));
    }
    let (Some(id), Ok(root)) = (id, ctx.write_root()) else { return Ok(report) };
    if input.stop_hook_active || !report.enabled {
        return Ok(report);
    }
    let now = ctx.now_ms;
    let mut turns = Turns::default();
    report.warnings.extend(state::update(&root.dir, now, |s| {
        turns = s.consolidation.count(&id, now);
    })?);
    if !due(turns, report.every) || cited(ctx, &id) {
        return Ok(report);
    }
    let (recent, why) = match (&input.messages, &input.transcript_path) {
        (Some(messages), _) => (transcript::from_messages(messages), None),
        (None, Some(path)) => transcript::from_file(&input.cwd.unwrap_or_default().join(path)),
        (None, None) => (Vec::new(), None),
    };
    report.warnings.extend(why);
    let reason = reason::build(ctx, &id, &recent);
    let mut asked = false;
    state::update(&root.dir, now, |s| asked = s.consolidation.ask(&id, now))?;
    if asked {
        report.hook = Some(Some(Decision { decision: "block", reason }));
    }
    Ok(report)
}

/// Whether a memory already cites session `id` in `source_sessions`.
fn cited(ctx: &Context, id: &str) -> bool {
    let Ok(roots) = ctx.read_roots() else { return false };
    let tree = crate::cache::scan_all(&roots);
    tree.memories.iter().any(|m| m.source_sessions.iter().any(|s| s == id))
}

impl Report {
    /// In hook mode: the host's JSON line, or nothing. Hidden characters
    /// are JSON escapes, so that the terminal-safe output keeps it JSON.
    fn hook_text(&self) -> Option<String> {
        let decision = self.hook.as_ref()?;
        Some(decision.as_ref().map_or_else(String::new, |d| {
            let json = serde_json::to_string(d).unwrap_or_default();
            format!("{}\n", crate::base::text::json_visible(&json))
        }))
    }
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        if let Some(text) = self.hook_text() {
            return text;
        }
        let state = if self.enabled { "on" } else { "off" };
        let by = match self.by {
            "MEM_CONSOLIDATE" => "by $MEM_CONSOLIDATE",
            "setting" => "by `mem consolidate --enable`",
            _ => "the default; `mem consolidate --enable` or MEM_CONSOLIDATE=1 turns it on",
        };
        let mut out = format!("consolidation at the end of a turn: {state} ({by})\n");
        let turns = if self.every == 1 { "turn" } else { "turns" };
        out.push_str(&format!("  every {} {turns} of a session\n", self.every));
        if let Some(root) = &self.root {
            let sessions = if self.sessions == 1 { "session" } else { "sessions" };
            out.push_str(&format!(
                "  {} {sessions} counted in {}, {} asked to consolidate\n",
                self.sessions,
                state::path(root).display(),
                self.asked
            ));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn json_text(&self) -> Option<String> {
        self.hook_text()
    }
}
