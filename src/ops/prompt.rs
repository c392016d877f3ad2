//! The consolidation prompt (`mem prompt consolidate`): instructions for
//! an agent to turn recent work into memories, the recent agent sessions no
//! memory cites yet, and the current manifest of both roots. `mem` needs no model of its own: the
//! agent runs this and follows it.
//!
//! The recent sessions are those the roots' session records saw in the last
//! 7 days (`mem context` with a hook's session id, `memory_recall` and
//! `memory_context` with a `session_id`; see [`crate::store::session`]); a
//! session is covered once a memory lists it in `source_sessions`.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::base::text::md_line;
use crate::base::time::parse_iso;
use crate::model::memory::truncate;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::trust::Gate;

const CONSOLIDATE: &str = include_str!("../../templates/consolidate.md");

/// Which prompt, and for what.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Consolidation of the work since this date (ISO 8601): memories
    /// updated since are marked.
    pub since: Option<String>,
}

/// One row of the manifest.
#[derive(Debug, Serialize)]
pub struct Row {
    pub root: Scope,
    pub path: String,
    pub summary: String,
    pub updated: i64,
    pub recent: bool,
}

/// A recent session no memory cites yet.
#[derive(Debug, Serialize)]
pub struct Session {
    pub id: String,
    /// Epoch ms it was last seen.
    pub last_seen: i64,
}

/// The prompt.
#[derive(Debug, Serialize)]
pub struct Report {
    pub prompt: String,
    /// Recent sessions no memory cites (`source_sessions`), most recent
    /// first, at most 20: the work consolidation has not covered.
    pub uncited_sessions: Vec<Session>,
    /// The most recently updated memories, at most 60.
    pub manifest: Vec<Row>,
    /// Live memories not in `manifest`.
    pub more: usize,
}

/// What stands for a summary the user has not trusted.
const HELD_BACK: &str = "(not shown: the user has not trusted this version of the file)";

/// Rows of the manifest: enough to update instead of duplicate, bounded
/// whatever the roots hold.
const MANIFEST: usize = 60;

/// Build the prompt.
pub fn run(ctx: &Context, options: &Options) -> Result<Report> {
    let since = &options.since;
    let since_ms = match since {
        Some(s) => Some(parse_iso(s).ok_or_else(|| {
            Error::input(format!("--since `{s}` is not a date")).hint("write it as YYYY-MM-DD")
        })?),
        None => None,
    };
    let roots = ctx.read_roots()?;
    let tree = crate::cache::scan_all(&roots);
    let uncited = uncited_sessions(&roots, &tree.memories, ctx.now_ms);
    // An agent's instructions: another role's private memories are not in them.
    let role = ctx.role.as_ref();
    let mut live: Vec<&crate::model::memory::Memory> = tree
        .memories
        .iter()
        .filter(|m| !m.is_superseded() && crate::ops::visibility::visible_to(m, role))
        .collect();
    // The most recently updated first: what consolidation most likely touches.
    live.sort_by_key(|m| (std::cmp::Reverse(m.updated), m.scope, m.file()));
    let more = live.len().saturating_sub(MANIFEST);
    live.truncate(MANIFEST);
    live.sort_by_key(|m| (m.scope, m.file()));
    // This prompt is an agent's instructions: a project summary is in it
    // only as far as the user trusted the file (names alone otherwise).
    let project = ctx.root(Scope::Project);
    let gate = project.map(|p| Gate::of(&ctx.roots.global.dir, p, ctx.trust_all));
    let summary = |m: &crate::model::memory::Memory| match (m.scope, project, &gate) {
        (Scope::Project, Some(root), Some(gate)) => {
            gate.memory(root, &m.path).map_or_else(|| HELD_BACK.to_string(), |t| t.summary)
        }
        _ => m.summary.clone(),
    };
    let manifest = live
        .into_iter()
        .map(|m| Row {
            root: m.scope,
            path: m.file(),
            summary: summary(m),
            updated: m.updated,
            recent: since_ms.is_some_and(|s| m.updated >= s),
        })
        .collect();
    let since_text = since.as_ref().map(|s| format!(" since {s}")).unwrap_or_default();
    let prompt = CONSOLIDATE
        .replace("{since}", &since_text)
        .replace("{sessions}\n", &sessions_text(&uncited, ctx));
    Ok(Report { prompt, uncited_sessions: uncited, manifest, more })
}

/// Sessions listed at most.
const SESSIONS: usize = 20;

/// The sessions `roots` saw lately that no memory lists in `source_sessions`.
fn uncited_sessions(
    roots: &[&crate::model::roots::Root],
    memories: &[crate::model::memory::Memory],
    now_ms: i64,
) -> Vec<Session> {
    let cited: std::collections::HashSet<&str> =
        memories.iter().flat_map(|m| m.source_sessions.iter().map(String::as_str)).collect();
    let mut seen: Vec<(String, i64)> =
        roots.iter().flat_map(|r| crate::store::session::recent(r, now_ms)).collect();
    seen.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out: Vec<Session> = Vec::new();
    for (id, at) in seen {
        if !cited.contains(id.as_str()) && !out.iter().any(|s| s.id == id) {
            out.push(Session { id, last_seen: at });
        }
    }
    out.truncate(SESSIONS);
    out
}

/// The prompt's section on sessions: those not covered yet, and how to cite one.
fn sessions_text(uncited: &[Session], ctx: &Context) -> String {
    if uncited.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Sessions no memory cites yet\n\nThese recent sessions are not covered: no memory lists them in\n`source_sessions`. Review the ones you can see (your own, or their\ntranscripts). When a memory comes from one, pass its id as you write or\nupdate it: `mem remember <category>/<slug> ... --session <id>` (over MCP,\n`session_id`). A session a memory cites is not listed again.\n\n",
    );
    for s in uncited {
        let when = crate::base::time::relative_age(s.last_seen, ctx.now_ms, ctx.lang);
        out.push_str(&format!("- `{}` (last seen {when})\n", s.id));
    }
    out.push('\n');
    out
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        let mut out = self.prompt.clone();
        if self.manifest.is_empty() {
            out.push_str("\n(no memories yet)\n");
        }
        let mut scope = None;
        for row in &self.manifest {
            if scope != Some(row.root) {
                scope = Some(row.root);
                out.push_str(&format!("\n### {} root\n\n", row.root.name()));
            }
            let mark = if row.recent { " (updated recently)" } else { "" };
            let summary = md_line(&truncate(&row.summary, 120));
            out.push_str(&format!("- `{}`{mark}: {summary}\n", row.path));
        }
        if self.more > 0 {
            out.push_str(&format!(
                "\n… and {} more memories, less recently updated: `mem recall <words>` finds any of them before you write a new one.\n",
                self.more
            ));
        }
        out
    }
}
