//! `mem recall` on the demo tree: every flag, the JSON shape, hit counting.

use std::fs;

use predicates::str::contains;
use serde::Deserialize;

use crate::env::Env;

/// The JSON shape, pinned: an unknown or missing field fails the test.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    schema: String,
    query: String,
    results: Vec<Found>,
    warnings: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Found {
    path: String,
    root: String,
    title: String,
    summary: String,
    kind: String,
    score: f64,
    matched: Vec<String>,
    updated: i64,
    updated_iso: String,
    age: String,
    last_used: i64,
    last_used_iso: String,
    tier: String,
    effective_relevance: String,
    superseded_by: Option<String>,
    file: String,
    #[serde(default)]
    explanation: Option<serde_json::Value>,
}

fn recall(env: &Env, args: &[&str]) -> Output {
    let out = env.mem(["recall", "--json"]).args(args).output().unwrap();
    assert!(out.status.code() == Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let parsed: Output = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(parsed.schema, "mem-recall/1");
    for found in &parsed.results {
        assert!(found.updated_iso.ends_with('Z') && found.updated_iso.contains('T'), "{found:?}");
        // Its use as of now: last used no earlier than updated, a tier, a level.
        assert!(
            found.last_used >= found.updated && found.last_used_iso.ends_with('Z'),
            "{found:?}"
        );
        assert!(["hot", "warm", "cool"].contains(&found.tier.as_str()), "{found:?}");
        assert!(["high", "medium", "low"].contains(&found.effective_relevance.as_str()));
    }
    parsed
}

fn paths(out: &Output) -> Vec<&str> {
    out.results.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn finds_a_cjk_word_inside_a_longer_run() {
    let env = Env::with_fixture("demo");
    let out = recall(&env, &["部署"]);
    assert_eq!(out.query, "部署");
    assert!(paths(&out).contains(&"rules/deploy-pnpm.md"), "{:?}", paths(&out));
    let first = &out.results[0];
    assert!(first.matched.contains(&"部署".to_string()));
    assert_eq!(first.root, "project");
    assert!(
        first.file.ends_with(".memory/rules/deploy-pnpm.md") || first.file.contains(".memory/")
    );
    assert!(out.results.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(out.warnings.is_empty());
    if first.path == "rules/deploy-pnpm.md" {
        assert_eq!(first.updated, 1_788_150_000_000);
        assert_eq!(first.age, "3 months ago");
    }
}

#[test]
fn mixed_language_query_ranks_the_pnpm_rule_first() {
    let env = Env::with_fixture("demo");
    let out = recall(&env, &["部署脚本", "pnpm"]);
    assert_eq!(out.results[0].path, "rules/deploy-pnpm.md");
    assert_eq!(out.results[0].title, "部署脚本只用 pnpm");
    assert!(!out.results[0].summary.is_empty());
    assert_eq!(out.results[0].kind, "rule");
}

#[test]
fn limit_category_and_kind_filter() {
    let env = Env::with_fixture("demo");
    assert_eq!(recall(&env, &["-n", "2", "部署"]).results.len(), 2);
    let out = recall(&env, &["--category", "pitfalls", "部署"]);
    assert!(!out.results.is_empty() && paths(&out).iter().all(|p| p.starts_with("pitfalls/")));
    let out = recall(&env, &["--kind", "decision", "ORM"]);
    assert!(!out.results.is_empty() && out.results.iter().all(|f| f.kind == "decision"));
    env.mem(["recall", "-n", "0", "x"]).assert().code(2);
}

#[test]
fn superseded_memories_only_with_all() {
    let env = Env::with_fixture("demo");
    let out = recall(&env, &["Prisma"]);
    assert!(!paths(&out).contains(&"decisions/orm-prisma.md"), "{:?}", paths(&out));
    let out = recall(&env, &["--all", "Prisma"]);
    let old = out
        .results
        .iter()
        .find(|f| f.path == "decisions/orm-prisma.md")
        .expect("listed with --all");
    assert_eq!(old.superseded_by.as_deref(), Some("decisions/orm-drizzle.md"));
}

#[test]
fn role_private_memories_need_the_role() {
    let env = Env::with_fixture("demo");
    env.mem([
        "remember",
        "facts/reviewer-note",
        "flaky checkout reviewer checklist",
        "--role",
        "reviewer",
    ])
    .assert()
    .success();
    let without = recall(&env, &["--no-track", "reviewer checklist"]);
    assert!(!paths(&without).contains(&"facts/reviewer-note.md"));
    let with = recall(&env, &["--no-track", "--role", "reviewer", "reviewer checklist"]);
    assert_eq!(with.results[0].path, "facts/reviewer-note.md");
    let out = env
        .mem(["recall", "--json", "--no-track", "reviewer checklist"])
        .env("MEM_ROLE", "reviewer")
        .output()
        .unwrap();
    let by_env: Output = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(by_env.results[0].path, "facts/reviewer-note.md");
}

#[test]
fn load_when_trigger_in_the_query_wins_and_is_explained() {
    let env = Env::with_fixture("demo");
    let out = recall(&env, &["--explain", "we hit a timezone bug in reports"]);
    assert_eq!(out.results[0].path, "pitfalls/tz-offset.md");
    let e = out.results[0].explanation.as_ref().expect("--explain adds explanation");
    assert_eq!(e["trigger"]["trigger"], "timezone bug");
    assert!(e["terms"].as_array().unwrap().iter().any(|t| t["term"] == "timezon"));
    let text = env.stdout(["recall", "--explain", "-n", "1", "timezone bug"]);
    assert!(text.contains("+ trigger \"timezone bug\""), "{text}");
    assert!(text.contains("term timezon"), "{text}");
}

#[test]
fn english_word_forms_meet() {
    let env = Env::with_fixture("demo");
    let a = paths(&recall(&env, &["--no-track", "migrations"]))
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    let b = paths(&recall(&env, &["--no-track", "migration"]))
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[test]
fn human_output_fits_the_terminal_and_a_pipe_gets_whole_lines() {
    let env = Env::with_fixture("demo");
    let cols = |line: &str| -> usize {
        line.chars().map(|c| if (c as u32) >= 0x1100 { 2 } else { 1 }).sum()
    };
    let text = env.stdout_with(["recall", "-n", "3", "部署"], &[("COLUMNS", "80")]);
    assert!(text.starts_with("rules/deploy-pnpm.md  project · "), "{text}");
    assert!(text.contains(" ago\n"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when piped");
    for line in text.lines() {
        assert!(cols(line) <= 80, "{} columns: {line}", cols(line));
        assert_eq!(line, line.trim_end(), "no trailing space");
    }
    // A wide terminal is used; a flag is never split.
    env.write(
        "facts/node-memory.md",
        "---\nsummary: zebrafish CI runs node with --max-old-space-size=4096 and the build still needs more memory on the large runners every night\n---\nbody\n",
    );
    let wide = env.stdout_with(["recall", "-n", "1", "zebrafish"], &[("COLUMNS", "200")]);
    assert!(wide.lines().any(|l| cols(l) > 100), "{wide}");
    let narrow = env.stdout_with(["recall", "-n", "1", "zebrafish"], &[("COLUMNS", "40")]);
    assert!(narrow.contains("--max-old-space-size=4096"), "{narrow}");
    // A pipe gets the summary on one line, whole.
    let piped = env.stdout(["recall", "-n", "1", "zebrafish"]);
    assert!(piped.contains("every night\n"), "{piped}");
    let zh = env.mem(["recall", "-n", "1", "部署"]).env("LANG", "zh_CN.UTF-8").output().unwrap();
    assert!(String::from_utf8_lossy(&zh.stdout).contains("前\n"));
}

#[test]
fn nothing_found_exits_1_with_a_hint() {
    let env = Env::with_fixture("demo");
    env.mem(["recall", "zzyzx-nothing"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains("no memory matches `zzyzx-nothing`"));
    let out = env.mem(["recall", "--json", "qqqq"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Output = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.results.is_empty());
}

#[test]
fn each_result_shown_counts_one_hit() {
    let env = Env::with_fixture("demo");
    let out = recall(&env, &["-n", "3", "部署"]);
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    for f in &out.results {
        assert_eq!(state["hits"][&f.path]["count"], 1, "{}", f.path);
        assert_eq!(state["hits"][&f.path]["last"], crate::env::NOW);
    }
    assert_eq!(state["hits"].as_object().unwrap().len(), 3);
    recall(&env, &["-n", "1", "部署"]);
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    assert_eq!(state["hits"][&out.results[0].path]["count"], 2);
    let detail = env.json(["inspect", &out.results[0].path]);
    assert_eq!(detail["hits"]["count"], 2);
    // Markdown untouched by recall.
    assert_eq!(
        env.read("rules/deploy-pnpm.md"),
        fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/demo/.memory/rules/deploy-pnpm.md")
        )
        .unwrap()
    );
}

#[test]
fn no_track_writes_no_state() {
    let env = Env::with_fixture("demo");
    recall(&env, &["--no-track", "部署"]);
    assert!(!env.project().join(".state.json").exists());
}

#[test]
fn corrupt_state_is_set_aside_and_recall_still_works() {
    let env = Env::with_fixture("demo");
    env.write(".state.json", "{\"hits\": [broken");
    let out = env.mem(["recall", "-n", "1", "部署"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".state.json is corrupt"), "{stderr}");
    let bad = env.project().join(format!(".state.json.bad-{}", crate::env::NOW));
    assert_eq!(fs::read_to_string(bad).unwrap(), "{\"hits\": [broken");
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    assert_eq!(state["hits"].as_object().unwrap().len(), 1);
}

#[test]
fn concurrent_recalls_lose_no_hit() {
    let env = Env::with_fixture("demo");
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    env.mem(["recall", "-n", "1", "部署脚本", "pnpm"]).assert().success();
                }
            });
        }
    });
    let state: serde_json::Value = serde_json::from_str(&env.read(".state.json")).unwrap();
    assert_eq!(state["hits"]["rules/deploy-pnpm.md"]["count"], 400);
}

#[test]
fn project_beats_global_on_a_tie() {
    let env = Env::with_project();
    env.mem(["init", "--global"]).assert().success();
    env.mem(["--global", "remember", "facts/a", "identical words here"]).assert().success();
    env.mem(["remember", "facts/b", "identical words here"]).assert().success();
    let out = recall(&env, &["identical words"]);
    assert_eq!(paths(&out), ["facts/b.md", "facts/a.md"]);
    assert_eq!(out.results[0].root, "project");
    assert_eq!(out.results[1].root, "global");
    assert!((out.results[0].score - out.results[1].score).abs() < 1e-6);
}

#[test]
fn results_survive_a_state_file_that_cannot_be_written() {
    let env = Env::with_fixture("demo");
    // A folder where the lock file should be: the state cannot be saved.
    fs::create_dir_all(env.project().join(".state.json.lock")).unwrap();
    let out = env.mem(["recall", "-n", "1", "部署"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("rules/deploy-pnpm.md"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hit counts not saved"));
}

#[test]
fn matched_names_the_words_as_typed_not_the_stems() {
    let env = Env::with_fixture("demo");
    let v = env.json(["recall", "--no-track", "timezones", "deploying", "zzzunmatched"]);
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        for word in r["matched"].as_array().unwrap() {
            let word = word.as_str().unwrap();
            assert!(["timezones", "deploying"].contains(&word), "{word} in {r}");
        }
    }
    assert!(results.iter().any(|r| r["matched"] == serde_json::json!(["timezones"])), "{v}");
}
