//! `mem setup <host>`: connect an agent host to the memory in one command,
//! by writing (or merging into) the host's own configuration files:
//!
//! - `claude-code`: the session-start, prompt and end-of-turn hooks in
//!   `.claude/settings.json`, the MCP server in `.mcp.json` (the end-of-turn
//!   hook, `mem consolidate --hook`, does nothing until consolidation is
//!   turned on: `--consolidate` turns it on for this clone);
//! - `opencode`: the plugin as `.opencode/plugins/mem.ts`, the MCP server in
//!   `opencode.json`;
//! - `codex`: the rules and pinned memories in `AGENTS.md`'s generated
//!   region (`mem export --format agents-md`); with `--global`, the MCP
//!   server in `~/.codex/config.toml`;
//! - `cursor`: `.cursor/rules/mem-*.mdc` (`mem export --format
//!   cursor-rules`) and the MCP server in `.cursor/mcp.json`.
//!
//! With `--global` (the global root only) it writes the user-level files
//! instead. A second run changes no
//! byte; an entry of the same name that mem did not write is kept and said;
//! a file mem owns whole (the plugin) is replaced only when mem wrote it.

mod files;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::base::error::{Error, Result};
use crate::ops::hostfiles::{self, Written};
use crate::output::Style;
use crate::settings::{Context, Selection};
use crate::store::write::write_atomic;
use files::Change;

const EXAMPLES: &str = "\
Examples:
  mem setup claude-code            hooks in .claude/settings.json, the MCP server in .mcp.json
  mem setup claude-code --consolidate   and ask the agent to consolidate every 3 turns
  mem setup opencode --dry-run     what would change, as a diff
  mem setup codex                  AGENTS.md's generated region
  mem --global setup cursor        the MCP server in ~/.cursor/mcp.json
  mem doctor                       check that it all works";

/// The OpenCode plugin, written whole under this first line.
const PLUGIN_MARK: &str = "// Written by `mem setup opencode`; running it again updates this file.";
const PLUGIN: &str = include_str!("../../../integrations/opencode/src/index.ts");

/// The agent host to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    ClaudeCode,
    Opencode,
    Codex,
    Cursor,
}

/// Connect an agent host: write its hooks, plugin, MCP server entry or rule files.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The host
    #[arg(value_enum)]
    pub host: Host,
    /// Change nothing; show what would change as a diff
    #[arg(long)]
    pub dry_run: bool,
    /// Also turn on consolidation at the end of turns for this clone
    /// (`mem consolidate --enable`): claude-code and opencode
    #[arg(long)]
    pub consolidate: bool,
}

/// What setup did (or, with `--dry-run`, would do).
#[derive(Debug, Serialize)]
pub struct Report {
    pub host: Host,
    pub dry_run: bool,
    pub files: Vec<Written>,
    /// What to do next, and what was left alone.
    pub notes: Vec<String>,
}

/// Plan the host's files, then write those that change.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    if args.consolidate && !matches!(args.host, Host::ClaudeCode | Host::Opencode) {
        return Err(Error::input(format!(
            "--consolidate needs an end-of-turn hook, which {} has none of",
            name(args.host)
        ))
        .hint("use it with `mem setup claude-code` or `mem setup opencode`"));
    }
    // `--global` (the global root only): the user-level files.
    let (top, mut changes, mut notes, exported) = match ctx.selection {
        Selection::GlobalOnly => {
            let (top, changes, notes) = user(args.host)?;
            (top, changes, notes, Vec::new())
        }
        _ => project(ctx, args.host, args.dry_run)?,
    };
    // One file written, as the exports report theirs: `kept` where another
    // entry of the same name is there and left as it is.
    let mut files: Vec<Written> = exported;
    for change in changes.drain(..) {
        let action = change.action();
        notes.extend(change.kept.clone());
        let diff = match action {
            "updated" | "created" => {
                let name = change.file.strip_prefix(&top).unwrap_or(&change.file);
                let name = name.display().to_string();
                crate::base::text::unified_diff(
                    &name,
                    change.before.as_deref().unwrap_or(""),
                    &change.after,
                )
            }
            _ => String::new(),
        };
        if matches!(action, "updated" | "created") && !args.dry_run {
            write_atomic(&top, &change.file, change.after.as_bytes())?;
        }
        files.push(Written { file: change.file, action, diff });
    }
    if args.consolidate {
        notes.push(consolidate(ctx, args.dry_run)?);
    }
    Ok(Report { host: args.host, dry_run: args.dry_run, files, notes })
}

/// The project's files: the folder holding `.memory/`.
type Planned = (PathBuf, Vec<Change>, Vec<String>, Vec<hostfiles::Written>);

fn project(ctx: &Context, host: Host, dry_run: bool) -> Result<Planned> {
    let root = ctx.project_root().map_err(|e| {
        e.hint("run `mem init` in the project first, or `mem --global setup` for every project")
    })?;
    let top = root.dir.parent().unwrap_or(&root.dir).to_path_buf();
    let mut notes = Vec::new();
    let trusted =
        !crate::store::trust::Gate::of(&ctx.roots.global.dir, root, ctx.trust_all).is_closed();
    let changes = match host {
        Host::ClaudeCode => vec![
            claude_settings(&top, &top.join(".claude/settings.json"))?,
            mcp_json(&top, ".mcp.json")?,
        ],
        Host::Opencode => {
            opencode(&top, &top.join(".opencode/plugins/mem.ts"), &top.join("opencode.json"))?
        }
        Host::Cursor => vec![mcp_json(&top, ".cursor/mcp.json")?],
        Host::Codex => Vec::new(),
    };
    let export = match host {
        Host::Codex => Some((hostfiles::Host::AgentsMd, "agents-md")),
        Host::Cursor => Some((hostfiles::Host::CursorRules, "cursor-rules")),
        _ => None,
    };
    let mut exported = Vec::new();
    if let Some((format, flag)) = export {
        if !trusted {
            return Err(Error::input(format!(
                "the project memory at {} is not trusted, so nothing of it can be exported for agents",
                root.dir.display()
            ))
            .hint(format!("review it with `mem trust`, then run `mem setup {}` again", name(host))));
        }
        exported = hostfiles::export(ctx, format, None, dry_run)?.files;
        notes.push(format!(
            "keep it fresh: `mem hook install --export {flag}` refuses a commit while it is stale"
        ));
    }
    if host == Host::Codex {
        notes.push(
            "for the MCP tools too: `mem --global setup codex` (Codex reads ~/.codex/config.toml)"
                .into(),
        );
    }
    if !trusted {
        notes.push("the project memory is not trusted yet: agents get none of it until you review it with `mem trust`".into());
    }
    Ok((top, changes, notes, exported))
}

/// The user-level files, in the home folder (OpenCode: its config folder).
fn user(host: Host) -> Result<(PathBuf, Vec<Change>, Vec<String>)> {
    let home =
        std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).ok_or_else(|| {
            Error::input("HOME is not set, so there is no user-level configuration to write")
                .hint("set HOME")
        })?;
    let mut notes = Vec::new();
    let (top, changes) = match host {
        Host::ClaudeCode => {
            notes.push(
                "for the MCP tools in every project: `claude mcp add --scope user mem -- mem mcp`"
                    .into(),
            );
            (home.clone(), vec![claude_settings(&home, &home.join(".claude/settings.json"))?])
        }
        Host::Opencode => {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|c| !c.is_empty())
                .map_or_else(|| home.join(".config"), PathBuf::from);
            let dir = config.join("opencode");
            (
                config.clone(),
                opencode(&config, &dir.join("plugins/mem.ts"), &dir.join("opencode.json"))?,
            )
        }
        Host::Codex => {
            let table = "[mcp_servers.mem]\ncommand = \"mem\"\nargs = [\"mcp\"]\n";
            (home.clone(), vec![files::toml_table(&home, &home.join(".codex/config.toml"), table)?])
        }
        Host::Cursor => (home.clone(), vec![mcp_json(&home, ".cursor/mcp.json")?]),
    };
    Ok((top, changes, notes))
}

/// `--consolidate`: consolidation on for the root setup writes for.
fn consolidate(ctx: &Context, dry_run: bool) -> Result<String> {
    let root = ctx.write_root()?;
    let every = crate::model::consolidation::DEFAULT_EVERY;
    let file = crate::store::state::path(&root.dir);
    if dry_run {
        return Ok(format!(
            "would turn consolidation on in {} (every {every} turns)",
            file.display()
        ));
    }
    let warnings = crate::store::state::update(&root.dir, ctx.now_ms, |s| {
        s.consolidation.every.get_or_insert(every);
    })?;
    for w in warnings {
        eprintln!("warning: {}", crate::base::text::terminal_safe(&w, false));
    }
    Ok(format!(
        "consolidation is on for this clone ({}): `mem consolidate` shows it, `--disable` turns it off",
        file.display()
    ))
}

/// Claude Code's hooks: the session-start block, each prompt's matches, and
/// at the end of a turn consolidation (a no-op until it is turned on).
fn claude_settings(top: &Path, file: &Path) -> Result<Change> {
    let mut change = Change::of(top, file)?;
    let start = "mem context --hook";
    let prompt = "mem context --query -";
    let stop = "mem consolidate --hook";
    change.json_hook(
        "SessionStart",
        json!({"matcher": "startup|resume|clear|compact",
               "hooks": [{"type": "command", "command": start, "timeout": 60}]}),
        start,
    )?;
    change.json_hook(
        "UserPromptSubmit",
        json!({"hooks": [{"type": "command", "command": prompt, "timeout": 30}]}),
        prompt,
    )?;
    change.json_hook(
        "Stop",
        json!({"hooks": [{"type": "command", "command": stop, "timeout": 30}]}),
        stop,
    )?;
    Ok(change)
}

/// The MCP server in a `mcpServers` file (Claude Code's `.mcp.json`, Cursor's `mcp.json`).
fn mcp_json(top: &Path, name: &str) -> Result<Change> {
    let mut change = Change::of(top, &top.join(name))?;
    change.json_entry(&["mcpServers", "mem"], json!({"command": "mem", "args": ["mcp"]}))?;
    Ok(change)
}

/// OpenCode: the plugin file and the MCP server in its config.
fn opencode(top: &Path, plugin: &Path, config: &Path) -> Result<Vec<Change>> {
    let plugin = files::owned(top, plugin, PLUGIN_MARK, &format!("{PLUGIN_MARK}\n{PLUGIN}"))?;
    let mut config_change = Change::of(top, config)?;
    if config_change.before.is_none() {
        config_change.json_entry(&["$schema"], json!("https://opencode.ai/config.json"))?;
    }
    config_change.json_entry(
        &["mcp", "mem"],
        json!({"type": "local", "command": ["mem", "mcp"], "enabled": true}),
    )?;
    Ok(vec![plugin, config_change])
}

fn name(host: Host) -> &'static str {
    match host {
        Host::ClaudeCode => "claude-code",
        Host::Opencode => "opencode",
        Host::Codex => "codex",
        Host::Cursor => "cursor",
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = String::new();
        for f in &self.files {
            let action = match (self.dry_run, f.action) {
                (true, "created") => "would create",
                (true, "updated") => "would update",
                (_, a) => a,
            };
            out.push_str(&format!("{action:<12} {}\n", style.path(&f.file.display().to_string())));
            if self.dry_run {
                out.push_str(&f.diff);
            }
        }
        for note in &self.notes {
            out.push_str(&format!("  {note}\n"));
        }
        if !self.dry_run {
            out.push_str("  check it: mem doctor\n");
        }
        out
    }
}
