//! `mem prompt consolidate`: instructions for an agent to turn recent work
//! into memories, followed by the current manifest of both roots. `mem`
//! needs no model of its own: the agent runs this and follows it.

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

/// Print a prompt for an agent.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub kind: Kind,
}

/// The prompts.
#[derive(Debug, clap::Subcommand)]
pub enum Kind {
    /// Review recent work and write or update memories
    #[command(
        after_help = "Examples:\n  mem prompt consolidate\n  mem prompt consolidate --since 2026-11-01"
    )]
    Consolidate {
        /// Only work since this date (ISO 8601); memories updated since are marked
        #[arg(long)]
        since: Option<String>,
    },
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

/// The prompt.
#[derive(Debug, Serialize)]
pub struct Report {
    pub prompt: String,
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
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let Kind::Consolidate { since } = &args.kind;
    let since_ms = match since {
        Some(s) => Some(parse_iso(s).ok_or_else(|| {
            Error::input(format!("--since `{s}` is not a date")).hint("write it as YYYY-MM-DD")
        })?),
        None => None,
    };
    let tree = crate::index::scan_all(&ctx.read_roots()?);
    // An agent's instructions: another role's private memories are not in them.
    let role = ctx.role.as_ref();
    let mut live: Vec<&crate::model::memory::Memory> = tree
        .memories
        .iter()
        .filter(|m| !m.is_superseded() && crate::commands::filter::visible_to(m, role))
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
    let prompt = CONSOLIDATE.replace("{since}", &since_text);
    Ok(Report { prompt, manifest, more })
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
