//! One integration-test binary: every file in this folder is a module here.

mod bound;
mod cache;
mod categories;
mod compile;
mod concurrency;
mod consolidate;
mod context;
mod conventions;
mod decay;
mod devset;
mod editing;
mod env;
mod errors;
mod files;
mod git;
mod guard;
mod handedits;
mod hardening;
mod hosts;
mod hub;
mod json_doc;
mod lifecycle;
mod listing;
mod maintenance;
mod mcp;
mod plugins;
mod provenance;
mod readme;
mod recall;
mod roots;
mod rpc;
mod security;
mod semantic;
mod semantic_languages;
mod semantic_pull;
mod semantic_start;
mod session;
mod setup;
mod tools;
mod vocabulary;
mod watch;

/// A test file that is not declared above would silently never run.
#[test]
fn every_test_file_is_wired_in() {
    let main = include_str!("main.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            assert!(main.contains(&format!("mod {module};")), "tests/cli/{name} is not wired in");
        }
    }
}
