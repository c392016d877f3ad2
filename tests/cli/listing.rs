//! Listings that inform: `list` shows what a memory says, cut to the
//! terminal by display width; a memory without a title is named by its
//! summary, never its slug twice; `recall` prints no line twice.

use crate::env::Env;

fn columns(line: &str) -> usize {
    line.chars()
        .map(|c| {
            if ('\u{2e80}'..='\u{9fff}').contains(&c)
                || ('\u{3000}'..='\u{303f}').contains(&c)
                || ('\u{ff00}'..='\u{ff60}').contains(&c)
            {
                2
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn list_shows_the_summary_cut_to_the_terminal() {
    let env = Env::with_project();
    env.mem([
        "remember",
        "decisions/auth",
        "We sign sessions with Ed25519 keys kept in the vault, rotated every 90 days.",
        "--kind",
        "decision",
    ])
    .assert()
    .success();
    env.mem(["remember", "facts/deploy", "部署脚本用 pnpm 而不是 npm。npm 会生成不同的 lockfile 并装出不同版本，这在生产环境里出过事故。"]).assert().success();
    env.mem([
        "remember",
        "facts/node",
        "# Node version\n\nNode 22 everywhere, CI and production alike.",
    ])
    .assert()
    .success();
    // Piped: each memory on one line, whole.
    let out = env.stdout(["list"]);
    assert!(out.contains("decisions/auth.md  decision    hot   We sign sessions with Ed25519 keys kept in the vault, rotated every 90 days.\n"), "{out}");
    assert!(out.contains("facts/node.md      fact        hot   Node version — Node 22 everywhere, CI and production alike.\n"), "{out}");
    assert!(!out.contains("decision    hot   auth"), "the slug is not the title: {out}");
    // On a 60-column terminal: every line fits, CJK counted as two columns.
    let out = env.stdout_with(["list"], &[("COLUMNS", "60")]);
    for line in out.lines() {
        assert!(columns(line) <= 60, "{} columns: {line}", columns(line));
        assert!(line.ends_with('…'), "{line}");
    }
    // --long: everything, and when.
    let out = env.stdout_with(["list", "--long"], &[("COLUMNS", "60")]);
    assert!(out.contains("  Node 22 everywhere, CI and production alike.\n"), "{out}");
    assert!(out.contains("这在生产环境里出过事故。"), "{out}");
    assert!(out.contains("updated 2026-11-30"), "{out}");
    assert!(out.contains("· relevance medium"), "{out}");
}

#[test]
fn recall_names_an_untitled_memory_by_its_summary_and_repeats_no_line() {
    let env = Env::with_project();
    env.mem(["remember", "facts/short", "Node 22 everywhere"]).assert().success();
    env.mem(["remember", "facts/two", "Staging runs in the eu-west cluster. Ask ops for access."])
        .assert()
        .success();
    let out = env.stdout(["recall", "node", "--no-track"]);
    assert_eq!(out.lines().filter(|l| l.trim() == "Node 22 everywhere").count(), 1, "{out}");
    assert!(!out.lines().any(|l| l.trim() == "short"), "the slug again: {out}");
    let out = env.stdout(["recall", "staging", "--no-track"]);
    let lines: Vec<&str> = out.lines().map(str::trim).collect();
    assert_eq!(
        lines[1..],
        ["Staging runs in the eu-west cluster.", "Ask ops for access."],
        "{out}"
    );
}
