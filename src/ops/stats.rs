//! Stats: what each root holds — by category, kind and language,
//! pinned, superseded and shadowed memories, hits, ages, bytes, and the
//! always-resident size against the context budget.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::text::is_cjk;
use crate::base::time::Clock;
use crate::model::memory::Memory;
use crate::model::memory::{RESIDENT_BUDGET, over_budget};
use crate::model::roots::{Root, Scope};
use crate::model::usage::{Relevance, Tier};
use crate::ops::filter::Filter;
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::{load_files, walk};
use crate::store::usage::Uses;

/// What to do (the options of [`run`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// Which memories are counted.
    pub filter: Filter,
}

/// Language of a memory's text.
#[derive(Debug, Default, Serialize)]
pub struct Languages {
    pub zh: usize,
    pub en: usize,
    pub mixed: usize,
}

/// Hit counts of a root.
#[derive(Debug, Default, Serialize)]
pub struct HitStats {
    pub total: u64,
    pub never_hit: usize,
    /// The most recalled, as `{"path", "count"}`.
    #[serde(serialize_with = "path_count")]
    pub top: Vec<(String, u64)>,
}

/// Memories per tier (see [`crate::model::usage`]).
#[derive(Debug, Default, Serialize)]
pub struct TierCounts {
    pub hot: usize,
    pub warm: usize,
    pub cool: usize,
}

/// Memories per relevance level in effect.
#[derive(Debug, Default, Serialize)]
pub struct LevelCounts {
    pub high: usize,
    pub medium: usize,
    pub low: usize,
}

/// One root's figures.
#[derive(Debug, Serialize)]
pub struct RootStats {
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    pub dir: PathBuf,
    /// Counts are `*_count` in JSON: `memories`, `pinned` and the rest
    /// name lists and flags everywhere else.
    #[serde(rename = "memory_count")]
    pub memories: usize,
    pub by_category: BTreeMap<String, usize>,
    pub by_kind: BTreeMap<String, usize>,
    /// Per agent role; `shared` for memories without `role:`.
    pub by_role: BTreeMap<String, usize>,
    /// Per tag, as written (lowercased).
    pub by_tag: BTreeMap<String, usize>,
    pub languages: Languages,
    /// By days since last use: hot (≤ 7), warm (8–30), cool (> 30).
    pub by_tier: TierCounts,
    /// By relevance in effect (declared, lowered for time without use).
    pub by_relevance: LevelCounts,
    #[serde(rename = "pinned_count")]
    pub pinned: usize,
    #[serde(rename = "superseded_count")]
    pub superseded: usize,
    #[serde(rename = "shadowed_count")]
    pub shadowed: usize,
    /// Hit totals (`hit_totals` in JSON: `hits` is one memory's elsewhere).
    #[serde(rename = "hit_totals")]
    pub hits: HitStats,
    /// (path, updated) of the least and most recently updated memory.
    /// As `{"path", "updated"}`.
    #[serde(serialize_with = "path_updated")]
    pub oldest: Option<(String, i64)>,
    #[serde(serialize_with = "path_updated")]
    pub newest: Option<(String, i64)>,
    pub bytes: u64,
    pub resident_tokens: usize,
    pub budget: usize,
    pub max_entries: usize,
}

/// All roots.
#[derive(Debug, Serialize)]
pub struct Report {
    pub roots: Vec<RootStats>,
    pub warnings: Vec<String>,
    #[serde(skip)]
    clock: Clock,
}

/// The language of a text: `zh` (CJK, no Latin word), `en` (no CJK) or `mixed`.
pub fn language(text: &str) -> &'static str {
    let cjk = text.chars().any(is_cjk);
    let latin_word = text.split(|c: char| !c.is_ascii_alphabetic()).any(|w| w.len() >= 2);
    match (cjk, latin_word) {
        (false, _) => "en",
        (true, false) => "zh",
        (true, true) => "mixed",
    }
}

fn path_count<S: serde::Serializer>(
    top: &[(String, u64)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::output::named_pairs(top, ["path", "count"], s)
}

fn path_updated<S: serde::Serializer>(
    at: &Option<(String, i64)>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    at.as_ref().map(|p| crate::output::Named(p, ["path", "updated"])).serialize(s)
}

/// Gather the figures.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let max = crate::settings::max_entries();
    let mut roots = Vec::new();
    let mut project_paths: HashSet<String> = HashSet::new();
    let mut warnings = Vec::new();
    let selected = ctx.read_roots()?;
    let filter = &args.filter;
    filter.check_category(&selected)?;
    for root in selected {
        let (files, _) = walk(root);
        let all = load_files(root.scope, &files).memories;
        warnings.extend(over_budget(&all, root.scope));
        let uses = Uses::load(&[root], ctx.now_ms);
        let memories: Vec<Memory> = all.into_iter().filter(|m| filter.matches(m, &uses)).collect();
        let chosen: HashSet<String> = memories.iter().map(Memory::file).collect();
        let bytes = files.iter().filter(|f| chosen.contains(&f.rel.file())).map(|f| f.size).sum();
        let shadowed = match root.scope {
            Scope::Project => {
                project_paths.extend(memories.iter().map(Memory::file));
                0
            }
            Scope::Global => memories.iter().filter(|m| project_paths.contains(&m.file())).count(),
        };
        let stats = root_stats(root, &memories, bytes, shadowed, max, &uses);
        if stats.memories > max {
            warnings.push(format!(
                "the {} root holds {} memories, over MEM_MAX_ENTRIES={max}: run `mem clean` to list eviction candidates",
                root.scope.name(),
                stats.memories
            ));
        }
        roots.push(stats);
    }
    warnings.extend(crate::ops::visibility::standing_warning(ctx));
    Ok(Report { roots, warnings, clock: Clock { now_ms: ctx.now_ms, lang: ctx.lang } })
}

fn root_stats(
    root: &Root,
    memories: &[Memory],
    bytes: u64,
    shadowed: usize,
    max: usize,
    uses: &Uses,
) -> RootStats {
    let mut s = RootStats {
        scope: root.scope,
        dir: root.dir.clone(),
        memories: memories.len(),
        by_category: BTreeMap::new(),
        by_kind: BTreeMap::new(),
        by_role: BTreeMap::new(),
        by_tag: BTreeMap::new(),
        languages: Languages::default(),
        by_tier: TierCounts::default(),
        by_relevance: LevelCounts::default(),
        pinned: 0,
        superseded: 0,
        shadowed,
        hits: HitStats::default(),
        oldest: None,
        newest: None,
        bytes,
        resident_tokens: crate::model::memory::resident_total(memories),
        budget: RESIDENT_BUDGET,
        max_entries: max,
    };
    let mut top = Vec::new();
    for m in memories {
        *s.by_category.entry(m.path.category.clone()).or_default() += 1;
        *s.by_kind.entry(m.kind.clone()).or_default() += 1;
        *s.by_role.entry(m.role.clone().unwrap_or_else(|| "shared".into())).or_default() += 1;
        let tags: std::collections::BTreeSet<String> =
            m.tags.iter().map(|t| t.to_lowercase()).collect();
        for tag in tags {
            *s.by_tag.entry(tag).or_default() += 1;
        }
        match language(&format!("{} {} {}", m.title, m.summary, m.body)) {
            "zh" => s.languages.zh += 1,
            "en" => s.languages.en += 1,
            _ => s.languages.mixed += 1,
        }
        let used = uses.of(m);
        *match used.tier {
            Tier::Hot => &mut s.by_tier.hot,
            Tier::Warm => &mut s.by_tier.warm,
            Tier::Cool => &mut s.by_tier.cool,
        } += 1;
        *match used.effective {
            Relevance::High => &mut s.by_relevance.high,
            Relevance::Medium => &mut s.by_relevance.medium,
            Relevance::Low => &mut s.by_relevance.low,
        } += 1;
        s.pinned += usize::from(m.pinned);
        s.superseded += usize::from(m.is_superseded());
        let count = uses.hits(m).count;
        s.hits.total += count;
        if count == 0 {
            s.hits.never_hit += 1;
        } else {
            top.push((m.file(), count));
        }
        if s.oldest.as_ref().is_none_or(|(_, t)| m.updated < *t) {
            s.oldest = Some((m.file(), m.updated));
        }
        if s.newest.as_ref().is_none_or(|(_, t)| m.updated > *t) {
            s.newest = Some((m.file(), m.updated));
        }
    }
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(10);
    s.hits.top = top;
    s
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = String::new();
        for r in &self.roots {
            out.push_str(&format!("{} {}\n", style.bold(r.scope.name()), r.dir.display()));
            out.push_str(&format!(
                "  memories   {} ({} pinned, {} superseded, {} shadowed), {} KiB\n",
                r.memories,
                r.pinned,
                r.superseded,
                r.shadowed,
                r.bytes.div_ceil(1024)
            ));
            let join = |m: &BTreeMap<String, usize>| {
                m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
            };
            out.push_str(&format!("  categories {}\n", join(&r.by_category)));
            out.push_str(&format!("  kinds      {}\n", join(&r.by_kind)));
            out.push_str(&format!("  roles      {}\n", join(&r.by_role)));
            if !r.by_tag.is_empty() {
                out.push_str(&format!("  tags       {}\n", join(&r.by_tag)));
            }
            out.push_str(&format!(
                "  languages  zh {}, en {}, mixed {}\n",
                r.languages.zh, r.languages.en, r.languages.mixed
            ));
            let (t, l) = (&r.by_tier, &r.by_relevance);
            out.push_str(&format!(
                "  tiers      hot {}, warm {}, cool {}\n",
                t.hot, t.warm, t.cool
            ));
            out.push_str(&format!(
                "  relevance  high {}, medium {}, low {} (in effect)\n",
                l.high, l.medium, l.low
            ));
            out.push_str(&format!(
                "  hits       {} in all, {} never hit\n",
                r.hits.total, r.hits.never_hit
            ));
            for (path, n) in &r.hits.top {
                out.push_str(&format!("    {n:>5}  {}\n", style.path(path)));
            }
            if let (Some(old), Some(new)) = (&r.oldest, &r.newest) {
                out.push_str(&format!(
                    "  oldest     {} ({})\n  newest     {} ({})\n",
                    old.0,
                    self.clock.when(old.1),
                    new.0,
                    self.clock.when(new.1)
                ));
            }
            out.push_str(&format!(
                "  resident   ~{} of {} tokens (rules and pinned)\n",
                r.resident_tokens, r.budget
            ));
        }
        if self.roots.is_empty() {
            out.push_str("no memory roots yet: run `mem init`\n");
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages() {
        assert_eq!(language("部署脚本"), "zh");
        assert_eq!(language("deploy script"), "en");
        assert_eq!(language("部署脚本用 pnpm"), "mixed");
        assert_eq!(language("部署 v2 K"), "zh");
    }
}
