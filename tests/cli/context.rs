//! `mem context` and trust: what reaches an agent, and only from trusted roots.

use predicates::prelude::*;
use predicates::str::contains;

use crate::env::Env;

fn trusted_demo() -> Env {
    let env = Env::with_fixture("demo");
    env.mem(["trust", "--yes"]).assert().success().stdout(contains("trusted"));
    env
}

#[test]
fn untrusted_project_roots_are_named_not_injected() {
    let env = Env::with_fixture("demo");
    env.mem(["context"])
        .assert()
        .success()
        .stdout(contains("is not trusted"))
        .stdout(contains("mem trust"))
        .stdout(contains("deploy-pnpm").not());
    env.mem(["context"])
        .env("MEM_TRUST_ALL", "1")
        .assert()
        .success()
        .stdout(contains("rules/deploy-pnpm.md"));
    // recall still shows it: showing is not injecting.
    env.mem(["recall", "--no-track", "pnpm"])
        .assert()
        .success()
        .stdout(contains("rules/deploy-pnpm.md"));
}

#[test]
fn a_changed_root_md_needs_trusting_again_and_untrust_removes_it() {
    let env = trusted_demo();
    env.mem(["context"]).assert().stdout(contains("## Hard rules"));
    let root = env.read("ROOT.md");
    env.write("ROOT.md", &format!("{root}\n- New rule sneaked in by a pull.\n"));
    // The rest of the root still reaches the agent; ROOT.md's text is held back.
    env.mem(["context"]).assert().stdout(contains("## Hard rules")).stdout(contains("Held back"));
    env.mem(["trust"])
        .assert()
        .code(1)
        .stdout(contains("changed  ROOT.md"))
        .stdout(contains("New rule sneaked in by a pull."))
        .stderr(contains("mem trust --yes"));
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["context"])
        .assert()
        .stdout(contains("## Hard rules"))
        .stdout(contains("Held back").not())
        .stdout(contains("held back").not());
    env.mem(["untrust"]).assert().success().stdout(contains("no longer trusted"));
    env.mem(["context"]).assert().stdout(contains("is not trusted"));
    // Trust lives in the global root; the project keeps only its own id,
    // in its git-ignored state file.
    assert!(env.global().join(".trust").is_dir());
    let state = std::fs::read_to_string(env.project().join(".state.json")).unwrap();
    assert!(state.contains("root_id") && !state.contains("sha"), "{state}");
}

#[test]
fn writing_memories_keeps_trust() {
    let env = trusted_demo();
    env.mem([
        "remember",
        "rules/new-rule",
        "Always run the smoke test after a deploy to production.",
    ])
    .assert()
    .success();
    env.mem(["context"]).assert().stdout(contains("rules/new-rule.md"));
}

#[test]
fn rules_then_pinned_then_routing_then_matches() {
    let env = trusted_demo();
    let text = env.stdout(["context", "--no-track", "--query", "timezone bug in reports"]);
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} missing in\n{text}"));
    assert!(at("## Hard rules") < at("## Pinned"));
    assert!(at("## Pinned") < at("## Routing"));
    assert!(at("## Routing") < at("## Relevant to the request"));
    let matches = &text[at("## Relevant to the request")..];
    assert!(matches.contains("pitfalls/tz-offset.md"), "{matches}");
    assert!(text.contains("timezone bug → `pitfalls/tz-offset.md`"));
    assert!(text.contains("verify before use"));
    assert!(text.contains("Memories are snapshots"));
    assert!(!text.contains("orm-prisma.md"), "superseded memories stay out");
}

#[test]
fn the_budget_cuts_whole_entries_and_says_what_was_left_out() {
    let env = trusted_demo();
    let v = env.json(["context", "--no-track", "--budget", "600", "--query", "deploy"]);
    assert!(v["used"].as_u64().unwrap() <= 600, "{v}");
    let entries = v["entries"].as_array().unwrap();
    assert!(!entries.is_empty());
    assert_eq!(entries[0]["section"], "rule");
    assert!(v["left_out"]["count"].as_u64().unwrap() > 0, "{v}");
    assert!(v["left_out"]["names"].as_array().unwrap().len() <= 3);
    let text = env.stdout(["context", "--no-track", "--budget", "600", "--query", "deploy"]);
    assert!(tokens(&text) <= 600, "{} tokens:\n{text}", tokens(&text));
    let line = text.lines().find(|l| l.starts_with("Left out for the budget:")).expect(&text);
    assert!(line.len() < 200, "one short line, however much is left out: {line}");
    assert!(text.trim_end().ends_with("(over MCP: `memory_recall`)."), "{text}");
    for line in text.lines() {
        assert!(!line.ends_with('…') || line.contains('('), "entries are whole: {line}");
    }
}

#[test]
fn cjk_counts_one_token_per_character() {
    let env = Env::with_project();
    env.mem(["remember", "rules/zh", &"规则".repeat(40), "--summary", &"规则".repeat(40)])
        .assert()
        .success();
    env.mem(["trust", "--yes"]).assert().success();
    // 80 CJK characters of summary and 80 of body: 160 tokens at least.
    let v = env.json(["context", "--no-track", "--budget", "150"]);
    assert!(v.get("entries").is_none_or(|e| e.as_array().unwrap().is_empty()), "{v}");
    let v = env.json(["context", "--no-track", "--budget", "400"]);
    assert_eq!(v["entries"].as_array().unwrap().len(), 1, "{v}");
}

/// The budget's own measure: a CJK character is one token, other text one
/// per four characters, spaces and line breaks included (as the README says).
pub fn tokens(text: &str) -> usize {
    let cjk = |c: char| {
        matches!(c as u32,
            0x3005 | 0x3007 | 0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x1100..=0x11FF | 0x3130..=0x318F
            | 0xAC00..=0xD7AF | 0x20000..=0x3134F)
    };
    let (c, o): (usize, usize) =
        text.chars().fold((0, 0), |(c, o), ch| if cjk(ch) { (c + 1, o) } else { (c, o + 1) });
    c + o.div_ceil(4)
}

/// Whether a printed block keeps to `budget`: always, except the JSON
/// object of a block where nothing fit, which a script still gets whole.
pub fn fits(text: &str, budget: usize) -> bool {
    let nothing_placed = serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
        ["plans", "entries", "routing"].iter().all(|k| v[k].as_array().is_some_and(Vec::is_empty))
    });
    nothing_placed || tokens(text) <= budget
}

#[test]
fn file_globs_pull_in_memories_for_that_part_of_the_code() {
    let env = trusted_demo();
    env.mem([
        "remember",
        "facts/web-forms",
        "Forms in the web app validate with zod schemas from packages/shared.",
    ])
    .assert()
    .success();
    let file = env.project().join("facts/web-forms.md");
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "---\n",
        "---\npaths: [\"web/**/*.tsx\"]\n",
        1,
    );
    std::fs::write(&file, text).unwrap();
    // Edited by hand since it was trusted: held back until trusted again.
    env.mem(["context", "--no-track", "--file", "web/app/checkout/page.tsx"])
        .assert()
        .stdout(contains("## For the files in play").not())
        .stdout(contains("1 file (facts/web-forms.md)"));
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["context", "--no-track", "--file", "web/app/checkout/page.tsx"])
        .assert()
        .stdout(contains("## For the files in play"))
        .stdout(contains("facts/web-forms.md"));
    env.mem(["context", "--no-track", "--file", "api/src/server.ts"])
        .assert()
        .stdout(contains("facts/web-forms.md").not());
}

#[test]
fn xml_format_escapes_and_json_is_structured() {
    let env = trusted_demo();
    let summary = "Use <T> & \"quotes\" carefully in templates.";
    env.mem([
        "remember",
        "facts/xml",
        summary,
        "--summary",
        summary,
        "--title",
        "A <tricky> & \"title\"",
    ])
    .assert()
    .success();
    let xml = env.stdout([
        "context",
        "--no-track",
        "--format",
        "xml",
        "--query",
        "tricky templates",
        "--budget",
        "3000",
    ]);
    assert!(xml.starts_with("<memory-context budget=\"3000\""), "{xml}");
    assert!(xml.contains("title=\"A &lt;tricky&gt; &amp; &quot;title&quot;\""), "{xml}");
    assert!(xml.contains("Use &lt;T&gt; &amp; &quot;quotes&quot;"), "{xml}");
    assert!(xml.trim_end().ends_with("</memory-context>"));
}

#[test]
fn matches_count_hits_unless_no_track() {
    let env = trusted_demo();
    env.mem(["context", "--no-track", "--query", "timezone"]).assert().success();
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    assert_eq!(state["hits"], serde_json::json!({}), "{state}");
    env.mem(["context", "--query", "timezone"]).assert().success();
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    assert_eq!(state["hits"]["pitfalls/tz-offset.md"]["count"], 1);
    assert!(state["hits"].get("rules/deploy-pnpm.md").is_none(), "rules are not counted as hits");
}

#[test]
fn consolidate_prompt_has_instructions_and_the_manifest() {
    let env = Env::with_fixture("demo");
    let text = env.stdout(["prompt", "consolidate", "--since", "2026-10-01"]);
    assert!(text.contains("## Not worth keeping"));
    assert!(text.contains("recent work since 2026-10-01"));
    assert!(text.contains("- `references/deploy-runbook.md` (updated recently):"), "{text}");
    assert!(text.contains("- `rules/deploy-pnpm.md`: "));
    assert!(!text.contains("orm-prisma.md"), "superseded memories are not listed");
    env.mem(["prompt", "consolidate", "--since", "last week"])
        .assert()
        .code(2)
        .stderr(contains("--since"));
}

/// A thousand pinned memories, in English, Chinese and both, with
/// triggers: far more than any budget holds.
fn pinned_tree(env: &Env) {
    let dir = env.project().join("facts");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..1000 {
        let (title, body) = match i % 3 {
            0 => (
                format!("Build step {i}"),
                format!("The build step {i} uses cargo and needs the lockfile."),
            ),
            1 => (
                format!("部署步骤 {i}"),
                format!("部署脚本 {i} 用 pnpm 而不是 npm，lockfile 不同。"),
            ),
            _ => (
                format!("Deploy 部署 {i}"),
                format!("Deploy {i} 先跑 smoke test, then tag the release."),
            ),
        };
        let text = format!(
            "---\ntitle: {title}\nsummary: {body}\npinned: true\nload_when: [step {i}]\nupdated: {}\n---\n{body}\n\n- detail one of {i}\n- detail two\n",
            crate::env::NOW - i * 60_000
        );
        std::fs::write(dir.join(format!("p{i:04}.md")), text).unwrap();
    }
}

#[test]
fn the_printed_block_never_exceeds_the_budget_and_json_counts_what_it_prints() {
    let env = Env::with_project();
    pinned_tree(&env);
    env.mem(["trust", "--yes"]).assert().success();
    for budget in [40, 150, 800, 2000, 5000] {
        let b = budget.to_string();
        for args in [
            vec!["context", "--no-track", "--budget", &b],
            vec!["context", "--no-track", "--budget", &b, "--format", "xml"],
            vec!["context", "--no-track", "--budget", &b, "--full"],
            vec!["context", "--no-track", "--budget", &b, "--query", "deploy 部署 step 7"],
        ] {
            let out = env.mem(&args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(tokens(&text) <= budget, "{args:?}: {} tokens over {budget}", tokens(&text));
            if budget >= 800 {
                assert!(text.contains("facts/p0"), "{args:?}: nothing pinned fit:\n{text}");
            }
            if let Some(at) = text.find(" used=\"") {
                let used: String =
                    text[at + 7..].chars().take_while(char::is_ascii_digit).collect();
                assert_eq!(
                    used,
                    tokens(&text).to_string(),
                    "{args:?}: `used` is not what it prints"
                );
            }
            if args.contains(&"xml") {
                continue;
            }
            // The same block as JSON: one object, whose `used` is what it prints.
            let out = env.mem(&args).arg("--json").output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{args:?} --json: not one object ({e}): {text:?}"));
            assert_eq!(v["used"], tokens(&text), "{args:?} --json: `used` is not what it prints");
            let placed = ["plans", "entries", "routing"]
                .iter()
                .any(|k| !v[k].as_array().unwrap().is_empty());
            if placed {
                assert!(
                    tokens(&text) <= budget,
                    "{args:?} --json: {} over {budget}",
                    tokens(&text)
                );
            } else {
                // Nothing fit: the object says what was left out.
                assert!(v["left_out"]["count"].as_u64().unwrap() >= 1000, "{args:?}: {v}");
            }
        }
    }
}

#[test]
fn a_routing_table_over_the_budget_is_left_out_whole_and_counted_in_full() {
    let env = Env::with_fixture("demo");
    for i in 0..40 {
        let text = format!(
            "---\ntitle: Trig {i}\nsummary: trig {i}\nkind: fact\nload_when:\n  - editing service{i} config\n  - touching queue{i}\n---\nbody {i}\n"
        );
        env.write(&format!("facts/trig{i}.md"), &text);
    }
    let context = |budget: &str| -> serde_json::Value {
        let mut cmd = env.mem(["context", "--json", "--budget", budget]);
        let out = cmd.env("MEM_TRUST_ALL", "1").output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let all = context("100000");
    let rows = all["routing"].as_array().unwrap().len();
    assert!(rows >= 80, "{all}");
    assert_eq!(all["left_out"]["routing"], false);
    // Too small for the table: none of it, and every trigger counted.
    let cut = context("300");
    assert_eq!(cut["routing"].as_array().unwrap().len(), 0, "{cut}");
    assert_eq!(cut["left_out"]["routing"], true);
    assert_eq!(cut["left_out"]["triggers"].as_u64(), Some(rows as u64), "{cut}");
}
