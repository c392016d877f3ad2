//! List: the memories of the selected roots, filtered and sorted.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::base::text::{display_width, flat, wrap};
use crate::model::memory::Memory;
use crate::model::usage::Usage;
use crate::ops::filter::Filter;
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::Problem;
use crate::store::state::Hits;
use crate::store::usage::Uses;

/// What to do (the options of [`run`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// Which memories.
    pub filter: Filter,
    /// Order of the list
    pub sort: Sort,
    /// At most this many, after sorting
    pub limit: Option<u32>,
    /// Each memory whole: the full title and summary, when it was updated,
    /// its tags and triggers (without it, one line each, cut to the terminal)
    pub long: bool,
}

/// List orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Sort {
    /// Most recently updated first
    Recent,
    /// By path
    Name,
    /// Most often recalled first (hit counts in .state.json)
    Hits,
    /// Most recently recalled first; never recalled last
    Recalled,
}

/// One memory listed, with its use as of now: when it was last used,
/// its tier and its relevance in effect.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub memory: Memory,
    #[serde(flatten)]
    pub usage: Usage,
}

impl std::ops::Deref for Listed {
    type Target = Memory;

    fn deref(&self) -> &Memory {
        &self.memory
    }
}

/// The listed memories.
#[derive(Debug, Serialize)]
pub struct Report {
    pub memories: Vec<Listed>,
    pub problems: Vec<Problem>,
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// With `--sort hits|recalled`: each memory's hits, shown beside it.
    #[serde(skip)]
    hits: Option<(Vec<Hits>, crate::base::time::Clock)>,
    /// `--long`, with the clock to say when.
    #[serde(skip)]
    long: Option<crate::base::time::Clock>,
}

/// Scan, filter, sort.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    // Metadata only: through the index, reading just the files that changed.
    let roots = ctx.read_roots()?;
    let filter = &args.filter;
    filter.check_category(&roots)?;
    let tree = crate::cache::scan_all(&roots);
    let uses = Uses::load(&roots, ctx.now_ms);
    let mut memories: Vec<Memory> =
        tree.memories.into_iter().filter(|m| filter.matches(m, &uses)).collect();
    if memories.is_empty() && filter.is_set() {
        return Err(Error::not_found("no memory matches these filters")
            .hint("try fewer filters, or `mem list` for everything"));
    }
    let by_name = |a: &Memory, b: &Memory| a.path.cmp(&b.path).then(a.scope.cmp(&b.scope));
    let by_hits = matches!(args.sort, Sort::Hits | Sort::Recalled);
    let of = |m: &Memory| uses.hits(m);
    match args.sort {
        Sort::Name => memories.sort_by(by_name),
        Sort::Recent => memories.sort_by(|a, b| b.updated.cmp(&a.updated).then(by_name(a, b))),
        Sort::Hits => memories.sort_by(|a, b| {
            let (x, y) = (of(a), of(b));
            (y.count, y.last).cmp(&(x.count, x.last)).then(by_name(a, b))
        }),
        Sort::Recalled => memories.sort_by(|a, b| {
            let (x, y) = (of(a), of(b));
            (y.last, y.count).cmp(&(x.last, x.count)).then(by_name(a, b))
        }),
    }
    if let Some(limit) = args.limit {
        memories.truncate(limit as usize);
    }
    let clock = crate::base::time::Clock { now_ms: ctx.now_ms, lang: ctx.lang };
    let shown = by_hits.then(|| (memories.iter().map(of).collect(), clock));
    let warnings = tree.problems.iter().map(ToString::to_string).collect();
    let long = args.long.then_some(clock);
    let memories = memories.into_iter().map(|m| Listed { usage: uses.of(&m), memory: m }).collect();
    Ok(Report { memories, problems: tree.problems, warnings, hits: shown, long })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.memories.is_empty() {
            return "no memories (add one with `mem remember <category>/<slug> TEXT`)\n".into();
        }
        let width = self.memories.iter().map(|m| m.file().len()).max().unwrap_or(0);
        let both = self.memories.iter().any(|m| m.scope != self.memories[0].scope);
        let recalled: Vec<String> = self.hits.as_ref().map_or(Vec::new(), |(hits, clock)| {
            hits.iter()
                .map(|h| match h.count {
                    0 => "never recalled".to_string(),
                    n => format!("{n} hit(s), last {}", clock.when(h.last)),
                })
                .collect()
        });
        let recalled_width = recalled.iter().map(|r| r.chars().count()).max().unwrap_or(0);
        let mut out = String::new();
        let columns = crate::output::width();
        for (i, m) in self.memories.iter().enumerate() {
            let file = m.file();
            let pad = " ".repeat(width - file.len());
            let scope = if both { format!("{:<8}", m.scope.name()) } else { String::new() };
            // Sorted by hits: what it was sorted by, beside each.
            let recalled = recalled.get(i).map_or(String::new(), |r| {
                format!("{r}{}  ", " ".repeat(recalled_width - r.chars().count()))
            });
            let kind = format!("{:<10}", flat(&m.kind));
            let tier = format!("{:<4}", m.usage.tier.name());
            let prefix = format!("{scope}{file}{pad}  {recalled}{kind}  {tier}  ");
            // The title and the summary; without a title, the summary alone
            // (its first clause standing in), never the slug again.
            let rest = m.summary_beyond_label();
            let mut text = match m.has_title() || m.summary.trim().is_empty() {
                true => flat(&m.label()).into_owned(),
                false => flat(m.summary.trim()).into_owned(),
            };
            if let Some(rest) = rest.filter(|_| self.long.is_none() && m.has_title()) {
                text.push_str(" — ");
                text.push_str(&flat(rest));
            }
            if m.pinned {
                text.push_str("  [pinned]");
            }
            if let Some(by) = &m.superseded_by {
                text.push_str(&format!("  (superseded by {by})"));
            }
            // One line, cut to the terminal (by display columns: CJK is two).
            let room = columns.map(|c| c.saturating_sub(display_width(&prefix)).max(20));
            let text = match self.long {
                Some(_) => text,
                None => wrap(&text, room, 1).into_iter().next().unwrap_or_default(),
            };
            let tier = match m.usage.tier {
                crate::model::usage::Tier::Cool => style.dim(&tier),
                _ => tier,
            };
            let line =
                format!("{scope}{}{pad}  {recalled}{kind}  {tier}  {text}", style.path(&file));
            out.push_str(&if m.superseded_by.is_some() { style.dim(&line) } else { line });
            out.push('\n');
            if let Some(clock) = &self.long {
                let indent = " ".repeat(display_width(&scope) + 2);
                if let Some(summary) = rest.filter(|_| m.has_title()) {
                    out.push_str(&format!("{indent}{}\n", flat(summary)));
                }
                let mut facts = vec![format!("updated {}", clock.when(m.updated))];
                facts.push(crate::model::usage::relevance_fact(&m.usage));
                if !m.tags.is_empty() {
                    facts.push(format!("tags: {}", m.tags.join(", ")));
                }
                if !m.load_when.is_empty() {
                    facts.push(format!("triggers: {}", m.load_when.join(", ")));
                }
                out.push_str(&style.dim(&format!("{indent}{}\n", flat(&facts.join(" · ")))));
            }
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
