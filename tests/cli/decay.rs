//! Relevance and tiers as time passes, on a fixed clock (`MEM_NOW`): the
//! same memories read 0, 8, 31 and 61 days after their last use by `list`,
//! `inspect`, `stats`, `clean`, `context` and `recall`, and no file of the
//! root rewritten by time passing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::env::{Env, NOW};

const DAY: i64 = 86_400_000;

/// Every Markdown file of the root (memories, indexes, ROOT.md): its bytes
/// and mtime.
fn markdown(dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, std::time::SystemTime)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() && !name.starts_with('.') {
            markdown(&path, out);
        } else if name.ends_with(".md") {
            let mtime = entry.metadata().unwrap().modified().unwrap();
            out.insert(path.display().to_string(), (std::fs::read(&path).unwrap(), mtime));
        }
    }
}

/// Five memories about widgets, written now: one per declared level, a rule
/// and a pinned one.
fn widgets() -> Env {
    let env = Env::with_project();
    for (path, text, flags) in [
        ("facts/high", "Widgets ship from the Lyon warehouse.", &["--relevance", "high"][..]),
        ("facts/plain", "Widget orders close at noon on Fridays.", &[][..]),
        ("facts/low", "The widget logo was drawn in 2019.", &["--relevance", "low"][..]),
        ("rules/widget-tests", "Run the widget tests before a release.", &["--relevance", "high"]),
        ("preferences/widget-names", "Widget names are lowercase.", &["--pin"]),
    ] {
        env.mem(["remember", path, text]).args(flags).assert().success();
    }
    env
}

/// `mem ARGS --json` run `days` after the memories were written.
fn json_at(env: &Env, args: &[&str], days: i64) -> Value {
    let out = env.mem_at(args, days * DAY).arg("--json").output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (path, effective relevance, tier) of every memory `mem list` shows.
fn levels(env: &Env, days: i64) -> Vec<(String, String, String)> {
    let list = json_at(env, &["list"], days);
    list["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_string();
            (s("path"), s("effective_relevance"), s("tier"))
        })
        .collect()
}

fn row(path: &str, level: &str, tier: &str) -> (String, String, String) {
    (path.to_string(), level.to_string(), tier.to_string())
}

#[test]
fn relevance_tier_and_clean_candidates_follow_the_days_without_use() {
    let env = widgets();
    let mut before = BTreeMap::new();
    markdown(&env.project(), &mut before);
    let expected = [
        (0, ["high", "medium", "low"], "hot"),
        (8, ["high", "medium", "low"], "warm"),
        (31, ["medium", "low", "low"], "cool"),
        (61, ["low", "low", "low"], "cool"),
    ];
    for (days, [high, plain, low], tier) in expected {
        assert_eq!(
            levels(&env, days),
            [
                row("facts/high.md", high, tier),
                row("facts/low.md", low, tier),
                row("facts/plain.md", plain, tier),
                // Pinned memories and rules keep the level they declare.
                row("preferences/widget-names.md", "medium", tier),
                row("rules/widget-tests.md", "high", tier),
            ],
            "{days} days"
        );
        // `mem clean --min-relevance medium`: what fell below medium (never
        // a rule or a pinned memory), a dry run.
        let clean = json_at(&env, &["clean", "--min-relevance", "medium"], days);
        let candidates: Vec<&str> = clean["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap())
            .collect();
        let want: &[&str] = match days {
            0 | 8 => &["facts/low.md"],
            31 => &["facts/low.md", "facts/plain.md"],
            _ => &["facts/high.md", "facts/low.md", "facts/plain.md"],
        };
        assert_eq!(candidates, want, "{days} days: {clean}");
        assert_eq!(clean["dry_run"], true);
        // Stats count the tiers and the levels in effect.
        let stats = json_at(&env, &["stats"], days);
        let root = &stats["roots"][0];
        assert_eq!(root["by_tier"][tier], 5, "{days} days: {root}");
        let count = |level: &str| {
            [high, plain, low, "medium", "high"].iter().filter(|l| **l == level).count()
        };
        for level in ["high", "medium", "low"] {
            assert_eq!(root["by_relevance"][level], count(level), "{days} days, {level}: {root}");
        }
    }
    // The day 61 detail: declared and in effect, and why.
    let detail = json_at(&env, &["inspect", "facts/high"], 61);
    assert_eq!(detail["memory"]["relevance"], "high");
    assert_eq!((&detail["effective_relevance"], &detail["tier"]), (&"low".into(), &"cool".into()));
    assert_eq!(detail["last_used"], NOW);
    let human = env.mem_at(["inspect", "facts/high"], 61 * DAY).output().unwrap();
    let human = String::from_utf8(human.stdout).unwrap();
    assert!(human.contains("relevance     low (declares high; unused 61 days)"), "{human}");
    assert!(human.contains("tier          cool (last used 2 months ago)"), "{human}");
    // Reading changed no file: time passing is derived, never written.
    let mut after = BTreeMap::new();
    markdown(&env.project(), &mut after);
    assert_eq!(before, after, "a memory file changed");
}

#[test]
fn context_injects_at_or_above_the_level_and_says_the_tier() {
    let env = widgets();
    let matches = |days: i64, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["context", "--query", "widget", "--no-track"];
        args.extend(extra);
        let block = json_at(&env, &args, days);
        let mut found: Vec<String> = block["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["section"] != "rule")
            .map(|e| format!("{} {}", e["path"].as_str().unwrap(), e["tier"].as_str().unwrap()))
            .collect();
        found.sort();
        found
    };
    // Medium and up by default; rules always (left out of these lists).
    let pinned = "preferences/widget-names.md";
    assert_eq!(
        matches(0, &[]),
        ["facts/high.md hot".to_string(), "facts/plain.md hot".into(), format!("{pinned} hot"),]
    );
    assert_eq!(matches(31, &[]), ["facts/high.md cool".to_string(), format!("{pinned} cool")]);
    assert_eq!(matches(61, &[]), [format!("{pinned} cool")]);
    assert_eq!(matches(61, &["--min-relevance", "low"]).len(), 4);
    assert_eq!(matches(0, &["--min-relevance", "high"]), ["facts/high.md hot"]);
    let block =
        env.mem_at(["context", "--query", "widget", "--no-track"], 8 * DAY).output().unwrap();
    let block = String::from_utf8(block.stdout).unwrap();
    assert!(block.contains("(`facts/high.md`, 8 days ago · warm, verify before use)"), "{block}");
    assert!(block.contains("Run the widget tests before a release."), "the rule: {block}");
}

#[test]
fn a_use_brings_a_memory_back_and_filters_go_by_use() {
    let env = widgets();
    // Day 61: recalled, so used today.
    let out = env.mem_at(["recall", "Lyon", "--json"], 61 * DAY).output().unwrap();
    let recall: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(recall["results"][0]["path"], "facts/high.md");
    assert_eq!(recall["results"][0]["tier"], "cool", "the tier before this use: {recall}");
    assert_eq!(levels(&env, 61)[0], row("facts/high.md", "high", "hot"));
    // The shared filters: `--tier` and `--min-relevance` on list, recall, stats, export.
    let list = json_at(&env, &["list", "--tier", "hot"], 62);
    assert_eq!(list["memories"].as_array().unwrap().len(), 1, "{list}");
    let found = json_at(&env, &["recall", "widget", "--min-relevance", "medium", "--no-track"], 62);
    let paths: Vec<&str> =
        found["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths.len(), 3, "high, the rule and the pinned one: {paths:?}");
    assert!(!paths.contains(&"facts/plain.md") && !paths.contains(&"facts/low.md"), "{paths:?}");
    let stats = json_at(&env, &["stats", "--tier", "cool"], 62);
    assert_eq!(stats["roots"][0]["memory_count"], 4);
    let export = json_at(&env, &["export", "--min-relevance", "high"], 62);
    let exported: Vec<&str> = export["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(exported, ["facts/high.md", "rules/widget-tests.md"]);
    // The explanation says the tier and the level.
    let explain =
        env.mem_at(["recall", "Lyon", "--explain", "--no-track"], 62 * DAY).output().unwrap();
    let explain = String::from_utf8(explain.stdout).unwrap();
    assert!(explain.contains("hot (last used 1 day ago), relevance high"), "{explain}");
}

#[test]
fn a_fresh_state_starts_the_count_of_days_unused() {
    // Memories written long ago, in a root whose use was never recorded
    // (a fresh clone): cool, but not seen unused, so still at their level.
    let env = widgets();
    std::fs::remove_file(env.project().join(".state.json")).unwrap();
    assert_eq!(levels(&env, 90)[0], row("facts/high.md", "high", "cool"));
    // Recording begins with the next write of the state (a recall of
    // another memory here); over 30 days after that, what went unused drops
    // a step.
    env.mem_at(["recall", "noon", "--json"], 90 * DAY).assert().success();
    assert_eq!(levels(&env, 120)[0], row("facts/high.md", "high", "cool"));
    assert_eq!(levels(&env, 121)[0], row("facts/high.md", "medium", "cool"));
}

#[test]
fn an_invalid_relevance_is_a_lint_error_and_reads_as_medium() {
    let env = Env::with_project();
    env.write("facts/odd.md", "---\nkind: fact\nrelevance: urgent\n---\n# Odd\n\nA widget fact.\n");
    env.mem(["compile"]).assert().success();
    let out = env.mem(["lint"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "facts/odd.md:3: `relevance` should be high, medium or low; using the default"
        ),
        "{text}"
    );
    let list = env.json(["list"]);
    assert_eq!(list["memories"][0]["relevance"], "medium", "{list}");
    let refused = env.mem(["list", "--min-relevance", "urgent"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("high, medium, low"));
}
