//! The ranker visits matches by a bounded ceiling and stops early: its top
//! is the top of every match scored, in the same order, with the same
//! scores.

use proptest::prelude::*;

use super::*;
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;

const WORDS: [&str; 6] = ["alpha", "beta", "gamma", "timeout", "cache", "deploy"];
const DAY: i64 = crate::base::time::DAY_MS;
const NOW: i64 = 2_000 * DAY;

/// One memory: its words, pinned, days since its update, a trigger.
type Spec = (Vec<usize>, bool, i64, Option<usize>);

fn memory(i: usize, (words, pinned, days, trigger): &Spec) -> Memory {
    let body: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
    let doc = Document::parse(&format!("# {}\n\n{}\n", WORDS[i % 6], body.join(" "))).unwrap();
    let path = RelPath::parse(&format!("c{}/m{i}", i % 3)).unwrap();
    let scope = if i % 5 == 4 { Scope::Global } else { Scope::Project };
    let mut m = Memory::from_document(path, scope, &doc, 0).0;
    m.pinned = *pinned;
    m.updated = NOW - days * DAY / 3;
    m.load_when = trigger.iter().map(|&t| format!("{} {}", WORDS[t], WORDS[(t + 1) % 6])).collect();
    m
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec(0..WORDS.len(), 1..8),
        any::<bool>(),
        0i64..600,
        prop::option::of(0..WORDS.len()),
    )
}

proptest! {
    #[test]
    fn the_top_visited_by_ceiling_is_the_top_of_every_match(
        specs in prop::collection::vec(spec(), 1..48),
        hits in prop::collection::vec((0u32..6, 0i64..300), 48),
        query in prop::collection::vec(0..WORDS.len(), 1..4),
        limit in 0usize..8,
        hidden in 1usize..7,
        (recency, half_life, tiers) in (0f32..0.6, -5f64..90.0, any::<bool>()),
        (pinned, trigger) in (0f32..0.6, 0f32..6.0),
    ) {
        let memories: Vec<Memory> = specs.iter().enumerate().map(|(i, s)| memory(i, s)).collect();
        let corpus = Corpus::build(&memories);
        // Statistics read into memory change nothing.
        let mut marked = Corpus::build(&memories);
        marked.keep_in_memory();
        let signals: Vec<Signals> = hits
            .iter()
            .take(memories.len())
            .map(|&(hits, days)| Signals { hits, last_hit: if hits > 0 { NOW - days * DAY } else { 0 } })
            .collect();
        let params = Params {
            recency,
            half_life_days: half_life,
            recency_by: if tiers { Recency::Tiers } else { Recency::HalfLife },
            pinned,
            trigger,
            ..Params::default()
        };
        let query: Vec<&str> = query.iter().map(|&w| WORDS[w]).collect();
        let query = query.join(" ");
        let filter = |d: usize, _: &Memory| d % hidden != hidden - 1;
        let ranked = |corpus: &Corpus, limit| {
            let req = Request {
                query: &query,
                limit,
                now_ms: NOW,
                signals: &signals,
                filter: &filter,
                explain: false,
            };
            rank(corpus, &memories, &params, &req)
                .into_iter()
                .map(|h| (h.doc, h.score.to_bits(), h.matched, h.exact))
                .collect::<Vec<_>>()
        };
        // As many as there are documents: every match is scored.
        let mut every = ranked(&corpus, memories.len());
        every.truncate(limit);
        prop_assert_eq!(ranked(&corpus, limit), every.clone());
        prop_assert_eq!(ranked(&marked, limit), every);
    }
}
