//! Properties over arbitrary input: parsing never panics, an accepted path
//! never leaves its root, a rewrite never changes the body, and the ranker's
//! early stop never changes the top of a ranking.

use mem::frontmatter::Document;
use mem::memory::Memory;
use mem::rank::corpus::Corpus;
use mem::rank::score::{Params, Request, Signals, rank};
use mem::relpath::RelPath;
use mem::roots::Scope;
use proptest::prelude::*;

/// A small memory from generated parts: body words, triggers, pinned, age.
fn memory(i: usize, body: &str, triggers: &[String], pinned: bool, days: i64) -> Memory {
    let mut text = format!("---\nupdated: {}\n", 1_800_000_000_000 - days * 86_400_000);
    if pinned {
        text.push_str("pinned: true\n");
    }
    if !triggers.is_empty() {
        text.push_str("load_when:\n");
        for t in triggers {
            text.push_str(&format!("  - \"{t}\"\n"));
        }
    }
    text.push_str(&format!("---\n{body}\n"));
    let doc = Document::parse(&text).unwrap();
    let path = RelPath::parse(&format!("c{}/m{i}", i % 3)).unwrap();
    Memory::from_document(path, Scope::Project, &doc, 0).0
}

proptest! {
    #[test]
    fn any_text_parses_or_is_reported(text in "(---|\r|\n|\u{feff}|[a-z: \\[\\]{}\"'#-]|部署){0,60}") {
        if let Ok(doc) = Document::parse(&text) {
            // A document we can read renders to one that reads the same.
            let again = Document::parse(&doc.render()).unwrap();
            prop_assert_eq!(&again.body, &doc.body);
            prop_assert_eq!(&again.meta, &doc.meta);
        }
    }

    #[test]
    fn setting_a_key_keeps_the_body(body in "(---|\r\n|\n|[a-z #]|部署){0,40}", value in "[a-z部署 ]{0,10}") {
        let mut doc = Document::parse(&format!("---\nkind: fact\n---\n{body}")).unwrap();
        doc.set("summary", value.as_str());
        let again = Document::parse(&doc.render()).unwrap();
        prop_assert_eq!(again.get_str("kind"), Some("fact"));
        prop_assert_eq!(again.body, body);
    }

    #[test]
    fn accepted_paths_stay_inside(arg in "[a-z./\\\\_-]{0,12}") {
        if let Ok(p) = RelPath::parse(&arg) {
            let joined = p.under(std::path::Path::new("/root"));
            prop_assert!(joined.starts_with("/root"));
            prop_assert!(!p.category.starts_with('.') && !p.slug.starts_with('.'));
            prop_assert!(p.file().split('/').all(|part| part != ".." && part != "." && !part.is_empty()));
            prop_assert_eq!(p.file().matches('/').count(), 1);
        }
    }

    #[test]
    fn the_top_k_is_the_head_of_the_full_ranking(
        docs in proptest::collection::vec(
            ("(deploy|部署|timeout|lock|锁表|rollback|the|a|x){1,8}",
             proptest::collection::vec("(deploy|部署|timeout|lock|the){1,3}", 0..3),
             any::<bool>(), 0i64..400, 0u32..20),
            1..40),
        query in "(deploy|部署|timeout|lock|the|rollback| ){1,6}",
        k in 1usize..6,
    ) {
        let memories: Vec<Memory> = docs
            .iter()
            .enumerate()
            .map(|(i, (body, triggers, pinned, days, _))| memory(i, body, triggers, *pinned, *days))
            .collect();
        let signals: Vec<Signals> = docs.iter().map(|d| Signals { hits: d.4 }).collect();
        let corpus = Corpus::build(&memories);
        let filter = |_, _: &Memory| true;
        let ranked = |limit| {
            let req = Request {
                query: &query,
                limit,
                now_ms: 1_800_000_000_000,
                signals: &signals,
                filter: &filter,
                explain: false,
            };
            rank(&corpus, &memories, &Params::default(), &req)
                .into_iter()
                .map(|h| (h.doc, h.score))
                .collect::<Vec<_>>()
        };
        let all = ranked(memories.len());
        prop_assert_eq!(ranked(k), all[..k.min(all.len())].to_vec());
    }
}
