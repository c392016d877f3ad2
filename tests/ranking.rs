//! The scorer through the library: the cases the product promises.

use mem::model::frontmatter::Document;
use mem::model::memory::Memory;
use mem::model::relpath::RelPath;
use mem::model::roots::Scope;
use mem::rank::corpus::Corpus;
use mem::rank::score::{Params, Recency, Request, Signals, rank};

const NOW: i64 = 1_795_996_800_000;

fn memory(path: &str, text: &str) -> Memory {
    let doc = Document::parse(text).unwrap();
    Memory::from_document(RelPath::parse(path).unwrap(), Scope::Project, &doc, NOW).0
}

fn ranked(memories: &[Memory], query: &str) -> Vec<String> {
    ranked_with(memories, query, &[])
}

fn ranked_with(memories: &[Memory], query: &str, signals: &[Signals]) -> Vec<String> {
    ranked_by(memories, query, signals, &Params::default())
}

fn ranked_by(
    memories: &[Memory],
    query: &str,
    signals: &[Signals],
    params: &Params,
) -> Vec<String> {
    let corpus = Corpus::build(memories);
    let filter = |_, m: &Memory| !m.is_superseded();
    let req = Request { query, limit: 10, now_ms: NOW, signals, filter: &filter, explain: false };
    rank(&corpus, memories, params, &req).into_iter().map(|h| memories[h.doc].file()).collect()
}

fn demo() -> Vec<Memory> {
    vec![
        memory("rules/pnpm", "# 包管理\n\n部署脚本用 pnpm 而不是 npm。\n"),
        memory("facts/db", "# 数据库\n\nPostgreSQL 连接池上限 20。\n"),
        memory("pitfalls/lock", "# 迁移\n\n迁移会锁表，先在 staging 演练。\n"),
        memory(
            "facts/deploys",
            "# Deploys\n\nWe deployed twice on Friday; deploying needs approval.\n",
        ),
    ]
}

#[test]
fn two_character_word_inside_a_longer_run() {
    assert_eq!(ranked(&demo(), "部署")[0], "rules/pnpm.md");
}

#[test]
fn one_character_query_finds_the_text_containing_it() {
    assert_eq!(ranked(&demo(), "锁"), ["pitfalls/lock.md"]);
}

#[test]
fn english_word_forms_are_conflated() {
    assert_eq!(ranked(&demo(), "deployment")[..1], ["facts/deploys.md"]);
    assert_eq!(ranked(&demo(), "Deploy")[..1], ["facts/deploys.md"]);
}

#[test]
fn full_width_query_matches_ascii_text() {
    assert_eq!(ranked(&demo(), "ＰＯＳＴＧＲＥＳＱＬ")[0], "facts/db.md");
}

#[test]
fn nothing_in_common_gives_nothing() {
    assert!(ranked(&demo(), "kubernetes 集群").is_empty());
}

#[test]
fn a_load_when_trigger_beats_body_matches() {
    let memories = vec![
        memory("facts/a", "# Cache\n\ncache cache cache invalidation cache\n"),
        memory(
            "facts/b",
            "---\nload_when: [cache warmup]\n---\n# Warmup\n\nRun the warmup job after deploys.\n",
        ),
    ];
    assert_eq!(ranked(&memories, "how do I do a cache warmup")[0], "facts/b.md");
}

#[test]
fn superseded_memories_are_left_out() {
    let memories = vec![
        memory("decisions/old", "---\nsuperseded_by: decisions/new.md\n---\nWe use Prisma ORM.\n"),
        memory("decisions/new", "---\nsupersedes: decisions/old.md\n---\nWe use Drizzle ORM.\n"),
    ];
    assert_eq!(ranked(&memories, "ORM"), ["decisions/new.md"]);
}

#[test]
fn hits_and_pins_are_gentle_boosts() {
    let same = "# Note\n\nthe retry policy for webhooks\n";
    let memories = vec![memory("facts/a", same), memory("facts/b", same)];
    assert_eq!(
        ranked(&memories, "retry policy"),
        ["facts/a.md", "facts/b.md"],
        "ties break by path"
    );
    let signals = [Signals { hits: 0, last_hit: 0 }, Signals { hits: 5, last_hit: NOW }];
    assert_eq!(ranked_with(&memories, "retry policy", &signals), ["facts/b.md", "facts/a.md"]);
    // A strong match is not overturned by a pin.
    let memories = vec![
        memory("facts/pinned", "---\npinned: true\n---\nwebhooks exist\n"),
        memory("facts/match", "# Retry policy\n\nthe retry policy for webhooks: retry policy\n"),
    ];
    assert_eq!(ranked(&memories, "retry policy webhooks")[0], "facts/match.md");
}

#[test]
fn the_recency_boost_weighs_the_update_or_the_tier_of_the_last_use() {
    let day = 86_400_000;
    let old =
        |path| memory(path, &format!("---\nupdated: {}\n---\nthe retry policy\n", NOW - 90 * day));
    let memories = vec![old("facts/a"), old("facts/b")];
    // b was recalled two days ago (once, as a was).
    let signals = [
        Signals { hits: 1, last_hit: NOW - 60 * day },
        Signals { hits: 1, last_hit: NOW - 2 * day },
    ];
    // By the half-life of the last update, the two are the same age: a tie.
    assert_eq!(ranked_with(&memories, "retry policy", &signals), ["facts/a.md", "facts/b.md"]);
    // By the tier of the last use, b is hot and a cool.
    let tiers = Params { recency_by: Recency::Tiers, ..Params::default() };
    assert_eq!(
        ranked_by(&memories, "retry policy", &signals, &tiers),
        ["facts/b.md", "facts/a.md"]
    );
}

#[test]
fn ranking_is_deterministic() {
    let memories = demo();
    let first = ranked(&memories, "部署 pnpm 数据库 deploy");
    for _ in 0..5 {
        assert_eq!(ranked(&memories, "部署 pnpm 数据库 deploy"), first);
    }
}

#[test]
fn a_query_of_question_words_still_finds_what_shares_them() {
    let memories = vec![memory("facts/how", "# How we work\n\nWhat we do and why.\n")];
    assert_eq!(ranked(&memories, "how"), ["facts/how.md"]);
    assert_eq!(ranked(&memories, "how xyzzy"), ["facts/how.md"], "unknown content words fall back");
    assert_eq!(ranked(&memories, "什么"), Vec::<String>::new());
}

#[test]
fn two_query_words_also_find_their_compound() {
    let memories = vec![
        memory(
            "references/runbook",
            "---\nload_when: [rollback]\n---\n# Runbook\n\nThe rollback uses deploy.sh --rollback.\n",
        ),
        memory("facts/release", "# Release\n\nEach release is tagged from main.\n"),
    ];
    assert_eq!(ranked(&memories, "how do we roll back")[0], "references/runbook.md");
}

/// What the semantic tier keeps first: a trigger in the query, or, for a
/// query of one or two words, a memory with every one of its terms (the
/// compound the ranker also looks for, `redistimeout`, is not one of them).
#[test]
fn exact_hits_are_the_keyword_and_trigger_matches() {
    let memories = vec![
        memory("facts/kitchen", "# Kitchen rules\n\nA long note; the redis timeout is 5 s.\n"),
        memory("pitfalls/redis", "# Redis connections stall under load\n\nPool them.\n"),
        memory(
            "facts/train",
            "---\nload_when: [\"deploy to prod\"]\n---\n# Release train\n\nTuesdays.\n",
        ),
    ];
    let corpus = Corpus::build(&memories);
    let filter = |_, _: &Memory| true;
    let exact = |query: &str| -> Vec<String> {
        let req = Request {
            query,
            limit: 10,
            now_ms: NOW,
            signals: &[],
            filter: &filter,
            explain: false,
        };
        rank(&corpus, &memories[..], &Params::default(), &req)
            .into_iter()
            .filter(|h| h.exact)
            .map(|h| memories[h.doc].file())
            .collect()
    };
    assert_eq!(exact("redis timeout"), ["facts/kitchen.md"]);
    assert_eq!(exact("redis"), ["pitfalls/redis.md", "facts/kitchen.md"]);
    assert_eq!(exact("please deploy to prod now"), ["facts/train.md"]);
    assert!(exact("why does redis stall when the timeout fires").is_empty());
}
