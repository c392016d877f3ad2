//! Recall: the memories that best answer a query, ranked.
//!
//! Reads the selected roots through the index, ranks in memory (see
//! [`crate::rank`]), fuses with the semantic [`tier`] when there is one,
//! and counts one hit for each result, in its root's `.state.json`, unless
//! told not to.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::text::{flat, wrap};
use crate::base::time::relative_age;
use crate::cache::{self, index_all};
use crate::model::memory::Memory;
use crate::model::roots::Scope;
use crate::model::usage::Usage;
use crate::ops::filter::Filter;
use crate::ops::tier::{self, Kept};
use crate::ops::visibility::{self, visible_to};
use crate::output::Style;
use crate::rank::explain::Explanation;
use crate::rank::fuse::FuseParams;
use crate::rank::highlight::spans;
use crate::rank::score::{Memories, Params, Request, Signals, rank};
use crate::rank::tokenize::Tokenizer;
use crate::settings::Context;
use crate::store::state;
use crate::store::usage::Uses;

/// How many results recall gives unless asked for more or fewer (the
/// command line and the MCP tool alike).
pub const DEFAULT_LIMIT: u16 = 10;

/// What to recall, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The query, as typed (several words are one query).
    pub query: String,
    /// How many results, at most.
    pub limit: usize,
    /// Category, kind, tag, role (default: the context's role), relevance, tier.
    pub filter: Filter,
    /// Include superseded memories.
    pub all: bool,
    /// Explain how each score was made.
    pub explain: bool,
    /// Count a hit for each result shown, in its root's `.state.json`.
    pub track: bool,
    /// Only text the user trusted, as an agent gets it: an untrusted project
    /// root is left out, a project memory changed since it was trusted is
    /// named, not shown.
    pub trusted: bool,
    /// The ranking's constants (the defaults, but for tuning).
    pub params: Params,
    /// The fusion's constants, with the semantic tier.
    pub fuse: FuseParams,
}

impl Options {
    /// `query` with the defaults: ten results, tracked, everything visible
    /// to a person.
    pub fn new(query: impl Into<String>) -> Options {
        Options {
            query: query.into(),
            limit: usize::from(DEFAULT_LIMIT),
            filter: Filter::default(),
            all: false,
            explain: false,
            track: true,
            trusted: false,
            params: Params::default(),
            fuse: FuseParams::default(),
        }
    }
}

/// One result.
#[derive(Debug, Serialize)]
pub struct Found {
    pub path: String,
    pub root: Scope,
    pub title: String,
    pub summary: String,
    pub kind: String,
    pub score: f32,
    /// The words of the query, as typed, that the memory matched.
    pub matched: Vec<String>,
    /// The index terms behind them (stems, CJK pieces), for highlighting.
    #[serde(skip)]
    pub terms: Vec<String>,
    pub updated: i64,
    pub age: String,
    /// When it was last used, its tier (shown beside the age) and its
    /// relevance in effect.
    #[serde(flatten)]
    pub usage: Usage,
    pub superseded_by: Option<String>,
    pub file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    /// What a person reads as its name: the title, else the summary's
    /// first clause.
    #[serde(skip)]
    pub label: String,
    /// The summary beyond the label.
    #[serde(skip)]
    pub summary_rest: Option<String>,
}

/// The ranked results.
#[derive(Debug, Serialize)]
pub struct Report {
    pub query: String,
    pub results: Vec<Found>,
    pub warnings: Vec<String>,
    /// There were no memories to search at all.
    #[serde(skip)]
    empty: bool,
    #[serde(skip)]
    now_ms: i64,
    #[serde(skip)]
    lang: crate::base::time::Lang,
}

/// Rank and, unless told not to, count the hits. With a model configured
/// (the semantic tier), it loads on its own thread while the words are
/// ranked, and is not freed: the process ends with the answer.
pub fn run(ctx: &Context, options: &Options) -> Result<Report> {
    let kept = tier::start(ctx);
    let report = run_with(ctx, options, kept.as_ref());
    std::mem::forget(kept);
    report
}

/// [`run`] with a tier a long-lived process keeps (`mem mcp`), or none.
pub fn run_with(ctx: &Context, options: &Options, tier: Option<&Kept>) -> Result<Report> {
    if options.trusted { run_trusted(ctx, options, tier) } else { run_all(ctx, options, tier) }
}

/// [`run`] as an agent may see it: an untrusted project root is left out
/// with a note; of a trusted one, each result is read again and shown only
/// as the bytes the user trusted, and notes that quote its files are
/// replaced by a count.
fn run_trusted(ctx: &Context, args: &Options, tier: Option<&Kept>) -> Result<Report> {
    let gated = visibility::gated_dir(ctx);
    let (ctx, note, gate) = visibility::gated(ctx.clone());
    let mut report = run_all(&ctx, args, tier)?;
    if let Some(dir) = &gated {
        visibility::scrub(&mut report.warnings, dir);
    }
    report.warnings.extend(note);
    if let Some((root, gate)) = &gate {
        let mut held = Vec::new();
        report.results.retain_mut(|found| {
            if found.root != Scope::Project {
                return true;
            }
            let checked = crate::model::relpath::RelPath::parse(&found.path)
                .ok()
                .and_then(|rel| gate.memory(root, &rel));
            match checked {
                Some(m) => {
                    (found.title, found.summary, found.kind) = (m.title, m.summary, m.kind);
                    true
                }
                None => {
                    held.push(found.path.clone());
                    false
                }
            }
        });
        report.warnings.extend(visibility::held_back_note(&held));
    }
    Ok(report)
}

fn run_all(ctx: &Context, args: &Options, kept: Option<&Kept>) -> Result<Report> {
    let query = args.query.clone();
    let roots = ctx.read_roots()?;
    args.filter.check_category(&roots)?;
    let lib = index_all(&roots);
    let (docs, corpus) = (&lib.docs, &lib.corpus);
    let mut warnings: Vec<String> = lib.problems.iter().map(ToString::to_string).collect();
    let states: Vec<(Scope, Arc<state::State>)> = roots
        .iter()
        .map(|r| {
            let (s, warning) = state::load_shared(&r.dir);
            warnings.extend(warning);
            (r.scope, s)
        })
        .collect();
    let signals =
        signals(docs.len(), &states, |scope, category, slug| docs.find(scope, category, slug));
    let uses = Uses::from_states(&states, ctx.now_ms);
    let role = args.filter.role.as_ref().or(ctx.role.as_ref());
    let filter = |_, m: &Memory| {
        (args.all || !m.is_superseded()) && args.filter.matches(m, &uses) && visible_to(m, role)
    };
    let limit = args.limit;
    let request = Request {
        query: &query,
        // With the tier, a pool of lexical matches to fuse with meaning.
        limit: if kept.is_some() { limit.max(crate::rank::fuse::POOL) } else { limit },
        now_ms: ctx.now_ms,
        signals: &signals,
        filter: &filter,
        explain: args.explain,
    };
    let hits = rank(corpus, docs, &args.params, &request);
    let words_tokenizer = Tokenizer::new();
    if lib.is_damaged() && cache::distrust(&roots) {
        // A cache damaged on disk: answer again, once, from the files.
        let mut report = run_all(ctx, args, kept)?;
        report
            .warnings
            .push("the index cache was damaged; this answer was read from the files".into());
        return Ok(report);
    }
    let (tier, note) = kept.map_or((None, None), |k| k.get(ctx));
    warnings.extend(note);
    let hits = match tier {
        Some(tier) => {
            let pool = tier::Pool { hits, limit, explain: args.explain, params: args.fuse };
            tier::fused_hits(tier, &roots, &lib, &filter, &query, pool, &mut warnings)
        }
        None => {
            let mut hits = hits;
            hits.truncate(limit);
            hits
        }
    };
    let results: Vec<Found> = hits
        .into_iter()
        .filter_map(|hit| {
            let m = docs.memory(hit.doc)?;
            let root = roots
                .iter()
                .find(|r| r.scope == m.scope)
                .map(|r| r.dir.clone())
                .unwrap_or_default();
            Some(Found {
                path: m.file(),
                root: m.scope,
                title: m.title.clone(),
                summary: m.summary.clone(),
                kind: m.kind.clone(),
                score: hit.score,
                matched: typed_words(&query, &hit.matched, &words_tokenizer),
                terms: hit.matched,
                updated: m.updated,
                age: relative_age(m.updated, ctx.now_ms, ctx.lang),
                usage: uses.of(m),
                superseded_by: m.superseded_by.clone(),
                file: m.path.under(&root),
                explanation: hit.explanation,
                label: m.label(),
                summary_rest: m.summary_beyond_label().map(str::to_string),
            })
        })
        .collect();
    if args.track {
        for root in &roots {
            let paths: Vec<String> =
                results.iter().filter(|f| f.root == root.scope).map(|f| f.path.clone()).collect();
            // Hit counts are derived data: failing to save them must not hide the results.
            match state::record(&root.dir, &paths, ctx.now_ms) {
                Ok(w) => warnings.extend(w),
                Err(e) => warnings.push(format!("hit counts not saved: {e}")),
            }
        }
    }
    let empty = corpus.live_len() == 0;
    Ok(Report { query, results, warnings, empty, now_ms: ctx.now_ms, lang: ctx.lang })
}

/// Hit counts per document (`len` of them), from each root's state; empty
/// when nothing was ever hit. `find` gives the document at a scope,
/// category and slug: each hit is looked up, rather than every memory.
pub fn signals(
    len: usize,
    states: &[(Scope, Arc<state::State>)],
    find: impl Fn(Scope, &str, &str) -> Option<usize>,
) -> Vec<Signals> {
    let mut out = Vec::new();
    for (scope, state) in states {
        for (path, h) in &state.hits {
            let Some((category, file)) = path.split_once('/') else { continue };
            let slug = file.strip_suffix(".md").unwrap_or(file);
            if let Some(doc) = find(*scope, category, slug).filter(|&d| d < len) {
                if out.is_empty() {
                    out = vec![Signals::default(); len];
                }
                out[doc].hits = h.count.min(u64::from(u32::MAX)) as u32;
                out[doc].last_hit = h.last;
            }
        }
    }
    out
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let tokenizer = Tokenizer::new();
        let mut out = String::new();
        for (i, f) in self.results.iter().enumerate() {
            let matched: HashSet<String> = f.terms.iter().cloned().collect();
            let mark = |text: &str| paint(text, &matched, &tokenizer, style);
            if i > 0 {
                out.push('\n');
            }
            let mut head = format!(
                "{}  {}",
                style.path(&f.path),
                style.dim(&format!("{} · {}", f.root.name(), f.age))
            );
            if let Some(by) = &f.superseded_by {
                head.push_str(&style.dim(&format!(" · superseded by {by}")));
            }
            out.push_str(&head);
            out.push('\n');
            // The title, or the summary's first clause standing in for it;
            // then what the summary says beyond that (no line twice).
            out.push_str(&format!("  {}\n", style.bold(&mark(&flat(&f.label)))));
            let width = crate::output::width().map(|w| w.saturating_sub(4).max(20));
            for line in wrap(&flat(f.summary_rest.as_deref().unwrap_or("")), width, 2) {
                out.push_str(&format!("  {}\n", mark(&line)));
            }
            if let Some(e) = &f.explanation {
                let u = &f.usage;
                let used = relative_age(u.last_used, self.now_ms, self.lang);
                let tier = format!(
                    "{} (last used {used}), {}",
                    u.tier,
                    crate::model::usage::relevance_fact(u)
                );
                out.push_str(&format!("  {}\n", style.dim(&tier)));
                for line in e.to_string().lines() {
                    out.push_str(&format!("  {}\n", style.dim(line)));
                }
            }
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn notice(&self) -> Option<String> {
        if !self.results.is_empty() {
            return None;
        }
        let hint = if self.empty {
            "there are no memories yet: add one with `mem remember`"
        } else {
            "try other or fewer words, --all for superseded memories, or `mem list`"
        };
        Some(format!("no memory matches `{}`; {hint}", self.query))
    }

    fn exit_code(&self) -> i32 {
        if self.results.is_empty() { 1 } else { 0 }
    }
}

/// The words of `query`, as typed, that produced any of `terms`: what a
/// person reads, not the stems the index keeps (`timezones`, not `timezon`).
fn typed_words(query: &str, terms: &[String], tokenizer: &Tokenizer) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in query.split_whitespace() {
        let mut hit = false;
        tokenizer.tokens(word, |t| hit |= terms.iter().any(|m| m == t));
        if hit && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// Highlight matched terms (only when colour is on).
fn paint(text: &str, matched: &HashSet<String>, tokenizer: &Tokenizer, style: &Style) -> String {
    if !style.color {
        return text.to_string();
    }
    let mut out = String::new();
    let mut at = 0;
    for r in spans(text, matched, tokenizer) {
        out.push_str(&text[at..r.start]);
        out.push_str(&style.mark(&text[r.clone()]));
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_fits_80_columns_counting_cjk_as_two() {
        use crate::base::text::columns;
        let text = "部署脚本用 pnpm 而不是 npm，".repeat(10);
        let lines = wrap(&text, Some(76), 2);
        assert_eq!(lines.len(), 2);
        for l in &lines {
            assert!(l.chars().map(columns).sum::<usize>() <= 77, "{l}");
        }
        assert!(lines[1].ends_with('…'));
        assert_eq!(wrap("short", Some(76), 2), ["short"]);
        assert!(wrap("", Some(76), 2).is_empty());
        assert!(wrap("", None, 2).is_empty());
        let long = "word ".repeat(40);
        assert_eq!(wrap(&long, None, 2), std::slice::from_ref(&long), "no width: one line, whole");
        let flag = "run node with --max-old-space-size=4096 on CI";
        for width in 10..40 {
            let lines = wrap(flag, Some(width), 9);
            assert!(
                lines.iter().any(|l| l.contains("--max-old-space-size=4096")),
                "{width}: {lines:?}"
            );
        }
    }

    #[test]
    fn signals_follow_each_roots_hit_counts() {
        use crate::model::frontmatter::Document;
        use crate::model::relpath::RelPath;
        let memory = |path: &str, scope| {
            let doc = Document::parse("x\n").unwrap();
            Memory::from_document(RelPath::parse(path).unwrap(), scope, &doc, 0).0
        };
        let memories = [
            memory("a/x", Scope::Project),
            memory("a/x", Scope::Global),
            memory("b/y", Scope::Project),
        ];
        let mut project = state::State::default();
        project.hits.insert("a/x.md".into(), state::Hits { count: 3, last: 1 });
        let mut global = state::State::default();
        global.hits.insert("a/x.md".into(), state::Hits { count: 7, last: 1 });
        let find = |scope, category: &str, slug: &str| {
            memories.iter().position(|m| {
                m.scope == scope && m.path.category == category && m.path.slug == slug
            })
        };
        let s =
            signals(3, &[(Scope::Project, project.into()), (Scope::Global, global.into())], find);
        assert_eq!(s.iter().map(|s| s.hits).collect::<Vec<_>>(), [3, 7, 0]);
        assert!(signals(3, &[], find).is_empty());
    }

    #[test]
    fn matched_terms_are_marked_only_in_colour() {
        let matched: HashSet<String> = ["部署".to_string(), "pnpm".to_string()].into();
        let t = Tokenizer::new();
        let text = "部署脚本用 pnpm";
        assert_eq!(paint(text, &matched, &t, &Style { color: false }), text);
        assert_eq!(
            paint(text, &matched, &t, &Style { color: true }),
            "\x1b[1;31m部署\x1b[0m脚本用 \x1b[1;31mpnpm\x1b[0m"
        );
    }
}
