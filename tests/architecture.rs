//! The crate's shape, checked from its source: every file sits on a layer
//! of one declared table and uses only its own layer and those below; no
//! import cycle between modules, at any depth; no verb of the command line
//! uses another verb; no function runs over 100 lines; a source file stays
//! short unless it says at its top why it is one piece.
//!
//! The source is read by a small parser of its own (no `syn`, to keep CI
//! fast): comments, strings and `#[cfg(test)]` items are blanked first,
//! then every `use` tree is expanded (groups, nesting, `self`, `super`,
//! `crate`, `as`), and every path in the code is resolved too, so
//! `crate::a::b::f()` in a function body, or `x::f()` through a `use`d
//! name, counts as much as an import. `the_checks_fail_on_planted_violations`
//! plants each kind of violation in a copy of the source and sees it caught.

#[path = "architecture/source.rs"]
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use source::{Module, functions, modules};

/// The layers, bottom up: a module is on the layer of the longest entry
/// that is its path or a prefix of it, and may use only modules on its own
/// layer or below (a cycle within a layer is still a cycle). Every module
/// must be on a layer, and every entry must hold a module.
const LAYERS: &[(&str, usize)] = &[
    // Building blocks that know nothing of memories.
    ("base", 0),
    // What a memory is, pure.
    ("model", 1),
    // Tokenizing and scoring, pure.
    ("rank", 2),
    // What is about to be written, checked on rank's tokens.
    ("guard", 3),
    // The files under a root.
    ("store", 4),
    // Per-root caches; beside them, the semantic tier's model and vectors.
    ("cache", 5),
    ("semantic", 5),
    // Flags and environment resolved once; a report printed.
    ("settings", 6),
    ("output", 7),
    // The engine's operations, callable without the command line.
    ("ops", 8),
    // The command line: one adapter per verb, and the parser on top.
    ("commands", 9),
    ("cli", 10),
];

/// Modules of `commands` that are not verbs: what several verbs share
/// (their filter flags, the completion of their arguments). Any verb may
/// use them; they use no verb.
const SHARED: &[&str] = &["complete", "filter"];

/// The longest a function may be, in lines, from `fn` to its closing brace.
const FUNCTION_LINES: usize = 100;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The dependency graph: each module and the modules it names.
fn graph(modules: &[Module]) -> BTreeMap<String, BTreeSet<String>> {
    modules.iter().map(|m| (m.path.clone(), m.edges.clone())).collect()
}

/// The layer of `module`, from [`LAYERS`].
fn layer(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .filter(|(prefix, _)| module == *prefix || module.starts_with(&format!("{prefix}::")))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, layer)| *layer)
}

/// Every use of a higher layer, and every module on no layer.
fn layer_violations(modules: &[Module]) -> Vec<String> {
    let mut out = Vec::new();
    for (prefix, _) in LAYERS {
        if !modules.iter().any(|m| layer(&m.path).is_some() && m.path.starts_with(prefix)) {
            out.push(format!("the layer entry `{prefix}` holds no module"));
        }
    }
    for m in modules {
        let Some(from) = layer(&m.path) else {
            out.push(format!("{} ({}) is on no layer of LAYERS", m.path, m.file.display()));
            continue;
        };
        for edge in &m.edges {
            match layer(edge) {
                Some(to) if to <= from => {}
                Some(to) => out.push(format!(
                    "{} (layer {from}) uses {edge} (layer {to}), a higher layer",
                    m.path
                )),
                None => out.push(format!("{} uses {edge}, which is on no layer", m.path)),
            }
        }
    }
    out
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

/// The verb a module of `commands` belongs to, or None for a shared
/// module or one outside `commands`.
fn verb(module: &str) -> Option<&str> {
    let rest = module.strip_prefix("commands::")?;
    let name = rest.split("::").next()?;
    (!SHARED.contains(&name)).then_some(name)
}

/// Every use of one verb by another (or of a verb by a shared module),
/// and every entry of [`SHARED`] that names no module.
fn verb_violations(modules: &[Module]) -> Vec<String> {
    let mut out = Vec::new();
    for name in SHARED {
        let path = format!("commands::{name}");
        if !modules.iter().any(|m| m.path == path) {
            out.push(format!("the shared entry `{name}` names no module of commands"));
        }
    }
    for m in modules.iter().filter(|m| m.path.starts_with("commands::")) {
        for edge in &m.edges {
            let Some(to) = verb(edge) else { continue };
            if verb(&m.path) != Some(to) {
                out.push(format!("{} uses the verb {edge}", m.path));
            }
        }
    }
    out
}

/// Every function over [`FUNCTION_LINES`] lines.
fn long_functions(modules: &[Module]) -> Vec<String> {
    let mut out = Vec::new();
    for m in modules {
        for f in functions(&m.code) {
            if f.lines > FUNCTION_LINES {
                out.push(format!("{}: fn {} ({} lines)", m.file.display(), f.name, f.lines));
            }
        }
    }
    out
}

/// Every violation of the checks above in the source under `src`.
fn violations(src: &Path) -> Vec<String> {
    let modules = modules(src);
    let mut out = layer_violations(&modules);
    if let Some(found) = cycle(&graph(&modules)) {
        out.push(format!("an import cycle: {}", found.join(" -> ")));
    }
    out.extend(verb_violations(&modules));
    out.extend(long_functions(&modules));
    out
}

#[test]
fn the_source_keeps_its_shape() {
    let modules = modules(&src());
    assert!(modules.len() > 100, "the source tree was not found: {}", modules.len());
    // The parser sees what the code names, however it is written.
    let edge = |from: &str, to: &str| {
        let m = modules.iter().find(|m| m.path == from).unwrap();
        assert!(m.edges.contains(to), "{from} should use {to}: {:?}", m.edges);
    };
    edge("ops::recall", "ops::visibility"); // `use …::visibility::{self, visible_to}`
    edge("ops::compile", "ops::git"); // `crate::ops::git::in_repository(…)` in a body
    edge("ops::context::place", "ops::context::parts"); // `use super::parts::{…}`
    edge("ops::agent::block", "ops::context"); // a `use` inside a function
    edge("commands::recall", "ops::recall"); // `use …::{…, run as recall}`
    let found = violations(&src());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A kind of violation: what it is, the text appended to which files of a
/// copy of `src/`, and what the checks must say.
type Plant<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

/// Each kind of violation, planted in a copy of the source, is caught.
#[test]
fn the_checks_fail_on_planted_violations() {
    let plants: [Plant; 6] = [
        (
            "a cycle through a grouped import",
            &[("ops/tier.rs", "\nuse crate::ops::{recall::Options};\n")],
            "an import cycle",
        ),
        (
            "a cycle three modules deep, through paths in function bodies",
            &[
                ("base/mod.rs", "\npub mod cyc_a;\npub mod cyc_b;\npub mod cyc_c;\n"),
                ("base/cyc_a.rs", "pub fn a() { super::cyc_b::b() }\n"),
                ("base/cyc_b.rs", "pub fn b() { crate::base::cyc_c::c() }\n"),
                (
                    "base/cyc_c.rs",
                    "use crate::base::{self as b, cyc_a};\npub fn c() { cyc_a::a() }\n",
                ),
            ],
            "an import cycle: base::cyc_a -> base::cyc_b -> base::cyc_c -> base::cyc_a",
        ),
        (
            "an upward path in a function body",
            &[(
                "model/roots.rs",
                "\nfn planted() -> u16 {\n    crate::ops::recall::DEFAULT_LIMIT\n}\n",
            )],
            "model::roots (layer 1) uses ops::recall (layer 8), a higher layer",
        ),
        (
            "an upward import through `super`",
            &[(
                "store/trust/mod.rs",
                "\n#[allow(unused_imports)]\nuse super::super::commands::{self};\n",
            )],
            "store::trust (layer 4) uses commands (layer 9), a higher layer",
        ),
        (
            "a verb using another verb",
            &[("commands/list.rs", "\nfn planted(_: &super::trust::Args) {}\n")],
            "commands::list uses the verb commands::trust",
        ),
        (
            "a function over 100 lines",
            &[("base/text.rs", &long_function())],
            "fn planted_long (101 lines)",
        ),
    ];
    let clean = copy_of_src();
    assert!(violations(clean.path()).is_empty(), "the copy itself is clean");
    for (what, files, expected) in plants {
        let copy = copy_of_src();
        for (file, text) in files {
            let path = copy.path().join(file);
            let mut content = std::fs::read_to_string(&path).unwrap_or_default();
            content.push_str(text);
            std::fs::write(&path, content).unwrap();
        }
        let found = violations(copy.path());
        assert!(
            found.iter().any(|v| v.contains(expected)),
            "{what}: expected `{expected}`, found {found:#?}"
        );
    }
}

/// A function of 101 lines, from `fn` to its closing brace.
fn long_function() -> String {
    let body: String = (0..99).map(|i| format!("    let _x{i} = {i};\n")).collect();
    format!("\nfn planted_long() {{\n{body}}}\n")
}

/// A copy of `src/` in a temporary folder.
fn copy_of_src() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&src(), dir.path());
    dir
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
}

#[test]
fn layers_go_by_the_longest_entry() {
    assert_eq!(layer("ops::context::place"), Some(8));
    assert_eq!(layer("cache"), Some(5));
    assert_eq!(layer("caches"), None);
    assert_eq!(verb("commands::context::input"), Some("context"));
    assert_eq!(verb("commands::filter"), None);
    assert_eq!(verb("ops::recall"), None);
}

/// `unsafe` is allowed only in the cache, where a cache file is mapped.
#[test]
fn unsafe_code_stays_in_the_cache() {
    for m in modules(&src()) {
        let text = std::fs::read_to_string(&m.file).unwrap();
        let allows = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with('#')
                && l.contains("unsafe_code")
                && (l.contains("allow") || l.contains("expect"))
        });
        if allows {
            assert!(m.path.starts_with("cache::"), "{} allows unsafe code", m.path);
        }
    }
}

/// A source file stays short enough to read in one sitting: at most about
/// 400 lines before its tests, unless its first lines say why it is one
/// piece ("One piece:").
#[test]
fn source_files_stay_short() {
    const LIMIT: usize = 420;
    let mut long = Vec::new();
    for m in modules(&src()) {
        let text = std::fs::read_to_string(&m.file).unwrap();
        let lines = m.code.lines().count();
        let head: String = text.lines().take(12).collect::<Vec<_>>().join("\n");
        if lines > LIMIT && !head.contains("One piece:") {
            long.push(format!("{} ({lines} lines)", m.path));
        }
    }
    assert!(long.is_empty(), "split these, or say at their top why they are one piece: {long:?}");
}
