//! Fusing the lexical ranking with the semantic tier's similarities.
//!
//! Each side is scaled by the query's own best: the lexical score over the
//! best lexical score, the similarity over the span from `best - spread` to
//! the best similarity (cosines of one model sit in a narrow band, so what
//! counts is how far a memory is from the best match). The fused score is
//! `lexical + weight × semantic`.
//!
//! Exact hits (a trigger fired, or a keyword query whose every term the
//! memory has; see [`crate::rank::score::Hit::exact`]) come first, in fused
//! order: meaning reorders and adds to them, and never pushes a memory that
//! says the words below one that only means them.

/// How many lexical matches are fused with the similar memories.
pub const POOL: usize = 50;

/// The constants of the fusion, tuned on the public evaluation sets.
#[derive(Debug, Clone, Copy)]
pub struct FuseParams {
    pub weight: f32,
    pub spread: f32,
}

impl Default for FuseParams {
    fn default() -> Self {
        FuseParams { weight: 1.0, spread: 0.05 }
    }
}

/// A lexical match.
#[derive(Debug, Clone, Copy)]
pub struct Lexical {
    pub doc: usize,
    pub score: f32,
    pub exact: bool,
}

/// A memory's fused score and its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub doc: usize,
    pub score: f32,
    /// The lexical part: the lexical score over the query's best.
    pub lexical: f32,
    /// The memory's cosine similarity to the query, when it has a vector.
    pub similarity: Option<f32>,
    /// The semantic part added to `lexical`.
    pub semantic: f32,
    pub exact: bool,
}

/// Fuse `lexical` matches (any order) with `similar` memories (document,
/// cosine): the best `limit`, exact hits first, then by fused score, ties
/// by document order.
pub fn fuse(
    lexical: &[Lexical],
    similar: &[(usize, f32)],
    p: &FuseParams,
    limit: usize,
) -> Vec<Fused> {
    let best_lexical = lexical.iter().map(|h| h.score).fold(0f32, f32::max);
    let best_similarity =
        similar.iter().map(|h| h.1).filter(|s| s.is_finite()).fold(f32::MIN, f32::max);
    let spread = p.spread.max(1e-6);
    let floor = best_similarity - spread;
    let mut by_doc: std::collections::HashMap<usize, Fused> = std::collections::HashMap::new();
    for h in lexical {
        let part = if best_lexical > 0.0 { h.score / best_lexical } else { 0.0 };
        let fused = Fused {
            doc: h.doc,
            score: part,
            lexical: part,
            similarity: None,
            semantic: 0.0,
            exact: h.exact,
        };
        by_doc.insert(h.doc, fused);
    }
    for &(doc, sim) in similar.iter().filter(|s| s.1.is_finite()) {
        let part = p.weight * ((sim - floor) / spread).clamp(0.0, 1.0);
        let entry = by_doc.entry(doc).or_insert(Fused {
            doc,
            score: 0.0,
            lexical: 0.0,
            similarity: None,
            semantic: 0.0,
            exact: false,
        });
        entry.similarity = Some(sim);
        entry.semantic = part;
        entry.score = entry.lexical + part;
    }
    let mut out: Vec<Fused> = by_doc.into_values().filter(|f| f.score > 0.0 || f.exact).collect();
    out.sort_by(|a, b| {
        b.exact.cmp(&a.exact).then(b.score.total_cmp(&a.score)).then(a.doc.cmp(&b.doc))
    });
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(doc: usize, score: f32) -> Lexical {
        Lexical { doc, score, exact: false }
    }

    #[test]
    fn meaning_reorders_and_adds() {
        let p = FuseParams { weight: 1.2, spread: 0.1 };
        // Doc 1 says some words; doc 2 only means them, and is the most similar.
        let out = fuse(&[lex(1, 8.0), lex(3, 2.0)], &[(1, 0.80), (2, 0.90), (3, 0.70)], &p, 10);
        let order: Vec<usize> = out.iter().map(|f| f.doc).collect();
        assert_eq!(order, [2, 1, 3]);
        assert!((out[0].semantic - 1.2).abs() < 1e-6 && out[0].lexical == 0.0);
        assert!((out[1].lexical - 1.0).abs() < 1e-6 && out[1].semantic.abs() < 1e-6);
        // Below the spread, similarity adds nothing: doc 3 is there by its words alone.
        assert_eq!((out[2].semantic, out[2].lexical), (0.0, 0.25));
    }

    #[test]
    fn an_exact_hit_stays_above_what_only_means_it() {
        let p = FuseParams { weight: 1.0, spread: 0.1 };
        let exact = Lexical { doc: 1, score: 1.0, exact: true };
        let out = fuse(&[exact, lex(3, 9.0)], &[(1, 0.5), (2, 0.95), (3, 0.9)], &p, 10);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [1, 3, 2]);
    }

    #[test]
    fn without_a_lexical_match_meaning_alone_ranks() {
        let out = fuse(&[], &[(4, 0.81), (5, 0.84), (6, 0.5)], &FuseParams::default(), 2);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [5, 4]);
    }

    #[test]
    fn without_similarities_the_lexical_order_is_kept() {
        let hits = [lex(2, 1.0), lex(1, 3.0), lex(9, 2.0)];
        let out = fuse(&hits, &[], &FuseParams::default(), 10);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [1, 9, 2]);
    }
}
