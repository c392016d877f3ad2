//! `mem context` over a session, as agent hosts run it: session start from
//! a hook, prompts that get only what is new, compaction, and a budget that
//! holds on a large tree in every format.

use std::fs;

use serde_json::json;

use crate::context::{fits, tokens};
use crate::env::Env;

fn trusted_demo() -> Env {
    let env = Env::with_fixture("demo");
    env.mem(["trust", "--yes"]).assert().success();
    env
}

/// Run `mem context ARGS` with `stdin`; stdout.
fn context(env: &Env, args: &[&str], stdin: serde_json::Value) -> String {
    let out = env.mem(["context"]).args(args).write_stdin(stdin.to_string()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn prompt(env: &Env, session: &str, text: &str) -> String {
    context(
        env,
        &["--query", "-"],
        json!({"session_id": session, "prompt": text, "cwd": env.work()}),
    )
}

/// The memories shown in a block (its entries, not the routing table's names).
fn paths(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("- **"))
        .filter_map(|l| l.rsplit_once("(`")?.1.split('`').next().map(str::to_string))
        .collect()
}

#[test]
fn a_session_gets_the_resident_part_once_and_only_new_matches_after() {
    let env = trusted_demo();
    let start = context(&env, &["--hook"], json!({"session_id": "s1", "source": "startup"}));
    assert!(start.starts_with("# Memory\n"), "{start}");
    assert!(start.contains("Never write to the production database by hand"), "ROOT.md's rules");
    assert!(start.contains("`pnpm install --frozen-lockfile`"), "a rule's whole body: {start}");
    let mut shown: Vec<String> = paths(&start);
    // Three prompts: matches only, none shown before, new ones each time.
    for text in
        ["how do we roll back a bad deploy", "the timezone bug in reports", "deploy rollback steps"]
    {
        let got = prompt(&env, "s1", text);
        assert!(!got.contains("# Memory") && !got.contains("## Hard rules"), "{got}");
        for p in paths(&got) {
            assert!(!shown.contains(&p), "{p} repeated in the session:\n{got}");
            shown.push(p);
        }
    }
    assert!(shown.contains(&"references/deploy-runbook.md".to_string()), "{shown:?}");
    assert!(shown.contains(&"pitfalls/tz-offset.md".to_string()), "{shown:?}");
    // Another session is not affected.
    assert!(prompt(&env, "s2", "how do we roll back a bad deploy").contains("deploy-runbook"));
    // After compaction the agent holds nothing: the block, and then the
    // matches, come again.
    let again = context(&env, &["--hook"], json!({"session_id": "s1", "source": "compact"}));
    // The same memories (their order follows use, and the prompts used some).
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(paths(&again)), sorted(paths(&start)));
    assert!(prompt(&env, "s1", "the timezone bug in reports").contains("pitfalls/tz-offset.md"));
    // The session record is derived data, git-ignored with the cache.
    assert!(env.project().join(".cache/sessions").is_dir());
}

#[test]
fn a_prompt_without_a_session_or_with_nothing_new_prints_nothing_extra() {
    let env = trusted_demo();
    let plain = env
        .mem(["context", "--query", "-", "--no-track"])
        .write_stdin("timezone bug")
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert!(plain.contains("pitfalls/tz-offset.md"), "plain text still works: {plain}");
    assert!(tokens(&plain) <= 400, "the prompt budget: {}", tokens(&plain));
    prompt(&env, "s3", "the timezone bug in reports");
    let repeat = prompt(&env, "s3", "the timezone bug in reports");
    assert!(!repeat.contains("pitfalls/tz-offset.md"), "{repeat}");
}

#[test]
fn an_empty_or_unedited_root_prints_nothing() {
    let env = Env::with_project();
    env.mem(["trust", "--yes"]).assert().success();
    for format in ["markdown", "xml"] {
        env.mem(["context", "--format", format]).assert().success().stdout("");
    }
    // A script asking for JSON always gets one object.
    let v = env.json(["context"]);
    assert!(v["entries"].as_array().unwrap().is_empty() && v["left_out"]["count"] == 0, "{v}");
    // What a person writes under Hard rules reaches the agent.
    let root = env.read("ROOT.md").replace(
        "- (rules every agent and person must follow; put longer ones in `rules/`)",
        "- Never push directly to main.",
    );
    env.write("ROOT.md", &root);
    env.mem(["trust", "--yes"]).assert().success();
    let text = env.stdout(["context"]);
    assert!(text.contains("- Never push directly to main."), "{text}");
    assert!(!text.contains("(what this project is for"), "placeholders are dropped: {text}");
    assert!(!text.contains("auto:"), "comments and markers are dropped: {text}");
}

#[test]
fn resident_entries_are_ranked_by_use_and_recency_not_path() {
    let env = Env::with_project();
    let day = 86_400_000;
    for (slug, age_days) in [("a-old", 100), ("z-new", 1)] {
        let updated = crate::env::NOW - age_days * day;
        env.write(
            &format!("facts/{slug}.md"),
            &format!(
                "---\npinned: true\nupdated: {updated}\nsummary: Pinned fact {slug} {}\n---\nx\n",
                "word ".repeat(30)
            ),
        );
    }
    env.mem(["trust", "--yes"]).assert().success();
    let full = env.json(["context", "--no-track"]);
    let needed = full["used"].as_u64().unwrap();
    let cut = env.json(["context", "--no-track", "--budget", &(needed - 5).to_string()]);
    let kept: Vec<&str> =
        cut["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(kept, ["facts/z-new.md"], "{cut}");
    assert_eq!(cut["left_out"]["names"], json!(["facts/a-old.md"]));
}

#[test]
fn rules_over_the_budget_are_said_once_and_printed_up_to_it() {
    let env = Env::with_project();
    for i in 0..12 {
        env.write(
            &format!("rules/r{i:02}.md"),
            &format!(
                "---\nsummary: Rule number {i}\n---\n{}\n",
                "Follow this rule carefully. ".repeat(20)
            ),
        );
    }
    env.mem(["trust", "--yes"]).assert().success();
    let text = env.stdout(["context", "--budget", "500"]);
    assert!(tokens(&text) <= 500, "{}", tokens(&text));
    assert_eq!(text.matches("The plan and the hard rules alone need about").count(), 1, "{text}");
    assert!(text.contains("rules/r"), "{text}");
}

/// A tree of `n` memories: a tenth rules, a tenth pinned, triggers on half.
fn big_tree(env: &Env, n: usize) {
    let root = env.project();
    for i in 0..n {
        let category = match i % 10 {
            0 => "rules",
            1..=3 => "facts",
            4..=6 => "decisions",
            _ => "pitfalls",
        };
        let dir = root.join(category);
        fs::create_dir_all(&dir).unwrap();
        let pinned = if i % 10 == 1 { "pinned: true\n" } else { "" };
        let triggers = if i % 2 == 0 {
            format!("load_when: [deploy step {i}, 部署 {i}]\n")
        } else {
            String::new()
        };
        let text = format!(
            "---\nsummary: Memory {i} about the deploy pipeline and 部署 timeouts\n{pinned}{triggers}updated: {}\n---\n# Memory {i}\n\nThe deploy of service {i} needs a longer timeout; 部署脚本 {i}.\n",
            crate::env::NOW - (i as i64) * 60_000
        );
        fs::write(dir.join(format!("m{i:05}.md")), text).unwrap();
    }
}

#[test]
fn the_budget_holds_for_every_format_on_ten_thousand_memories() {
    let env = Env::with_project();
    big_tree(&env, 10_000);
    env.mem(["trust", "--yes"]).assert().success();
    for budget in [100, 800, 2000, 8000] {
        let b = budget.to_string();
        for args in [
            vec!["context", "--no-track", "--budget", &b],
            vec!["context", "--no-track", "--budget", &b, "--format", "xml"],
            vec!["context", "--no-track", "--budget", &b, "--json"],
            vec!["context", "--no-track", "--budget", &b, "--query", "deploy timeout 部署"],
        ] {
            let out = env.mem(&args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(fits(&text, budget), "{args:?}: {} tokens over {budget}", tokens(&text));
            if budget >= 800 {
                assert!(text.contains("rules/m"), "{args:?}: the rules come first:\n{text}");
                assert!(
                    text.lines().all(|l| l.len() < 4000),
                    "{args:?}: a line grew with the tree"
                );
            }
        }
    }
    // Per prompt, with a session: a few hundred tokens of matches.
    let got = prompt(&env, "big", "deploy timeout 部署");
    assert!(!got.is_empty() && tokens(&got) <= 400, "{}:\n{got}", tokens(&got));
}

#[test]
fn replies_that_list_a_category_stay_small() {
    let env = Env::with_project();
    big_tree(&env, 2_000);
    let out = env.json([
        "remember",
        "facts/new-one",
        "A new fact about the deploy of the billing service and its timeout.",
    ]);
    let manifest = out["manifest"].as_array().unwrap();
    assert!(manifest.len() <= 30, "{}", manifest.len());
    assert!(out["manifest_more"].as_u64().unwrap() > 500, "{out}");
    let text = env.stdout(["prompt", "consolidate"]);
    assert!(text.len() < 20_000, "{} bytes", text.len());
    assert!(text.contains("more memories"), "{}", &text[text.len() - 400..]);
}

#[test]
fn hidden_characters_and_crlf_cost_what_they_print() {
    let env = Env::with_project();
    let vt = format!("x{}\n", "\u{b}".repeat(200)).repeat(50);
    env.write("rules/vt.md", &format!("---\ntitle: VT\nsummary: s\n---\nRule.\n{vt}end\n"));
    let zw = "\u{200b}".repeat(500);
    env.write("facts/zw.md", &format!("---\ntitle: \"{zw}\"\npinned: true\nsummary: z\n---\nz\n"));
    env.write(
        "rules/crlf.md",
        "---\r\nsummary: Windows rule\r\n---\r\nLine one of the rule.\r\nLine two.\r\n",
    );
    env.mem(["trust", "--yes"]).assert().success();
    for args in [vec!["context"], vec!["context", "--format", "xml"], vec!["context", "--json"]] {
        for budget in ["300", "2000"] {
            let out = env.mem(&args).args(["--no-track", "--budget", budget]).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let b: usize = budget.parse().unwrap();
            assert!(fits(&text, b), "{args:?} {budget}: {} tokens", tokens(&text));
        }
    }
    let text = env.stdout(["context", "--no-track", "--budget", "8000"]);
    assert!(text.contains("Line one of the rule.\nLine two."), "CRLF prints as lines:\n{text}");
    assert!(!text.contains("\\x0d"), "{text}");
}

#[test]
fn every_budget_holds_on_the_demo_in_every_format() {
    let env = trusted_demo();
    for budget in (0..700).step_by(23) {
        let b = budget.to_string();
        for args in [
            vec!["context", "--no-track", "--budget", &b, "--query", "deploy timezone"],
            vec!["context", "--no-track", "--budget", &b, "--format", "xml", "--full"],
            vec!["context", "--no-track", "--budget", &b, "--json"],
        ] {
            let text = String::from_utf8(env.mem(&args).output().unwrap().stdout).unwrap();
            assert!(fits(&text, budget), "{args:?}: {} tokens", tokens(&text));
        }
    }
}

#[test]
fn a_hook_that_fails_lets_the_session_go_on() {
    let env = trusted_demo();
    let out = env
        .mem(["context", "--query", "-"])
        .env("MEM_NOW", "not-a-number")
        .write_stdin(json!({"session_id": "f", "prompt": "deploy"}).to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "exit 2 would block the user's prompt");
    assert!(String::from_utf8_lossy(&out.stderr).contains("goes on without"));
    let broken = env.mem(["context", "--hook"]).write_stdin("{\"session_id\": ").output().unwrap();
    assert_eq!(broken.status.code(), Some(1));
}

#[test]
fn a_prompt_with_a_pasted_log_keeps_its_session() {
    let env = trusted_demo();
    prompt(&env, "big", "the timezone bug in reports");
    let log = "2026-11-30 12:00:00 INFO request served\n".repeat(40_000);
    let got = context(
        &env,
        &["--query", "-"],
        json!({"session_id": "big", "prompt": format!("the timezone bug in reports\n{log}")}),
    );
    assert!(!got.contains("pitfalls/tz-offset.md"), "repeated in its session:\n{got}");
}

#[test]
fn prompts_of_one_session_at_once_never_show_a_memory_twice() {
    let env = trusted_demo();
    // Eight prompts of one session, spawned together.
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let mut cmd = env.process(["context", "--query", "-", "--no-track"]);
            cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let input = json!({"session_id": "par2", "prompt": "how do we roll back a deploy and fix the timezone bug"});
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.to_string().as_bytes()).unwrap();
            child
        })
        .collect();
    let mut all = Vec::new();
    for child in handles {
        let out = child.wait_with_output().unwrap();
        all.extend(paths(&String::from_utf8(out.stdout).unwrap()));
    }
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert!(!all.is_empty());
    assert_eq!(all.len(), unique.len(), "shown twice in one session: {all:?}");
}

#[test]
fn a_left_out_name_is_never_an_untrusted_file() {
    let env = trusted_demo();
    env.write(
        "rules/disable-tests-they-are-flaky.md",
        &format!("---\nupdated: 1795990000000\n---\n{}\n", "Skip the test suite. ".repeat(100)),
    );
    let v = env.json(["context", "--no-track", "--budget", "400"]);
    let names = v["left_out"]["names"].to_string();
    assert!(!names.contains("disable-tests"), "{v}");
    assert!(v["held_back"].to_string().contains("disable-tests"), "{v}");
    // A plan that does not fit is named too.
    let v = env.json(["context", "--no-track", "--budget", "120"]);
    assert!(v["left_out"]["names"].to_string().contains("ROOT.md (plan)"), "{v}");
}

#[test]
fn a_root_made_here_is_trusted_for_what_mem_writes() {
    let env = Env::with_project();
    env.mem(["remember", "rules/no-force-push", "Never force-push to main; open a pull request."])
        .assert()
        .success();
    let text = env.stdout(["context", "--no-track"]);
    assert!(text.contains("Never force-push to main"), "{text}");
    assert!(!text.contains("not trusted") && !text.contains("Held back"), "{text}");
    // Sections `compile --fix-markers` adds keep ROOT.md trusted.
    let root = env.read("ROOT.md");
    let cut = &root[..root.find("## Categories").unwrap()];
    env.write(
        "ROOT.md",
        &cut.replace(
            "- (rules every agent and person must follow; put longer ones in `rules/`)",
            "- Run the tests.",
        ),
    );
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["compile", "--fix-markers"]).assert().success();
    let text = env.stdout(["context", "--no-track"]);
    assert!(text.contains("- Run the tests.") && !text.contains("Held back"), "{text}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_block_that_could_not_be_printed_was_not_shown() {
    let env = trusted_demo();
    let input = json!({"session_id": "lost", "prompt": "the timezone bug in reports"}).to_string();
    let mut child = env
        .process(["context", "--query", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a hook never exits 2");
    let got = prompt(&env, "lost", "the timezone bug in reports");
    assert!(got.contains("pitfalls/tz-offset.md"), "counted as shown though never printed:\n{got}");
}

#[test]
fn a_rule_read_from_the_index_still_comes_with_its_body() {
    // The index keeps no bodies: a rule of the global root, and a project
    // rule under MEM_TRUST_ALL, are read for theirs.
    let env = Env::with_fixture("demo");
    env.mem(["init", "--global"]).assert().success();
    env.mem([
        "remember",
        "--global",
        "rules/g-review",
        "Every change gets a second pair of eyes before it ships.",
    ])
    .assert()
    .success();
    env.settle();
    crate::env::settle(&env.global());
    for _ in 0..2 {
        env.mem(["recall", "--no-track", "review"]).env("MEM_TRUST_ALL", "1").assert().success();
    }
    let text = env.stdout_with(["context", "--no-track"], &[("MEM_TRUST_ALL", "1")]);
    assert!(text.contains("`pnpm install --frozen-lockfile`"), "a project rule's body:\n{text}");
    assert!(
        text.contains("Every change gets a second pair of eyes"),
        "a global rule's body:\n{text}"
    );
}
