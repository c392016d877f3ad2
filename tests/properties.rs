//! Properties over arbitrary input: parsing never panics, an accepted path
//! never leaves its root, a rewrite never changes the body, an update moves
//! no byte outside the key it sets, a region replacement none outside its
//! markers, the merge driver is order-independent and idempotent, and the
//! ranker's early stop never changes the top of a ranking.

use mem::model::frontmatter::Document;
use mem::model::memory::Memory;
use mem::model::relpath::RelPath;
use mem::model::roots::Scope;
use mem::rank::corpus::Corpus;
use mem::rank::score::{Params, Recency, Request, Signals, rank};
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
             any::<bool>(), 0i64..400, 0u32..20, 0i64..400),
            1..40),
        query in "(deploy|部署|timeout|lock|the|rollback| ){1,6}",
        k in 1usize..6,
        tiers in any::<bool>(),
    ) {
        let memories: Vec<Memory> = docs
            .iter()
            .enumerate()
            .map(|(i, (body, triggers, pinned, days, ..))| memory(i, body, triggers, *pinned, *days))
            .collect();
        // A last hit some days ago (none when 0), which the tiers weigh.
        let hit = |days: i64| if days == 0 { 0 } else { 1_800_000_000_000 - days * 86_400_000 };
        let signals: Vec<Signals> =
            docs.iter().map(|d| Signals { hits: d.4, last_hit: hit(d.5) }).collect();
        let params = Params {
            recency_by: if tiers { Recency::Tiers } else { Recency::HalfLife },
            ..Params::default()
        };
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
            rank(&corpus, &memories, &params, &req)
                .into_iter()
                .map(|h| (h.doc, h.score))
                .collect::<Vec<_>>()
        };
        let all = ranked(memories.len());
        prop_assert_eq!(ranked(k), all[..k.min(all.len())].to_vec());
    }
}

/// One top-level key written in one of the styles people use, as lines.
fn key_lines(key: &str, style: u8, word: &str) -> Vec<String> {
    match style % 6 {
        0 => vec![format!("{key}: {word}\n")],
        1 => vec![format!("{key}: '{word} x'\n")],
        2 => vec![format!("{key}: [{word}, two]\n")],
        3 => vec![format!("{key}:\n"), format!("  - {word}\n"), "  - two\n".into()],
        4 => vec![format!("{key}:\n"), format!("- {word}\n")],
        _ => vec![format!("{key}: {word} # note\n")],
    }
}

proptest! {
    #[test]
    fn an_update_touches_no_byte_outside_the_key_it_sets(
        styles in proptest::collection::vec(0u8..6, 1..6),
        comments in proptest::collection::vec(any::<bool>(), 6),
        pick in 0usize..6,
        word in "[a-z]{1,8}",
        value in "[a-zA-Z0-9 ]{1,20}",
        crlf in any::<bool>(),
    ) {
        let keys: Vec<String> = (0..styles.len()).map(|i| format!("k{i}")).collect();
        let mut yaml = String::new();
        for (i, (key, style)) in keys.iter().zip(&styles).enumerate() {
            if comments[i] {
                yaml.push_str(&format!("# about {key}\n"));
            }
            yaml.push_str(&key_lines(key, *style, &word).concat());
        }
        let nl = if crlf { "\r\n" } else { "\n" };
        let text = format!("---\n{yaml}---\nbody\n").replace('\n', nl);
        let before = Document::parse(&text).unwrap();
        let target = &keys[pick % keys.len()];
        let mut after = before.clone();
        after.set(target, value.trim());
        let out = mem::model::frontmatter::edit::render_over(&text, &before, &after);
        // It reads back as asked.
        let back = Document::parse(&out).unwrap();
        prop_assert_eq!(&back.meta, &after.meta);
        prop_assert_eq!(&back.body, &before.body);
        // Every line but the target key's is as it was, in order.
        let strip = |t: &str| -> Vec<String> {
            let mut kept = Vec::new();
            let mut skipping = false;
            for l in t.split_inclusive('\n') {
                let starts_key = !l.starts_with([' ', '-', '#', '\r', '\n']) && l.contains(':');
                if starts_key {
                    skipping = l.starts_with(&format!("{target}:"));
                } else if l.starts_with('#') || l.starts_with("---") {
                    skipping = false;
                }
                if !skipping {
                    kept.push(l.to_string());
                }
            }
            kept
        };
        prop_assert_eq!(strip(&out), strip(&text));
    }
}

/// A compiled `index.md` of category `facts` holding `slugs`.
fn index_md(slugs: &std::collections::BTreeSet<String>) -> String {
    let mut s =
        "# facts\n\n<!-- auto:begin facts -->\n| file | summary | highlight |\n|---|---|---|\n"
            .to_string();
    for slug in slugs {
        s.push_str(&format!("| [{slug}.md]({slug}.md) | {slug} summary | — |\n"));
    }
    s.push_str("<!-- auto:end -->\n");
    s
}

proptest! {
    #[test]
    fn a_region_replacement_touches_no_byte_outside_its_markers(
        before in proptest::collection::vec("[a-zA-Z #|*-]{0,30}", 0..6),
        inside in proptest::collection::vec("[a-z |]{0,20}", 0..6),
        after in proptest::collection::vec("[a-zA-Z #|*-]{0,30}", 0..6),
        new in proptest::collection::vec("[a-z |]{0,20}", 0..6),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let lines = |v: &[String]| v.iter().map(|l| format!("{l}{nl}")).collect::<String>();
        let head = format!("{}<!-- auto:begin registry -->{nl}", lines(&before));
        let tail = format!("<!-- auto:end -->{nl}{}", lines(&after));
        let text = format!("{head}{}{tail}", lines(&inside));
        let found = mem::model::regions::find(&text).unwrap();
        let out = mem::model::regions::replace(&text, &found, |_| Some(new.clone()));
        prop_assert!(out.starts_with(&head), "{:?}", out);
        prop_assert!(out.ends_with(&tail), "{:?}", out);
        prop_assert_eq!(&out[head.len()..out.len() - tail.len()], lines(&new));
    }

    #[test]
    fn the_merge_driver_is_order_independent_and_idempotent_for_disjoint_additions(
        base in proptest::collection::btree_set("[a-m][a-z]{0,6}", 1..6),
        ours in proptest::collection::btree_set("[n-s][a-z]{0,6}", 0..6),
        theirs in proptest::collection::btree_set("[t-z][a-z]{0,6}", 0..6),
    ) {
        let with = |extra: &std::collections::BTreeSet<String>| {
            index_md(&base.union(extra).cloned().collect())
        };
        let (b, o, t) = (index_md(&base), with(&ours), with(&theirs));
        let outside = mem::model::regions::outside(&o).unwrap();
        let merge = |b: &str, o: &str, t: &str| {
            mem::model::merge::merge_regions(&outside, b, o, t, false).unwrap().text
        };
        let one = merge(&b, &o, &t);
        let two = merge(&b, &t, &o);
        prop_assert_eq!(&one, &two);
        // What compile writes for the union.
        let all: std::collections::BTreeSet<String> =
            base.iter().chain(&ours).chain(&theirs).cloned().collect();
        prop_assert_eq!(&one, &index_md(&all));
        // Merging the result with itself changes nothing.
        let again = merge(&one, &one, &one);
        prop_assert_eq!(&again, &one);
    }
}

/// A word of a plain-text sentence: letters, or text with angle brackets
/// that only looks like HTML (`Vec<String>`, `<T>`, a lone `<`, `<br>`).
fn sentence_word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        "[A-Z][a-z]{0,5}<[A-Z][a-z]{0,5}>",
        "<[A-Z]>",
        "[a-z]{1,3}<[a-z0-9]{1,3}>>?",
        Just("<".to_string()),
        Just(">".to_string()),
        Just("<br>".to_string()),
        Just("</p>".to_string()),
        "<[a-z]{1,5}/>",
    ]
}

/// How a plain word may be written in Markdown, its text unchanged.
fn marked(word: &str, style: u8) -> String {
    match style {
        0 => format!("*{word}*"),
        1 => format!("**{word}**"),
        2 => format!("`{word}`"),
        3 => format!("[{word}](https://example.com/{word})"),
        _ => word.to_string(),
    }
}

proptest! {
    #[test]
    fn a_derived_summary_keeps_every_word_of_the_first_sentence(
        first in "[a-z]{1,8}",
        words in proptest::collection::vec((sentence_word(), 0u8..8), 0..12),
        heading in proptest::option::of("[a-z]{1,8}( [a-z<>]{1,8}){0,3}"),
        rest in "[a-z .]{0,30}",
    ) {
        let plain: Vec<String> = std::iter::once(first.clone())
            .chain(words.iter().map(|(w, _)| w.clone()))
            .collect();
        let sentence = plain.join(" ");
        prop_assume!(sentence.chars().count() <= mem::model::memory::SUMMARY_MAX);
        // Only the letter words are dressed in Markdown; the rest is as typed.
        let written: Vec<String> = std::iter::once(first)
            .chain(words.iter().map(|(w, style)| match w.chars().all(|c| c.is_ascii_lowercase()) {
                true => marked(w, *style),
                false => w.clone(),
            }))
            .collect();
        let mut body = String::new();
        if let Some(h) = &heading {
            body.push_str(&format!("# {h}\n\n"));
        }
        body.push_str(&format!("{}.\n\n{rest}\n", written.join(" ")));
        let doc = Document::parse(&body).unwrap();
        let (m, _) = Memory::from_document(RelPath::parse("facts/x").unwrap(), Scope::Project, &doc, 0);
        prop_assert_eq!(&m.summary, &format!("{sentence}."), "body {:?}", body);
    }
}

/// One memory of a generated tree for ROOT.md's bound: `n` names it (and
/// its category, a rule now and then), `v` its version (its day and pin).
fn bounded_memory(n: u32, v: u32) -> Memory {
    let category = ["facts", "rules", "decisions", "pitfalls"][(n % 4) as usize];
    let days = i64::from((n * 7 + v * 13) % 90);
    let mut text = format!("---\nupdated: {}\n", 1_800_000_000_000 - days * 86_400_000);
    if (n + v).is_multiple_of(17) {
        text.push_str("pinned: true\n");
    }
    match (n + v) % 11 {
        0 => text.push_str("relevance: high\n"),
        1 => text.push_str("relevance: low\n"),
        _ => {}
    }
    text.push_str(&format!("load_when:\n  - \"topic {}\"\n", n % 97));
    if n.is_multiple_of(3) {
        text.push_str(&format!("  - \"step {n} of the release train\"\n"));
    }
    text.push_str("---\nbody\n");
    let doc = Document::parse(&text).unwrap();
    let path = RelPath::parse(&format!("{category}/memory-{n}")).unwrap();
    Memory::from_document(path, Scope::Project, &doc, 0).0
}

/// ROOT.md as `mem compile` writes it for a tree of (name, version) pairs.
fn compiled_root(tree: &std::collections::BTreeMap<u32, u32>) -> String {
    let template = "# Project\n\nThe plan.\n\n## Categories\n\n<!-- auto:begin registry -->\n<!-- auto:end -->\n\n## Routing\n\n<!-- auto:begin routing -->\n<!-- auto:end -->\n";
    let memories: Vec<Memory> = tree.iter().map(|(n, v)| bounded_memory(*n, *v)).collect();
    let indexes = std::collections::BTreeMap::new();
    let sources = mem::model::compile::Sources {
        memories: &memories,
        root_md: Some(template),
        indexes: &indexes,
    };
    let plan = mem::model::compile::plan(&sources, false);
    plan.changes
        .into_iter()
        .find_map(|c| match c {
            mem::model::compile::Change::Write { path, after, .. } if path == "ROOT.md" => {
                Some(after)
            }
            _ => None,
        })
        .unwrap_or_else(|| template.to_string())
}

/// A three-way merge of trees, by memory: kept when both sides kept it or
/// one side added it, ours when both changed it.
fn merged_tree(
    b: &std::collections::BTreeMap<u32, u32>,
    o: &std::collections::BTreeMap<u32, u32>,
    t: &std::collections::BTreeMap<u32, u32>,
) -> std::collections::BTreeMap<u32, u32> {
    let names: std::collections::BTreeSet<u32> =
        b.keys().chain(o.keys()).chain(t.keys()).copied().collect();
    names
        .into_iter()
        .filter_map(|n| match (b.get(&n), o.get(&n), t.get(&n)) {
            (Some(_), None, _) | (Some(_), _, None) => None,
            (Some(bv), Some(ov), Some(tv)) => Some((n, if ov != bv { *ov } else { *tv })),
            (None, Some(ov), _) => Some((n, *ov)),
            (None, None, Some(tv)) => Some((n, *tv)),
            (None, None, None) => None,
        })
        .collect()
}

/// A side's changes: (name, what) with what 0 add, 1 remove, 2 edit. Each
/// side changes its own memories (even names, odd names): the same change
/// made on both sides out of sight is the one case the driver cannot see.
fn changed(
    base: &std::collections::BTreeMap<u32, u32>,
    changes: &[(u32, u8)],
    fresh: u32,
    side: u32,
) -> std::collections::BTreeMap<u32, u32> {
    let mut tree = base.clone();
    let names: Vec<u32> = base.keys().copied().filter(|n| n % 2 == side).collect();
    for (i, (pick, what)) in changes.iter().enumerate() {
        if names.is_empty() && *what != 0 {
            continue;
        }
        match what {
            0 => {
                tree.insert(fresh + side * 1000 + i as u32, 0);
            }
            1 => {
                tree.remove(&names[*pick as usize % names.len()]);
            }
            _ => {
                let n = names[*pick as usize % names.len()];
                tree.entry(n).and_modify(|v| *v += side + 1);
            }
        }
    }
    tree
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// ROOT.md's bounded tables merged by the driver: exactly what compile
    /// writes on the merged tree whenever it says so, and always when the
    /// two sides only add memories.
    #[test]
    fn a_bounded_root_md_merges_to_what_compile_writes(
        size in 0u32..400,
        ours in proptest::collection::vec((0u32..400, 0u8..3), 0..6),
        theirs in proptest::collection::vec((0u32..400, 0u8..3), 0..6),
        only_adds in any::<bool>(),
    ) {
        let base: std::collections::BTreeMap<u32, u32> = (0..size).map(|n| (n, 0)).collect();
        let adds = |c: &[(u32, u8)]| -> Vec<(u32, u8)> {
            c.iter().map(|(p, w)| (*p, if only_adds { 0 } else { *w })).collect()
        };
        let (o, t) = (changed(&base, &adds(&ours), 10_000, 0), changed(&base, &adds(&theirs), 10_000, 1));
        let (rb, ro, rt) = (compiled_root(&base), compiled_root(&o), compiled_root(&t));
        let want = compiled_root(&merged_tree(&base, &o, &t));
        prop_assert!(want.lines().count() <= 200 && want.len() <= 25_000, "{}", want);
        let outside = mem::model::regions::outside(&ro).unwrap();
        let merged = mem::model::merge::merge_regions(&outside, &rb, &ro, &rt, true).unwrap();
        if merged.exact {
            prop_assert_eq!(&merged.text, &want);
        }
        // Additions alone merge exactly, unless the merge is the one that
        // takes the file over its bound (a whole table does not say which
        // of its rows to keep).
        let cut = [&rb, &ro, &rt, &want].map(|t| t.contains("mem:more"));
        let crossing = cut.iter().any(|c| *c) && !cut.iter().all(|c| *c);
        if only_adds && ro != rb && rt != rb && !crossing {
            prop_assert!(merged.exact, "additions alone are always merged\n{}", merged.text);
        }
        // Merging a result with itself changes nothing.
        let again = mem::model::merge::merge_regions(&outside, &want, &want, &want, true).unwrap();
        prop_assert!(again.exact);
        prop_assert_eq!(&again.text, &want);
    }
}
