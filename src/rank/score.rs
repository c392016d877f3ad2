//! BM25F over weighted fields, a bonus for `load_when` triggers found in the
//! query, and gentle boosts for pinned, often-hit and recent memories.
//!
//! Every number that shapes the ranking lives in [`Params`], so `--explain`
//! and the evaluation harness see the same scorer the command uses.

use std::collections::HashSet;

use crate::memory::Memory;
use crate::rank::corpus::{Corpus, FIELDS, Field, Posting};
use crate::rank::explain::{BoostPart, Explanation, TermPart, TriggerPart};
use crate::rank::stopwords::{is_function_char, is_stopword};
use crate::rank::tokenize::Kind;

const DAY_MS: f64 = 86_400_000.0;

/// The scorer's constants.
#[derive(Debug, Clone)]
pub struct Params {
    pub k1: f32,
    /// Length normalisation per field.
    pub b: [f32; FIELDS],
    /// Weight per field (title, summary, highlight, load_when, tags, path, body).
    pub weight: [f32; FIELDS],
    /// Summary weight in place of `weight[summary]` when the summary was not
    /// written but taken from the body's first paragraph, which is already
    /// scored as body.
    pub derived_summary: f32,
    /// Scale of a word-pair term (`support group`), relative to a word.
    pub pair: f32,
    /// Scale of a CJK bigram, relative to a Latin word: a word is a whole
    /// unit of meaning, a bigram one of several overlapping pieces of text.
    pub bigram: f32,
    /// Scale of a CJK bigram with a function character (`的公`, `是类`),
    /// relative to a bigram.
    pub function_bigram: f32,
    /// Scale of a single CJK character, relative to a bigram.
    pub unigram: f32,
    /// Exponent of query coverage (share of the query's idf a memory matched).
    pub coverage: f32,
    /// Added when a whole `load_when` trigger occurs in the query.
    pub trigger: f32,
    /// Multiplier added for a pinned memory.
    pub pinned: f32,
    /// Multiplier added per natural-log unit of hits, and its cap.
    pub hits: f32,
    pub hits_cap: f32,
    /// Multiplier added for a memory updated just now, halving every `half_life_days`.
    pub recency: f32,
    pub half_life_days: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k1: 1.0,
            b: [0.3, 0.5, 0.3, 0.2, 0.2, 0.3, 0.85],
            weight: [3.0, 2.0, 2.0, 3.0, 2.0, 1.0, 1.0],
            derived_summary: 1.0,
            pair: 0.25,
            bigram: 0.625,
            function_bigram: 0.6,
            unigram: 0.3,
            coverage: 0.0,
            trigger: 4.0,
            pinned: 0.1,
            hits: 0.04,
            hits_cap: 0.2,
            recency: 0.1,
            half_life_days: 30.0,
        }
    }
}

/// Per-memory signals that live outside the Markdown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signals {
    pub hits: u32,
}

/// One ranked memory.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Index into the memories the corpus was built from.
    pub doc: usize,
    pub score: f32,
    /// The query terms it matched.
    pub matched: Vec<String>,
    pub explanation: Option<Explanation>,
}

/// What to rank and how many to keep.
pub struct Request<'a> {
    pub query: &'a str,
    pub limit: usize,
    pub now_ms: i64,
    /// Signals per memory (same order as the memories); empty means none.
    pub signals: &'a [Signals],
    /// Which memories may be returned.
    pub filter: &'a dyn Fn(usize) -> bool,
    pub explain: bool,
}

/// Most query terms scored; a longer query keeps its first ones.
const MAX_TERMS: usize = 256;

/// A query's terms with their postings resolved once.
struct Term<'c> {
    token: String,
    idf: f32,
    postings: std::borrow::Cow<'c, [Posting]>,
}

impl Term<'_> {
    /// The term's counts in `doc`, if it occurs there.
    fn posting(&self, doc: usize) -> Option<&Posting> {
        let i = self.postings.binary_search_by_key(&(doc as u32), |p| p.doc).ok()?;
        Some(&self.postings[i])
    }
}

/// Rank `memories` (the ones `corpus` was built from) for a request.
pub fn rank(corpus: &Corpus, memories: &[Memory], params: &Params, req: &Request) -> Vec<Hit> {
    let n = corpus.len();
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
    tokens.extend(compounds);
    let query_set: HashSet<String> = tokens.iter().cloned().collect();
    // Question and function words count only when nothing else matches, so a
    // query never comes back empty while a memory shares a word with it.
    let content: Vec<String> = tokens.iter().filter(|t| !is_stopword(t)).cloned().collect();
    let mut terms = make_terms(content);
    if terms.iter().all(|t| t.postings.is_empty()) {
        terms = make_terms(tokens);
    }
    let mut scores = vec![0f32; n];
    let mut covered = vec![0f32; n];
    for term in &terms {
        for p in term.postings.iter() {
            let d = p.doc as usize;
            scores[d] += term_score(corpus, params, term.idf, d, &p.tf).0;
            covered[d] += term.idf;
        }
    }
    let total_idf: f32 = terms.iter().map(|t| t.idf).sum();
    if params.coverage > 0.0 && total_idf > 0.0 {
        for d in 0..n {
            scores[d] *= (covered[d] / total_idf).powf(params.coverage);
        }
    }
    let mut hits: Vec<(usize, f32)> = (0..n)
        .filter(|&d| scores[d] > 0.0 && (req.filter)(d))
        .map(|d| (d, final_score(corpus, memories, params, req, &query_set, d, scores[d]).0))
        .collect();
    hits.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| memories[a.0].scope.cmp(&memories[b.0].scope))
            .then_with(|| memories[a.0].path.cmp(&memories[b.0].path))
    });
    hits.truncate(req.limit);
    hits.into_iter()
        .map(|(d, score)| Hit {
            doc: d,
            score,
            matched: terms
                .iter()
                .filter(|t| t.posting(d).is_some())
                .map(|t| t.token.clone())
                .collect(),
            explanation: req
                .explain
                .then(|| explain(corpus, memories, params, req, &terms, &query_set, d)),
        })
        .collect()
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
    memories: &[Memory],
    p: &Params,
    req: &Request,
    query: &HashSet<String>,
    doc: usize,
    relevance: f32,
) -> (f32, Option<TriggerPart>, Vec<BoostPart>) {
    let m = &memories[doc];
    let trigger = trigger_of(corpus, &memories[doc], query)
        .map(|t| TriggerPart { trigger: t.to_string(), score: p.trigger });
    let base = relevance + trigger.as_ref().map_or(0.0, |t| t.score);
    let mut boosts = Vec::new();
    if m.pinned {
        boosts.push(("pinned", "pinned: true".to_string(), p.pinned));
    }
    let hits = req.signals.get(doc).map_or(0, |s| s.hits);
    if hits > 0 {
        let factor = (p.hits * (1.0 + hits as f32).ln()).min(p.hits_cap);
        boosts.push((
            "hits",
            if hits == 1 { "1 hit".to_string() } else { format!("{hits} hits") },
            factor,
        ));
    }
    let age_days = ((req.now_ms - m.updated).max(0) as f64) / DAY_MS;
    let decay = 0.5f64.powf(age_days / p.half_life_days) as f32;
    if decay * p.recency >= 0.001 {
        boosts.push(("recency", format!("updated {age_days:.0} days ago"), p.recency * decay));
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
    memories: &[Memory],
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
    let (score, trigger, boosts) = final_score(corpus, memories, p, req, query, doc, relevance);
    Explanation { score, relevance, terms: parts, trigger, boosts }
}
