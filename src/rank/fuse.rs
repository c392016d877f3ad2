//! Fusing the lexical ranking with the semantic tier's similarities.
//!
//! Each side is scaled by the query's own best: the lexical score over the
//! best lexical score, the similarity over the span from `best - spread` to
//! the best similarity (cosines of one model sit in a narrow band, so what
//! counts is how far a memory is from the best match). The fused score is
//! `lexical + weight × semantic`.
//!
//! Two rules keep the words' strongest answers where a person typed for
//! them; `benches/fusion.py` replays the alternatives (reciprocal-rank
//! fusion, a convex combination with a fixed floor, z-scores) on every
//! evaluation set and query type, and these lost least on the worst type:
//!
//! - Exact hits (a trigger fired, or a keyword query whose every term the
//!   memory has; see [`crate::rank::score::Hit::exact`]) come first, in
//!   fused order: meaning reorders and adds to them, and never pushes a
//!   memory that says the words below one that only means them.
//! - A clear lexical winner (the next match scores under `lead` of it) is
//!   passed only by a memory at least `margin` more similar to the query:
//!   a near tie in meaning does not outweigh a clear answer in words.
//!
//! Then the memories that share tags with the first result are lifted by
//! `related` × its score × how alike their tags are
//! ([`crate::rank::related`]): the second half of an answer that neither
//! words nor meaning reach. The first result keeps its place, and so do
//! the rules above.

/// How many lexical matches are fused with the similar memories.
pub const POOL: usize = 50;

/// The constants of the fusion, chosen on the evaluation sets by the worst
/// query type (see `docs/semantic.md`).
#[derive(Debug, Clone, Copy)]
pub struct FuseParams {
    pub weight: f32,
    pub spread: f32,
    /// The lexical winner is clear when the next match scores under this
    /// share of it.
    pub lead: f32,
    /// How much more similar than a clear lexical winner a memory must be
    /// to rank above it.
    pub margin: f32,
    /// How much a memory sharing all its tags with the first result is
    /// lifted, as a share of that result's score.
    pub related: f32,
    /// Whether the language offsets are taken out of the vectors before
    /// they are compared ([`crate::rank::align`]).
    pub align: bool,
}

impl Default for FuseParams {
    fn default() -> Self {
        FuseParams { weight: 1.0, spread: 0.03, lead: 0.7, margin: 0.03, related: 0.3, align: true }
    }
}

/// A lexical match.
#[derive(Debug, Clone, Copy)]
pub struct Lexical {
    pub doc: usize,
    pub score: f32,
    pub exact: bool,
}

/// Why a memory stands where it does relative to a clear lexical winner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Held {
    /// The winner itself: the next lexical match scores `ratio` of it.
    Winner { ratio: f32 },
    /// Fused above the winner, but not `margin` more similar: kept below it.
    Below { winner: usize },
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
    /// Its place in the words' order (1 = first); None when no word matched.
    pub words_rank: Option<usize>,
    pub held: Option<Held>,
    /// Lifted for sharing tags with the first result: (that result, by how much).
    pub related: Option<(usize, f32)>,
}

impl Fused {
    /// A memory neither side has scored yet.
    fn unranked(doc: usize) -> Fused {
        Fused {
            doc,
            score: 0.0,
            lexical: 0.0,
            similarity: None,
            semantic: 0.0,
            exact: false,
            words_rank: None,
            held: None,
            related: None,
        }
    }
}

/// The memories related to one (document, how alike, 0 to 1).
pub type Neighbours<'a> = &'a dyn Fn(usize) -> Vec<(usize, f32)>;

/// Fuse `lexical` matches (any order) with `similar` memories (document,
/// cosine): the best `limit`, exact hits first, then by fused score (a
/// clear lexical winner held as above, the first result's `neighbours`
/// lifted), ties by document order.
pub fn fuse(
    lexical: &[Lexical],
    similar: &[(usize, f32)],
    p: &FuseParams,
    limit: usize,
    neighbours: Neighbours,
) -> Vec<Fused> {
    let mut words: Vec<Lexical> = lexical.to_vec();
    words.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    let best_lexical = words.first().map_or(0.0, |h| h.score.max(0.0));
    let best_similarity =
        similar.iter().map(|h| h.1).filter(|s| s.is_finite()).fold(f32::MIN, f32::max);
    let spread = p.spread.max(1e-6);
    let floor = best_similarity - spread;
    let mut by_doc: std::collections::HashMap<usize, Fused> = std::collections::HashMap::new();
    for (i, h) in words.iter().enumerate() {
        let part = if best_lexical > 0.0 { h.score / best_lexical } else { 0.0 };
        let fused = Fused {
            doc: h.doc,
            score: part,
            lexical: part,
            similarity: None,
            semantic: 0.0,
            exact: h.exact,
            words_rank: Some(i + 1),
            held: None,
            related: None,
        };
        by_doc.insert(h.doc, fused);
    }
    for &(doc, sim) in similar.iter().filter(|s| s.1.is_finite()) {
        let part = p.weight * ((sim - floor) / spread).clamp(0.0, 1.0);
        let entry = by_doc.entry(doc).or_insert_with(|| Fused::unranked(doc));
        entry.similarity = Some(sim);
        entry.semantic = part;
        entry.score = entry.lexical + part;
    }
    let mut out: Vec<Fused> =
        by_doc.values().filter(|f| f.score > 0.0 || f.exact).cloned().collect();
    out.sort_by(order);
    hold_clear_winner(&mut out, &words, p);
    if lift_related(&mut out, &by_doc, p, neighbours) {
        hold_clear_winner(&mut out, &words, p);
    }
    out.truncate(limit);
    out
}

/// Exact hits first, then by score, ties by document order.
fn order(a: &Fused, b: &Fused) -> std::cmp::Ordering {
    b.exact.cmp(&a.exact).then(b.score.total_cmp(&a.score)).then(a.doc.cmp(&b.doc))
}

/// Lifts the first result's neighbours by `related` × its score × their
/// likeness, adding those not yet ranked (with their parts from `all`),
/// and orders the rest again; the first keeps its place. Whether anything
/// moved.
fn lift_related(
    out: &mut Vec<Fused>,
    all: &std::collections::HashMap<usize, Fused>,
    p: &FuseParams,
    neighbours: Neighbours,
) -> bool {
    let Some(first) = out.first() else { return false };
    let (seed, base) = (first.doc, first.score);
    if p.related <= 0.0 || base <= 0.0 {
        return false;
    }
    let mut at: std::collections::HashMap<usize, usize> =
        out.iter().enumerate().map(|(i, f)| (f.doc, i)).collect();
    let mut lifted = false;
    for (doc, like) in neighbours(seed) {
        let add = p.related * base * like.clamp(0.0, 1.0);
        if doc == seed || add <= 0.0 {
            continue;
        }
        let at = *at.entry(doc).or_insert_with(|| {
            out.push(all.get(&doc).cloned().unwrap_or_else(|| Fused::unranked(doc)));
            out.len() - 1
        });
        out[at].score += add;
        out[at].related = Some((seed, add));
        lifted = true;
    }
    if lifted {
        out[1..].sort_by(order);
    }
    lifted
}

/// Moves below a clear lexical winner every memory fused above it that is
/// not `margin` more similar, keeping their order. Exact hits keep their
/// place, as does everything when the winner has no vector.
fn hold_clear_winner(out: &mut Vec<Fused>, words: &[Lexical], p: &FuseParams) {
    let mut rest = words.iter().filter(|h| !h.exact);
    let Some(winner) = rest.next() else { return };
    let next = rest.next().map_or(0.0, |h| h.score);
    if winner.score <= 0.0 || next >= p.lead * winner.score {
        return;
    }
    let Some(at) = out.iter().position(|f| f.doc == winner.doc) else { return };
    let Some(bar) = out[at].similarity.map(|s| s + p.margin) else { return };
    let (mut above, mut below) = (Vec::new(), Vec::new());
    for mut f in out.drain(..at) {
        if f.exact || f.similarity.is_some_and(|s| s >= bar) {
            above.push(f);
        } else {
            f.held = Some(Held::Below { winner: winner.doc });
            below.push(f);
        }
    }
    let mut first = out.remove(0);
    if !below.is_empty() {
        first.held = Some(Held::Winner { ratio: next / winner.score });
    }
    let tail = std::mem::take(out);
    out.extend(above);
    out.push(first);
    out.extend(below);
    out.extend(tail);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(doc: usize, score: f32) -> Lexical {
        Lexical { doc, score, exact: false }
    }

    fn none(_: usize) -> Vec<(usize, f32)> {
        Vec::new()
    }

    #[test]
    fn the_first_results_neighbours_are_lifted_below_it() {
        let p = FuseParams { related: 0.5, ..FuseParams::default() };
        // Doc 1 is the answer; doc 7 shares its tags and nothing else; doc
        // 8 shares some, doc 2 none.
        let hits = [lex(1, 10.0), lex(2, 2.0)];
        let similar = [(1, 0.85), (2, 0.80), (7, 0.50), (8, 0.5)];
        let related =
            |seed: usize| if seed == 1 { vec![(7, 1.0), (8, 0.1), (1, 1.0)] } else { vec![] };
        let out = fuse(&hits, &similar, &p, 10, &related);
        let order: Vec<usize> = out.iter().map(|f| f.doc).collect();
        assert_eq!(order, [1, 7, 2, 8]);
        assert_eq!(out[0].related, None);
        let (seed, add) = out[1].related.expect("lifted");
        assert_eq!(seed, 1);
        assert!((add - 0.5 * out[0].score).abs() < 1e-6);
        // Without the lift, doc 7 is not there at all.
        let off = FuseParams { related: 0.0, ..p };
        let order: Vec<usize> =
            fuse(&hits, &similar, &off, 10, &related).iter().map(|f| f.doc).collect();
        assert_eq!(order, [1, 2]);
    }

    #[test]
    fn a_lifted_neighbour_does_not_pass_a_clear_lexical_winner() {
        // Doc 3 is nearest in meaning and first; doc 1 is the words' clear
        // winner. Doc 9 shares all of doc 3's tags, but has no vector: it
        // is not clearly more similar than the winner, so it stays below.
        let p = FuseParams { related: 1.0, ..FuseParams::default() };
        let hits = [lex(1, 10.0), lex(3, 2.0), lex(2, 1.0)];
        let similar = [(1, 0.81), (2, 0.5), (3, 0.86)];
        let related = |seed: usize| if seed == 3 { vec![(9, 1.0)] } else { vec![] };
        let out = fuse(&hits, &similar, &p, 10, &related);
        let order: Vec<usize> = out.iter().map(|f| f.doc).collect();
        assert_eq!(order, [3, 1, 9, 2]);
        assert_eq!(out[2].held, Some(Held::Below { winner: 1 }));
    }

    #[test]
    fn meaning_reorders_and_adds() {
        let p = FuseParams {
            weight: 1.2,
            spread: 0.1,
            lead: 0.0,
            margin: 0.0,
            ..FuseParams::default()
        };
        // Doc 1 says some words; doc 2 only means them, and is the most similar.
        let out =
            fuse(&[lex(1, 8.0), lex(3, 2.0)], &[(1, 0.80), (2, 0.90), (3, 0.70)], &p, 10, &none);
        let order: Vec<usize> = out.iter().map(|f| f.doc).collect();
        assert_eq!(order, [2, 1, 3]);
        assert!((out[0].semantic - 1.2).abs() < 1e-6 && out[0].lexical == 0.0);
        assert!((out[1].lexical - 1.0).abs() < 1e-6 && out[1].semantic.abs() < 1e-6);
        // Below the spread, similarity adds nothing: doc 3 is there by its words alone.
        assert_eq!((out[2].semantic, out[2].lexical), (0.0, 0.25));
    }

    #[test]
    fn an_exact_hit_stays_above_what_only_means_it() {
        let p = FuseParams { weight: 1.0, spread: 0.1, ..FuseParams::default() };
        let exact = Lexical { doc: 1, score: 1.0, exact: true };
        let out = fuse(&[exact, lex(3, 9.0)], &[(1, 0.5), (2, 0.95), (3, 0.9)], &p, 10, &none);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [1, 3, 2]);
    }

    #[test]
    fn without_a_lexical_match_meaning_alone_ranks() {
        let out = fuse(&[], &[(4, 0.82), (5, 0.84), (6, 0.5)], &FuseParams::default(), 2, &none);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [5, 4]);
    }

    #[test]
    fn without_similarities_the_lexical_order_is_kept() {
        let hits = [lex(2, 1.0), lex(1, 3.0), lex(9, 2.0)];
        let out = fuse(&hits, &[], &FuseParams::default(), 10, &none);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [1, 9, 2]);
    }

    #[test]
    fn a_clear_lexical_winner_is_passed_only_by_clearly_more_meaning() {
        let p = FuseParams::default();
        // Doc 1 is the words' clear winner (the next scores 0.5 of it) but
        // sits 0.035 below the best similarity. Doc 2 says fewer of the
        // words and fuses above it by meaning only 0.025 stronger; doc 3
        // is 0.035 more similar.
        let hits = [lex(1, 10.0), lex(2, 5.0), lex(3, 1.0)];
        let similar = [(1, 0.825), (2, 0.85), (3, 0.86), (4, 0.70)];
        let out = fuse(&hits, &similar, &p, 10, &none);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [3, 1, 2]);
        assert_eq!(out[1].held, Some(Held::Winner { ratio: 0.5 }));
        assert_eq!(out[2].held, Some(Held::Below { winner: 1 }));
        assert_eq!((out[0].held, out[0].words_rank, out[1].words_rank), (None, Some(3), Some(1)));
        // Without the rule, the near tie in meaning passes the words' answer.
        let loose = FuseParams { lead: 0.0, ..p };
        let order: Vec<usize> =
            fuse(&hits, &similar, &loose, 10, &none).iter().map(|f| f.doc).collect();
        assert_eq!(order, [2, 3, 1]);
    }

    #[test]
    fn a_close_lexical_race_is_left_to_the_fused_score() {
        // The next match scores 0.8 of the first: no clear winner.
        let hits = [lex(1, 10.0), lex(2, 8.0)];
        let out =
            fuse(&hits, &[(1, 0.825), (2, 0.85), (3, 0.86)], &FuseParams::default(), 10, &none);
        assert_eq!(out.iter().map(|f| f.doc).collect::<Vec<_>>(), [2, 1, 3]);
        assert!(out.iter().all(|f| f.held.is_none()));
    }
}
