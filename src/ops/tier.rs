//! The semantic tier as `recall` and `mem mcp` use it: the configured model
//! loaded once, the memories' vectors brought up to date (a few at a time),
//! and the lexical hits fused with the similar memories. Without the
//! `semantic` feature, or without a model, there is no tier and recall
//! ranks by words alone, exactly as before.

use crate::model::memory::Memory;
use crate::model::roots::Root;
use crate::rank::explain::{Explanation, FusedPart};
use crate::rank::fuse::{FuseParams, Fused, Held, Lexical};
use crate::rank::score::{Hit, Memories};
use crate::settings::{Context, ModelSetting};

/// At most this many vectors are made during one recall; the rest wait for
/// `mem model embed` (or later recalls), and rank by words meanwhile.
pub const BUDGET: usize = 64;

/// A loaded model.
#[cfg(feature = "semantic")]
pub struct Tier {
    pub model: crate::semantic::embedder::Model,
}

/// No tier in a build without the `semantic` feature.
#[cfg(not(feature = "semantic"))]
pub enum Tier {}

/// Whether a model is configured: named by `MEM_MODEL`, or installed (in a
/// build with the tier).
pub fn configured(ctx: &Context) -> bool {
    match &ctx.model {
        ModelSetting::Off => false,
        // Named: loading says why it cannot be used (in a build without the tier, too).
        ModelSetting::Named(_) => true,
        ModelSetting::Installed(dir) => {
            cfg!(feature = "semantic") && dir.join("config.json").exists()
        }
    }
}

/// The configured model, loaded, or none; a model that was named and cannot
/// be used is a warning, and recall goes on by words alone.
pub fn load(ctx: &Context) -> (Option<Tier>, Option<String>) {
    #[cfg(feature = "semantic")]
    {
        let Some(dir) = ctx.model.dir() else { return (None, None) };
        if matches!(ctx.model, ModelSetting::Installed(_)) && !dir.join("config.json").exists() {
            return (None, None);
        }
        let started = std::time::Instant::now();
        match crate::semantic::embedder::Model::load(dir) {
            Ok(model) => {
                // Logged by `mem mcp` (the command line sets up the log).
                #[cfg(feature = "cli")]
                tracing::info!(
                    "semantic model loaded from {} in {} ms",
                    dir.display(),
                    started.elapsed().as_millis()
                );
                #[cfg(not(feature = "cli"))]
                let _ = started;
                (Some(Tier { model }), None)
            }
            Err(e) => (None, Some(format!("{e}; ranked by words alone"))),
        }
    }
    #[cfg(not(feature = "semantic"))]
    {
        let note = matches!(ctx.model, ModelSetting::Named(_)).then(|| {
            "MEM_MODEL is set, but this mem was built without the semantic tier \
             (cargo install --features semantic); ranked by words alone"
                .to_string()
        });
        (None, note)
    }
}

/// Fuse `lexical` hits (document, score) with the memories most similar
/// to `query` among those `filter` keeps; makes up to [`BUDGET`] missing
/// vectors first. Warnings name what could not be done.
#[cfg(feature = "semantic")]
#[allow(clippy::too_many_arguments)]
pub fn fuse(
    tier: &Tier,
    roots: &[&Root],
    lib: &crate::cache::Library,
    filter: &dyn Fn(usize, &Memory) -> bool,
    query: &str,
    lexical: &[Lexical],
    (limit, params): (usize, &FuseParams),
    warnings: &mut Vec<String>,
) -> Vec<Fused> {
    use crate::semantic::{Known, similar};
    let model = &tier.model;
    let all: Vec<(usize, &Memory)> = (0..lib.docs.len())
        .filter(|&d| lib.corpus.is_live(d))
        .filter_map(|d| lib.docs.memory(d).map(|m| (d, m)))
        .collect();
    let eligible: Vec<(usize, &Memory)> =
        all.iter().copied().filter(|(d, m)| filter(*d, m)).collect();
    let mut known = Known::load(roots, &model.id);
    let missing: Vec<&Memory> =
        eligible.iter().map(|(_, m)| *m).filter(|m| known.get(m).is_none()).collect();
    if !missing.is_empty() {
        known.fill(model, &missing, BUDGET);
        let memories: Vec<&Memory> = all.iter().map(|(_, m)| *m).collect();
        if let Err(e) = known.save(&memories) {
            warnings.push(format!("vectors not saved: {e}"));
        }
    }
    warnings.append(&mut known.warnings);
    let similar = match similar(model, &known, query, &eligible, params.align) {
        Ok((similar, 0)) => similar,
        Ok((similar, without)) => {
            warnings.push(format!(
                "{without} memories have no vector yet and were ranked by their words alone; \
                 `mem model embed` makes them"
            ));
            similar
        }
        Err(e) => {
            warnings.push(format!("{e}; ranked by words alone"));
            Vec::new()
        }
    };
    let tags = crate::rank::related::Tags::of(eligible.iter().map(|(_, m)| m.tags.as_slice()));
    let by_doc: std::collections::HashMap<usize, &Memory> = eligible.iter().copied().collect();
    let neighbours = |seed: usize| -> Vec<(usize, f32)> {
        let Some(seed) = by_doc.get(&seed).filter(|m| !m.tags.is_empty()) else {
            return Vec::new();
        };
        let seed = tags.seed(&seed.tags);
        eligible
            .iter()
            .map(|(doc, m)| (*doc, seed.likeness(&m.tags)))
            .filter(|(_, like)| *like > 0.0)
            .collect()
    };
    crate::rank::fuse::fuse(lexical, &similar, params, limit, &neighbours)
}

/// No tier, nothing to fuse.
#[cfg(not(feature = "semantic"))]
#[allow(clippy::too_many_arguments)]
pub fn fuse(
    tier: &Tier,
    _: &[&Root],
    _: &crate::cache::Library,
    _: &dyn Fn(usize, &Memory) -> bool,
    _: &str,
    _: &[Lexical],
    _: (usize, &FuseParams),
    _: &mut Vec<String>,
) -> Vec<Fused> {
    match *tier {}
}

/// The lexical matches to fuse, how many results to keep, and whether to explain them.
pub struct Pool {
    pub hits: Vec<Hit>,
    pub limit: usize,
    pub explain: bool,
    /// The fusion's constants.
    pub params: FuseParams,
}

/// The lexical `hits` fused with meaning: the best `limit`, each scored by
/// its fused score; `--explain` shows both parts.
pub fn fused_hits(
    tier: &Tier,
    roots: &[&Root],
    lib: &crate::cache::Library,
    filter: &dyn Fn(usize, &Memory) -> bool,
    query: &str,
    Pool { hits, limit, explain, params }: Pool,
    warnings: &mut Vec<String>,
) -> Vec<Hit> {
    let lexical: Vec<Lexical> =
        hits.iter().map(|h| Lexical { doc: h.doc, score: h.score, exact: h.exact }).collect();
    let mut by_doc: std::collections::HashMap<usize, Hit> =
        hits.into_iter().map(|h| (h.doc, h)).collect();
    let path = |doc: usize| lib.docs.memory(doc).map(|m| m.file()).unwrap_or_default();
    fuse(tier, roots, lib, filter, query, &lexical, (limit, &params), warnings)
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let mut hit = by_doc.remove(&f.doc).unwrap_or(Hit {
                doc: f.doc,
                score: 0.0,
                matched: Vec::new(),
                explanation: None,
                exact: false,
            });
            if explain {
                let e = hit.explanation.get_or_insert_with(|| Explanation {
                    score: 0.0,
                    relevance: 0.0,
                    terms: Vec::new(),
                    trigger: None,
                    boosts: Vec::new(),
                    fused: None,
                });
                let held = f.held.map(|h| match h {
                    Held::Winner { ratio } => format!(
                        "held by its words: the next match scores {ratio:.2} of it (under {:.2}), \
                         so only a memory {:.2} more similar passes it",
                        params.lead, params.margin
                    ),
                    Held::Below { winner } => format!(
                        "held below {}, the words' clear answer: not {:.2} more similar than it",
                        path(winner),
                        params.margin
                    ),
                });
                let related = f.related.map(|(seed, add)| {
                    let tags = |doc: usize| {
                        lib.docs.memory(doc).map(|m| m.tags.clone()).unwrap_or_default()
                    };
                    let (own, first) = (tags(f.doc), tags(seed));
                    let first: std::collections::HashSet<&str> =
                        first.iter().map(String::as_str).collect();
                    let mut seen = std::collections::HashSet::new();
                    let shared: Vec<&str> = own
                        .iter()
                        .map(String::as_str)
                        .filter(|t| first.contains(t) && seen.insert(*t))
                        .collect();
                    let more = shared.len().saturating_sub(5);
                    let mut named = shared.iter().take(5).copied().collect::<Vec<_>>().join(", ");
                    if more > 0 {
                        named.push_str(&format!(" and {more} more"));
                    }
                    format!(
                        "lifted {add:.2} for sharing tags ({named}) with {}, the first result",
                        path(seed)
                    )
                });
                e.fused = Some(FusedPart {
                    score: f.score,
                    words: f.lexical,
                    meaning: f.semantic,
                    similarity: f.similarity,
                    words_rank: f.words_rank,
                    rank: i + 1,
                    exact: f.exact,
                    held,
                    related,
                });
            }
            hit.score = f.score;
            hit
        })
        .collect()
}

/// The tier of a long-lived process (`mem mcp`): loaded once, on first
/// use or ahead of it, and kept.
#[derive(Clone, Default)]
pub struct Kept(std::sync::Arc<std::sync::OnceLock<(Option<Tier>, Option<String>)>>);

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept")
    }
}

/// The configured tier, loading on its own thread from now on; none when
/// no model is configured.
pub fn start(ctx: &Context) -> Option<Kept> {
    configured(ctx).then(|| {
        let kept = Kept::default();
        let (loading, ctx) = (kept.clone(), ctx.clone());
        std::thread::spawn(move || drop(loading.get(&ctx)));
        kept
    })
}

impl Kept {
    /// The tier, loaded by the first caller (others wait for it), and the
    /// warning its loading gave.
    pub fn get(&self, ctx: &Context) -> (Option<&Tier>, Option<String>) {
        let (tier, note) = self.0.get_or_init(|| load(ctx));
        (tier.as_ref(), note.clone())
    }
}
