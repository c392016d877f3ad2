//! The crate's shape, checked from its source: dependencies between modules
//! run one way (no cycle, at any depth), and a source file stays short
//! unless it says at its top why it is one piece.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file: `src/index/fresh.rs` is
/// `index::fresh`, `src/index/mod.rs` is `index`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without its comments and without the items marked
/// `#[cfg(test)]` (a `mod tests;` line, or an item up to its closing brace).
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
    without_test_items(&lines).join("\n")
}

/// `lines` without the items marked `#[cfg(test)]`: the attribute, any
/// more attributes, then the item up to its `;` or closing brace.
fn without_test_items<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        i += 1;
        while i < lines.len() && lines[i].trim_start().starts_with("#[") {
            i += 1;
        }
        let mut depth = 0i32;
        while i < lines.len() {
            let line = lines[i];
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            i += 1;
            if depth <= 0 && (line.trim_end().ends_with(';') || line.contains('}')) {
                break;
            }
        }
    }
    out
}

/// The items of a `use` group, `{a, b::{c, d}, e as f}`, as paths.
fn group_items(text: &str) -> Vec<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    let inner = text.strip_prefix('{').unwrap_or(text);
    let mut end = inner.len();
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                end = k;
                break;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    let inner = &inner[..end];
    let mut items = Vec::new();
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        let head: String = item.chars().take_while(|c| word(*c)).collect();
        let head = head.trim_end_matches(':');
        match item[head.len()..].trim_start_matches(':').strip_prefix('{') {
            Some(_) => {
                let nested = &item[item.find('{').unwrap_or(0)..];
                out.extend(group_items(nested).into_iter().map(|n| {
                    if head.is_empty() {
                        n
                    } else if n == "self" {
                        head.to_string()
                    } else {
                        format!("{head}::{n}")
                    }
                }));
            }
            None => out.push(head.to_string()),
        }
    }
    out
}

/// The paths a file names, as module paths: `crate::a::b::c`; from module
/// `m::n`, `super::x` (`m::x`, each further `super` one level up),
/// `self::x` and a child's `x::` (`m::n::x`), with `{a, b::{c}}` groups
/// expanded. `use crate as …` is refused outright (an alias would hide
/// paths from this check).
fn named_paths(module: &str, code: &str, children: &[String]) -> Vec<String> {
    assert!(!code.contains("crate as "), "{module}: `use crate as` hides paths from this test");
    let join = |base: &str, rest: &str| {
        if base.is_empty() { rest.to_string() } else { format!("{base}::{rest}") }
    };
    let up = |levels: usize| -> String {
        let parts: Vec<&str> = module.split("::").collect();
        parts[..parts.len().saturating_sub(levels)].join("::")
    };
    let mut prefixes =
        vec![("crate::".to_string(), String::new()), ("self::".to_string(), module.to_string())];
    for levels in (1..=4).rev() {
        prefixes.push(("super::".repeat(levels), up(levels)));
    }
    prefixes.extend(children.iter().map(|c| (format!("{c}::"), join(module, c))));
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let path_at = |text: &str| -> String {
        let path: String = text.chars().take_while(|c| word(*c) || *c == ':').collect();
        path.trim_end_matches(':').to_string()
    };
    let mut out = Vec::new();
    for (prefix, base) in &prefixes {
        let mut at = 0;
        while let Some(i) = code[at..].find(prefix.as_str()) {
            let start = at + i;
            at = start + prefix.len();
            // A whole word, and not the tail of a longer path (`a::x::`).
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| word(c) || c == ':') {
                continue;
            }
            let rest = &code[at..];
            if rest.starts_with("super::") {
                continue; // counted with its own number of `super`s
            }
            match rest.strip_prefix('{') {
                Some(_) => {
                    for item in group_items(rest) {
                        match item.as_str() {
                            "self" => out.push(base.clone()),
                            item => out.push(join(base, item)),
                        }
                    }
                }
                None => out.push(join(base, &path_at(rest))),
            }
        }
    }
    out
}

/// The module a path lands in: its longest prefix that is a module.
fn target(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|m| modules.contains(m))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.retain(|f| !f.ends_with("main.rs") && !f.ends_with("lib.rs"));
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let code = code(&std::fs::read_to_string(file).unwrap());
        let children: Vec<String> = modules
            .iter()
            .filter_map(|m| m.strip_prefix(&format!("{module}::")))
            .filter(|rest| !rest.contains("::"))
            .map(str::to_string)
            .collect();
        let edges: BTreeSet<String> = named_paths(&module, &code, &children)
            .iter()
            .filter_map(|p| target(p, &modules))
            .filter(|t| *t != module)
            .collect();
        graph.insert(module, edges);
    }
    graph
}

/// A cycle in `graph`, if there is one, as the modules along it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|n| n == node).unwrap();
                let mut found = path[start..].to_vec();
                found.push(node.to_string());
                return Some(found);
            }
            _ => {}
        }
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, state, path) {
                return Some(found);
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|n| visit(n, graph, &mut state, &mut Vec::new()))
}

#[test]
fn dependencies_between_modules_run_one_way() {
    let graph = graph();
    assert!(graph.len() > 40, "the source tree was not found: {graph:?}");
    if let Some(found) = cycle(&graph) {
        panic!("an import cycle: {}", found.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b::c".to_string()]));
    graph.insert("b::c".to_string(), BTreeSet::from(["d".to_string()]));
    graph.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle(&graph).unwrap(), ["a", "b::c", "d", "a"]);
    graph.insert("d".to_string(), BTreeSet::new());
    assert!(cycle(&graph).is_none());
    let modules = BTreeSet::from(["index".to_string(), "index::fresh".to_string()]);
    assert_eq!(target("index::fresh::index_at", &modules).as_deref(), Some("index::fresh"));
    assert_eq!(target("index::RACY_NS", &modules).as_deref(), Some("index"));
    let named = |m, code| named_paths(m, code, &["fresh".to_string()]);
    assert_eq!(named("index::docs", "use super::cached::Cached;"), ["index::cached::Cached"]);
    assert_eq!(named("index", "pub use fresh::index_root;"), ["index::fresh::index_root"]);
    assert_eq!(
        named("index::fresh", "use super::{packed, snapshot::list};"),
        ["index::packed", "index::snapshot::list"]
    );
    assert_eq!(named("a", "x::fresh::y(); crate::b::c"), ["b::c"]);
    assert_eq!(
        named("store", "use crate::{base::{text, codec::mix}, index::RACY_NS};"),
        ["base::text", "base::codec::mix", "index::RACY_NS"]
    );
    assert_eq!(
        named("store::trust::gate", "use super::super::files::open;"),
        ["store::files::open"]
    );
    let hidden = "fn a() {}\n#[cfg(test)]\nfn helper() {}\nfn b() { crate::x::y(); }\n#[cfg(test)]\nmod tests {\n    fn t() { crate::z(); }\n}\n";
    assert!(code(hidden).contains("crate::x::y") && !code(hidden).contains("crate::z"));
}

/// The engine stands apart from the command line: its modules never name
/// the CLI or the commands.
#[test]
fn the_engine_does_not_reach_up_to_the_commands() {
    let graph = graph();
    let upper = ["cli", "commands"];
    for (module, edges) in &graph {
        let top = module.split("::").next().unwrap();
        if upper.contains(&top) {
            continue;
        }
        for edge in edges {
            let to = edge.split("::").next().unwrap();
            assert!(!upper.contains(&to), "{module} depends on {edge}");
        }
    }
}

/// `unsafe` is allowed only in the index, where a cache file is mapped.
#[test]
fn unsafe_code_stays_in_the_index() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let allows = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("#")
                && l.contains("unsafe_code")
                && (l.contains("allow") || l.contains("expect"))
        });
        if allows {
            let module = module_of(&src, &file);
            assert!(module.starts_with("index::"), "{module} allows unsafe code");
        }
    }
}

/// A source file stays short enough to read in one sitting: at most about
/// 400 lines before its tests, unless its first lines say why it is one
/// piece ("One piece:").
#[test]
fn source_files_stay_short() {
    const LIMIT: usize = 420;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = without_test_items(&text.lines().collect::<Vec<_>>()).len();
        let head: String = text.lines().take(12).collect::<Vec<_>>().join("\n");
        if lines > LIMIT && !head.contains("One piece:") {
            long.push(format!("{} ({lines} lines)", module_of(&src, &file)));
        }
    }
    assert!(long.is_empty(), "split these, or say at their top why they are one piece: {long:?}");
}

/// Each folder uses only the layers below it, as the crate's map says:
/// base, model, rank, guard, store, index (and the semantic tier beside
/// it), then the command line.
#[test]
fn layers_run_bottom_up() {
    let layer = |module: &str| match module.split("::").next().unwrap() {
        "base" => 0,
        "model" => 1,
        "rank" => 2,
        "guard" => 3,
        "store" => 4,
        "index" | "semantic" => 5,
        "settings" => 6,
        "output" => 7,
        "ops" => 8,
        "commands" | "cli" => 9,
        other => panic!("{other} is on no layer of the map in src/lib.rs"),
    };
    for (module, edges) in &graph() {
        for edge in edges {
            assert!(
                layer(edge) <= layer(module),
                "{module} (layer {}) uses {edge} (layer {})",
                layer(module),
                layer(edge)
            );
        }
    }
}
