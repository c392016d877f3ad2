//! BM25F over weighted fields, a bonus for `load_when` triggers found in the
//! query, and gentle boosts for pinned, often-hit and recent memories.
//!
//! Every number that shapes the ranking lives in [`Params`] (see
//! [`crate::rank::params`], with the boosts), so `--explain` and the
//! evaluation harness see the same scorer the command uses.

use std::collections::{BinaryHeap, HashSet};

use crate::model::memory::Memory;
use crate::model::usage::Tier;
use crate::rank::ceiling::{Bounds, Ceiling};
use crate::rank::corpus::{Corpus, FIELDS, Field, Posting};
use crate::rank::explain::{BoostPart, Explanation, TermPart, TriggerPart};
pub use crate::rank::params::{Params, Recency, Signals};
use crate::rank::params::{Used, boost_factors};
use crate::rank::stopwords::{is_function_char, is_stopword};
use crate::rank::tokenize::Kind;

/// One ranked memory.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Index into the memories the corpus was built from.
    pub doc: usize,
    pub score: f32,
    /// The query terms it matched.
    pub matched: Vec<String>,
    pub explanation: Option<Explanation>,
    /// An exact hit: a `load_when` trigger fired, or the query is a keyword
    /// (one or two words) and the memory has every one of its terms. The
    /// semantic tier never ranks a memory above an exact hit.
    pub exact: bool,
}

/// Where the ranker finds the memory of a document: a slice, or a store
/// that reads records only when asked (the cache), so that ranking reads
/// the few memories that can make the top, not all of them.
pub trait Memories {
    /// The memory of `doc`; None when it cannot be read (a damaged cache).
    fn memory(&self, doc: usize) -> Option<&Memory>;
}

impl Memories for [Memory] {
    fn memory(&self, doc: usize) -> Option<&Memory> {
        self.get(doc)
    }
}

impl Memories for Vec<Memory> {
    fn memory(&self, doc: usize) -> Option<&Memory> {
        self.get(doc)
    }
}

/// What to rank and how many to keep.
pub struct Request<'a> {
    pub query: &'a str,
    pub limit: usize,
    pub now_ms: i64,
    /// Signals per memory (same order as the memories); empty means none.
    pub signals: &'a [Signals],
    /// Which memories may be returned (dead documents never are).
    pub filter: &'a dyn Fn(usize, &Memory) -> bool,
    pub explain: bool,
}

/// Most query terms scored; a longer query keeps its first ones.
const MAX_TERMS: usize = 256;

/// A query's terms with their postings resolved once.
struct Term<'c> {
    token: String,
    idf: f32,
    postings: crate::rank::corpus::Postings<'c>,
}

impl Term<'_> {
    /// The term's counts in `doc`, if it occurs there.
    fn posting(&self, doc: usize) -> Option<&Posting> {
        let i = self.postings.binary_search_by_key(&(doc as u32), |p| p.doc).ok()?;
        Some(&self.postings[i])
    }
}

/// Rank `memories` (the ones `corpus` was built from) for a request.
pub fn rank<M: Memories + ?Sized>(
    corpus: &Corpus,
    memories: &M,
    params: &Params,
    req: &Request,
) -> Vec<Hit> {
    let mut tokens = corpus.token_list(req.query);
    let mut seen = HashSet::new();
    tokens.retain(|t| seen.insert(t.clone()));
    let make_terms = |list: Vec<String>| -> Vec<Term> {
        list.into_iter()
            .take(MAX_TERMS)
            .map(|token| {
                let postings = corpus.postings(&token);
                let df = postings.len() as f32;
                let live = corpus.live_len() as f32;
                let idf = scale(params, &token) * (1.0 + (live - df + 0.5) / (df + 0.5)).ln();
                Term { token, idf, postings }
            })
            .collect()
    };
    // Two query words also look for their compound: `roll back` finds `rollback`.
    let compounds: Vec<String> = tokens
        .iter()
        .filter(|t| t.contains(' '))
        .map(|t| t.replace(' ', ""))
        .filter(|c| !tokens.contains(c))
        .collect();
    tokens.extend(compounds.iter().cloned());
    let query_set: HashSet<String> = tokens.iter().cloned().collect();
    // Question and function words count only when nothing else matches, so a
    // query never comes back empty while a memory shares a word with it.
    let content: Vec<String> = tokens.iter().filter(|t| !is_stopword(t)).cloned().collect();
    let mut terms = make_terms(content);
    if terms.iter().all(|t| t.postings.is_empty()) {
        terms = make_terms(tokens);
    }
    let (scores, matched) = lexical_scores(corpus, params, &terms);
    let bounds = Bounds::new(corpus, params, &scores, &query_set, (req.signals, req.now_ms));
    let top = top_by_ceiling(corpus, memories, (params, req), &query_set, &bounds, &matched);
    // See `Hit::exact`: a keyword query is one or two words.
    let words: Vec<&Term> =
        terms.iter().filter(|t| !t.token.contains(' ') && !compounds.contains(&t.token)).collect();
    let keyword = req.query.split_whitespace().count() <= 2 && !words.is_empty();
    top.into_iter()
        .map(|(d, score, m)| Hit {
            doc: d,
            score,
            matched: terms
                .iter()
                .filter(|t| t.posting(d).is_some())
                .map(|t| t.token.clone())
                .collect(),
            explanation: req
                .explain
                .then(|| explain(corpus, m, params, req, &terms, &query_set, d)),
            exact: trigger_of(corpus, m, &query_set).is_some()
                || (keyword && words.iter().all(|t| t.posting(d).is_some())),
        })
        .collect()
}

/// The `req.limit` best of the `matched` documents by final score, best
/// first, with their scores. Boosts and a trigger can only raise a
/// relevance so far: the matches are visited by that ceiling, worked out in
/// stages as each reaches the top, and the visit stops once none left can
/// make the top, so only those memories are read.
fn top_by_ceiling<'m, M: Memories + ?Sized>(
    corpus: &Corpus,
    memories: &'m M,
    (params, req): (&Params, &Request),
    query_set: &HashSet<String>,
    bounds: &Bounds,
    matched: &[u32],
) -> Vec<(usize, f32, &'m Memory)> {
    // A heap: only the few matches visited are ever put in order.
    let mut candidates: BinaryHeap<Ceiling> = matched
        .iter()
        .map(|&d| d as usize)
        .filter(|&d| bounds.relevance(d) > 0.0 && corpus.is_live(d))
        .map(|d| bounds.first(d))
        .collect();
    let order = |a: &(usize, f32, &Memory), b: &(usize, f32, &Memory)| {
        b.1.total_cmp(&a.1)
            .then_with(|| a.2.scope.cmp(&b.2.scope))
            .then_with(|| a.2.path.cmp(&b.2.path))
    };
    let mut top: Vec<(usize, f32, &'m Memory)> = Vec::new();
    while let Some(ceiling) = candidates.pop() {
        let full = top.len() == req.limit;
        if req.limit == 0 || (full && ceiling.most < top[req.limit - 1].1) {
            break;
        }
        if let Some(finer) = bounds.finer(&ceiling) {
            candidates.push(finer);
            continue;
        }
        let d = ceiling.doc;
        let Some(m) = memories.memory(d) else { continue };
        if !(req.filter)(d, m) {
            continue;
        }
        let relevance = bounds.relevance(d);
        let hit = (d, final_score(corpus, m, params, req, query_set, d, relevance).0, m);
        let at = top.partition_point(|t| order(t, &hit).is_lt());
        top.insert(at, hit);
        top.truncate(req.limit);
    }
    top
}

/// Each document's lexical score: the sum of its terms' scores, scaled by
/// the share of the query's weight (idf) it covers; and the documents any
/// term matched, each once (the rest score 0 and are never visited).
fn lexical_scores(corpus: &Corpus, params: &Params, terms: &[Term]) -> (Vec<f32>, Vec<u32>) {
    let n = corpus.len();
    let total_idf: f32 = terms.iter().map(|t| t.idf).sum();
    // One term covers all of the query wherever it matches: nothing to scale.
    let coverage = params.coverage > 0.0 && total_idf > 0.0 && terms.len() > 1;
    let mut scores = vec![0f32; n];
    let mut covered = vec![0f32; if coverage { n } else { 0 }];
    let mut seen = vec![false; n];
    let mut matched = Vec::new();
    for term in terms {
        for p in term.postings.iter() {
            let d = p.doc as usize;
            if !std::mem::replace(&mut seen[d], true) {
                matched.push(p.doc);
            }
            scores[d] += term_score(corpus, params, term.idf, d, &p.tf).0;
            if coverage {
                covered[d] += term.idf;
            }
        }
    }
    if coverage {
        for &d in &matched {
            let d = d as usize;
            scores[d] *= (covered[d] / total_idf).powf(params.coverage);
        }
    }
    (scores, matched)
}

/// How much a query token counts, relative to a Latin word, by its kind.
fn scale(p: &Params, token: &str) -> f32 {
    match Kind::of(token) {
        Kind::Word => 1.0,
        Kind::Pair => p.pair,
        Kind::Bigram if token.chars().any(is_function_char) => p.bigram * p.function_bigram,
        Kind::Bigram => p.bigram,
        Kind::Unigram => p.bigram * p.unigram,
    }
}

/// BM25F for one term in one document: the score and each field's share.
fn term_score(
    corpus: &Corpus,
    p: &Params,
    idf: f32,
    doc: usize,
    tf: &[u16; FIELDS],
) -> (f32, [f32; FIELDS]) {
    let lengths = corpus.lengths(doc);
    let avg = corpus.avg_lengths();
    let mut weight = p.weight;
    if corpus.derived_summary(doc) {
        weight[Field::Summary as usize] = p.derived_summary;
    }
    let mut parts = [0f32; FIELDS];
    for f in 0..FIELDS {
        if tf[f] > 0 {
            let norm = 1.0 - p.b[f] + p.b[f] * lengths[f] as f32 / avg[f];
            parts[f] = weight[f] * tf[f] as f32 / norm;
        }
    }
    let weighted: f32 = parts.iter().sum();
    if weighted == 0.0 {
        return (0.0, parts);
    }
    let score = idf * weighted * (p.k1 + 1.0) / (p.k1 + weighted);
    for part in &mut parts {
        *part *= score / weighted;
    }
    (score, parts)
}

/// The first `load_when` trigger of `memory` whose tokens all occur in the
/// query. Tokenized here, for the few memories that matched, rather than
/// for every memory up front.
fn trigger_of<'m>(corpus: &Corpus, memory: &'m Memory, query: &HashSet<String>) -> Option<&'m str> {
    memory
        .load_when
        .iter()
        .find(|t| {
            let tokens = corpus.token_list(t);
            !tokens.is_empty() && tokens.iter().all(|tok| query.contains(tok))
        })
        .map(String::as_str)
}

/// Relevance plus trigger bonus, times (1 + boosts). Returns the score and the boosts.
fn final_score(
    corpus: &Corpus,
    m: &Memory,
    p: &Params,
    req: &Request,
    query: &HashSet<String>,
    doc: usize,
    relevance: f32,
) -> (f32, Option<TriggerPart>, Vec<BoostPart>) {
    let trigger = trigger_of(corpus, m, query)
        .map(|t| TriggerPart { trigger: t.to_string(), score: p.trigger });
    let base = relevance + trigger.as_ref().map_or(0.0, |t| t.score);
    let mut boosts = Vec::new();
    let signals = req.signals.get(doc).copied().unwrap_or_default();
    let hits = signals.hits;
    let used = Used { updated: m.updated, last_hit: signals.last_hit, now_ms: req.now_ms };
    let [pinned, hit, recent] = boost_factors(p, m.pinned, hits, used);
    if m.pinned {
        boosts.push(("pinned", "pinned: true".to_string(), pinned));
    }
    if hits > 0 {
        let detail = if hits == 1 { "1 hit".to_string() } else { format!("{hits} hits") };
        boosts.push(("hits", detail, hit));
    }
    if recent != 0.0 {
        let detail = match p.recency_by {
            Recency::HalfLife => {
                let age_days = (req.now_ms.saturating_sub(m.updated).max(0) as f64)
                    / crate::base::time::DAY_MS as f64;
                format!("updated {age_days:.0} days ago")
            }
            Recency::Tiers => {
                let days = used.days();
                format!("{}: used {days} days ago", Tier::of_days(days))
            }
        };
        boosts.push(("recency", detail, recent));
    }
    let factor: f32 = boosts.iter().map(|b| b.2).sum();
    let parts = boosts
        .into_iter()
        .map(|(name, detail, f)| BoostPart { name, detail, score: base * f })
        .collect();
    (base * (1.0 + factor), trigger, parts)
}

fn explain(
    corpus: &Corpus,
    m: &Memory,
    p: &Params,
    req: &Request,
    terms: &[Term],
    query: &HashSet<String>,
    doc: usize,
) -> Explanation {
    let mut parts = Vec::new();
    let mut relevance = 0.0;
    for term in terms {
        let Some(posting) = term.posting(doc) else { continue };
        let (score, shares) = term_score(corpus, p, term.idf, doc, &posting.tf);
        relevance += score;
        let mut fields: Vec<(&'static str, f32)> = Field::ALL
            .iter()
            .zip(shares)
            .filter(|(_, s)| *s > 0.0)
            .map(|(f, s)| (f.name(), s))
            .collect();
        fields.sort_by(|a, b| b.1.total_cmp(&a.1));
        parts.push(TermPart { term: term.token.clone(), idf: term.idf, score, fields });
    }
    let (score, trigger, boosts) = final_score(corpus, m, p, req, query, doc, relevance);
    Explanation { score, relevance, terms: parts, trigger, boosts, fused: None }
}

#[cfg(test)]
mod tests;
