//! Clean: the memories that have gone stale and unused — not
//! updated for N days and hit at most M times, or, with
//! `--min-relevance`, whose relevance in effect fell below that level; never
//! pinned ones, never rules. A dry run unless `--yes`, which moves them to
//! `.trash/`.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::model::roots::Scope;
use crate::model::usage::Usage;
use crate::ops::compile::refresh;
use crate::ops::filter::Filter;
use crate::output::Style;
use crate::settings::Context;
use crate::store::usage::Uses;
use crate::store::write::trash;

use crate::base::time::DAY_MS;

/// What to do (the options of [`run`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// Candidates were not updated for this many days [default: 180,
    /// unless --min-relevance chooses the candidates]
    pub max_age_days: Option<u32>,
    /// Candidates were recalled at most this many times [default: 0,
    /// unless --min-relevance chooses the candidates]
    pub max_hits: Option<u64>,
    /// `--category`, `--kind`, `--tag`, `--role`, `--tier` narrow the
    /// candidates; `--min-relevance LEVEL` chooses them: the memories whose
    /// relevance in effect is below LEVEL (what `mem context --min-relevance
    /// LEVEL` leaves out)
    pub filter: Filter,
    /// At most this many candidates, the longest unused first
    pub limit: Option<u32>,
    /// Move the candidates to .trash/ (restorable with `mem restore`)
    pub yes: bool,
    /// Only list the candidates (what `mem clean` does without --yes)
    pub dry_run: bool,
}

/// One eviction candidate.
#[derive(Debug, Serialize)]
pub struct Candidate {
    pub root: Scope,
    pub path: String,
    pub reason: String,
    /// When it was last used, its tier and its relevance in effect.
    #[serde(flatten)]
    pub usage: Usage,
    /// Where it went, with --yes (`file` in JSON, as everywhere).
    #[serde(rename = "file")]
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
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let roots = ctx.read_roots()?;
    args.filter.check_category(&roots)?;
    // Every root locked before anything is chosen, until all is moved.
    let mut locks = Vec::new();
    if args.yes {
        for root in &roots {
            locks.push(crate::ops::writing::writing(root)?);
        }
    }
    // By relevance, or else by age and hits; the other filters narrow.
    let below = args.filter.min_relevance;
    let narrow = crate::ops::filter::Filter { min_relevance: None, ..args.filter.clone() };
    let max_age = args.max_age_days.or(below.is_none().then_some(180));
    let max_hits = args.max_hits.or(below.is_none().then_some(0));
    // (root index, last used, candidate)
    let mut found: Vec<(usize, i64, Candidate)> = Vec::new();
    for (at, root) in roots.iter().enumerate() {
        let uses = Uses::load(&[root], ctx.now_ms);
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
            let age_days = ctx.now_ms.saturating_sub(m.updated) / DAY_MS;
            let count = uses.hits(&m).count;
            let usage = uses.of(&m);
            let eligible = !m.pinned
                && !m.is_rule()
                && !linked.contains(&m.file())
                && max_age.is_none_or(|days| age_days >= i64::from(days))
                && max_hits.is_none_or(|most| count <= most)
                && below.is_none_or(|level| usage.effective < level)
                && narrow.matches(&m, &uses);
            if eligible {
                let mut reason =
                    format!("not updated for {age_days} days, recalled {count} time(s)");
                if below.is_some() {
                    reason = format!("{}; {reason}", crate::model::usage::relevance_fact(&usage));
                }
                let c =
                    Candidate { root: root.scope, path: m.file(), reason, usage, trashed: None };
                found.push((at, usage.last_used, c));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)).then(a.2.path.cmp(&b.2.path)));
    if let Some(limit) = args.limit {
        found.truncate(limit as usize);
    }
    let mut warnings = Vec::new();
    let mut moved = vec![false; roots.len()];
    let mut candidates = Vec::new();
    for (at, _, mut c) in found {
        if args.yes {
            let rel = crate::model::relpath::RelPath::parse(&c.path)?;
            c.trashed = Some(trash(&roots[at].dir, &rel, ctx.now_ms)?);
            moved[at] = true;
        }
        candidates.push(c);
    }
    for (root, _) in roots.iter().zip(&moved).filter(|(_, m)| **m) {
        warnings.extend(refresh(root)?.1);
    }
    drop(locks);
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
