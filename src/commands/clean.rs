//! `mem clean`: list memories that have gone stale and unused — not
//! updated for N days and hit at most M times; never pinned ones, never
//! rules. A dry run unless `--yes`, which moves them to `.trash/`.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::commands::compile::refresh;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::state;
use crate::store::write::trash;

use crate::base::time::DAY_MS;

/// List (or, with --yes, trash) stale, unused memories.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem clean                       dry run: what would go, and why\n  mem clean --max-age-days 90 --max-hits 1\n  mem clean --category facts --yes"
)]
pub struct Args {
    /// Candidates were not updated for this many days
    #[arg(long, default_value_t = 180)]
    pub max_age_days: u32,
    /// Candidates were recalled at most this many times
    #[arg(long, default_value_t = 0)]
    pub max_hits: u64,
    /// Only this category
    #[arg(long, short)]
    pub category: Option<String>,
    /// Move the candidates to .trash/ (restorable with `mem restore`)
    #[arg(long)]
    pub yes: bool,
}

/// One eviction candidate.
#[derive(Debug, Serialize)]
pub struct Candidate {
    pub root: Scope,
    pub path: String,
    pub reason: String,
    /// Where it went, with --yes.
    pub trashed: Option<PathBuf>,
}

/// The candidates.
#[derive(Debug, Serialize)]
pub struct Report {
    pub dry_run: bool,
    pub candidates: Vec<Candidate>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Find and, with --yes, trash the candidates.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let mut candidates = Vec::new();
    let mut warnings = Vec::new();
    for root in ctx.read_roots()? {
        let _lock = if args.yes { Some(crate::store::write::lock_root(&root.dir)?) } else { None };
        let hits = state::load(&root.dir).0.hits;
        let mut moved = false;
        // Read from the files, not the index: a dry run writes nothing.
        let (files, _) = crate::store::scan::walk(root);
        let memories = crate::store::scan::load_files(root.scope, &files).memories;
        // A memory in a supersede link stays: trashing either end would
        // leave the other pointing at nothing.
        let linked: std::collections::HashSet<String> = memories
            .iter()
            .filter(|m| m.supersedes.is_some() || m.superseded_by.is_some())
            .flat_map(|m| [Some(m.file()), m.supersedes.clone(), m.superseded_by.clone()])
            .flatten()
            .collect();
        for m in memories {
            let age_days = (ctx.now_ms - m.updated) / DAY_MS;
            let count = hits.get(&m.file()).map_or(0, |h| h.count);
            let eligible = !m.pinned
                && !m.is_rule()
                && !linked.contains(&m.file())
                && age_days >= i64::from(args.max_age_days)
                && count <= args.max_hits
                && args.category.as_ref().is_none_or(|c| &m.path.category == c);
            if !eligible {
                continue;
            }
            let reason = format!("not updated for {age_days} days, recalled {count} time(s)");
            let trashed = if args.yes {
                let to = trash(&root.dir, &m.path, ctx.now_ms)?;
                moved = true;
                Some(to)
            } else {
                None
            };
            candidates.push(Candidate { root: root.scope, path: m.file(), reason, trashed });
        }
        if moved {
            warnings.extend(refresh(root)?.1);
        }
    }
    Ok(Report { dry_run: !args.yes, candidates, warnings })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.candidates.is_empty() {
            return "nothing to clean\n".into();
        }
        let mut out = String::new();
        for c in &self.candidates {
            let verb = if c.trashed.is_some() { "trashed" } else { "would trash" };
            out.push_str(&format!(
                "{verb} {} {}  ({})\n",
                c.root.name(),
                style.path(&c.path),
                c.reason
            ));
        }
        if self.dry_run {
            out.push_str(&format!(
                "{} candidate(s); nothing changed. Run again with --yes to move them to .trash/\n",
                self.candidates.len()
            ));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
