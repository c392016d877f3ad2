//! Write-time guardrails on `mem remember`: quality warnings, near-duplicate
//! hints, refused secrets, the category manifest and the budget warning.

use predicates::prelude::*;
use predicates::str::contains;

use crate::env::Env;

#[test]
fn weak_text_is_saved_with_warnings() {
    let env = Env::with_project();
    env.mem(["remember", "facts/short", "tiny"])
        .assert()
        .success()
        .stderr(contains("too short (4 letters)"));
    env.mem([
        "remember",
        "facts/now",
        "We are currently moving the orders table to a new cluster.",
    ])
    .assert()
    .success()
    .stderr(contains("passing state (`currently`)"));
    env.mem(["remember", "facts/vague", "缓存可能在部署的时候失效，需要重新预热一下。"])
        .assert()
        .success()
        .stderr(contains("vague (`可能`)"));
    assert!(env.project().join("facts/vague.md").is_file());
    env.mem([
        "remember",
        "facts/good",
        "Deploys use pnpm, never npm: npm writes a different lockfile.",
    ])
    .assert()
    .success()
    .stderr(predicate::str::contains("warning").not());
}

/// Save a near-copy of the pnpm rule (`rules/pnpm`) as `facts/pnpm-again`.
fn remember_near_copy(env: &Env) -> assert_cmd::assert::Assert {
    env.mem([
        "remember",
        "facts/pnpm-again",
        "部署脚本用 pnpm 而不是 npm，npm 会生成不同的 lockfile！",
    ])
    .assert()
    .success()
}

#[test]
fn near_duplicates_name_the_existing_memory() {
    let env = Env::with_project();
    env.mem([
        "remember",
        "rules/pnpm",
        "部署脚本用 pnpm 而不是 npm，因为 npm 会生成不同的 lockfile。",
    ])
    .assert()
    .success();
    remember_near_copy(&env)
        .stderr(contains("nearly the same as project rules/pnpm.md"))
        .stderr(contains("--supersedes rules/pnpm"));
}

#[test]
fn a_near_duplicate_is_found_among_many_memories_that_share_its_words() {
    let env = Env::with_project();
    let words = ["deploy", "staging", "rollback", "window", "lockfile", "pnpm", "cache", "部署"];
    for i in 0..150 {
        // Every memory shares a few words with the new one; none is close.
        let text: Vec<&str> = (0..5).map(|k| words[(i * 7 + k * 3) % words.len()]).collect();
        env.write(&format!("facts/n{i}.md"), &format!("note {i}: {}\n", text.join(" ")));
    }
    env.write("rules/pnpm.md", "部署脚本用 pnpm 而不是 npm，因为 npm 会生成不同的 lockfile。\n");
    remember_near_copy(&env)
        .stderr(contains("nearly the same as project rules/pnpm.md"))
        .stderr(contains("nearly the same as project facts/n").not());
}

#[test]
fn secrets_are_refused_unless_allowed() {
    let env = Env::with_project();
    env.mem(["remember", "facts/aws", "CI uses key AKIAIOSFODNN7EXAMPLE1 for uploads"])
        .assert()
        .code(2)
        .stderr(contains("facts/aws.md:6: this looks like an AWS access key id"))
        .stderr(contains("--allow-secret"));
    assert!(!env.project().join("facts/aws.md").exists());
    env.mem(["remember", "facts/db", "staging db", "--summary", "password = hunter2hunter2"])
        .assert()
        .code(2);
    env.mem([
        "remember",
        "facts/aws",
        "CI uses key AKIAIOSFODNN7EXAMPLE1 for uploads",
        "--allow-secret",
    ])
    .assert()
    .success();
    env.mem(["inspect", "--secrets"])
        .assert()
        .code(1)
        .stdout(contains("facts/aws.md:6: looks like an AWS access key id"));
    env.mem(["forget", "facts/aws"]).assert().success();
    env.mem(["inspect", "--secrets"]).assert().success().stdout("no credentials found\n");
}

#[test]
fn the_category_manifest_follows_a_write() {
    let env = Env::with_fixture("demo");
    env.mem([
        "remember",
        "pitfalls/new-trap",
        "The nightly export job times out when the report table is locked by a migration.",
    ])
    .assert()
    .success()
    .stdout(contains("pitfalls/ now holds:"))
    .stdout(contains("* pitfalls/new-trap.md"))
    .stdout(contains("pitfalls/tz-offset.md"));
    let v =
        env.json(["remember", "pitfalls/new-trap", "--highlight", "run exports after migrations"]);
    assert_eq!(v["manifest"].as_array().unwrap().len(), 6);
}

#[test]
fn an_oversized_resident_part_is_warned_about() {
    let env = Env::with_project();
    let long =
        "Every deploy must be announced in the release channel before it starts. ".repeat(200);
    env.mem(["remember", "rules/announce", &long])
        .assert()
        .success()
        .stderr(contains("over the 2000-token context budget"));
}

#[test]
fn names_that_cannot_be_checked_out_everywhere_are_refused_and_reported() {
    let env = Env::with_project();
    for bad in ["facts/CON", "facts/aux.notes", "nul/x", "facts/com1", "facts/trailing."] {
        env.mem(["remember", bad, "A fact that is long enough to be kept as a memory."])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("Windows"));
    }
    env.mem(["remember", "facts/Foo", "A fact about Foo, long enough to be kept."])
        .assert()
        .success();
    env.mem(["remember", "facts/foo", "Another fact about foo, long enough to be kept."])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("differs only in case"));
    // Files that came another way are reported.
    env.write("facts/prn.md", "---\nsummary: a printer\n---\nx\n");
    env.write("facts/FOO.md", "---\nsummary: loud foo\n---\nx\n");
    let out = env.mem(["lint"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("device name on Windows") && text.contains("only in case"), "{text}");
}

#[test]
fn a_category_index_is_never_a_memory() {
    let env = Env::with_project();
    for path in ["rules/index", "facts/INDEX.md"] {
        env.mem(["remember", path, "Overwrite the generated index of this category."])
            .assert()
            .code(2)
            .stderr(contains("generated index"));
    }
}

#[test]
fn import_refuses_case_twins_as_remember_does() {
    let env = Env::with_project();
    env.mem(["remember", "facts/Cache", "The cache layer lives in packages/cache."])
        .assert()
        .success();
    let export = serde_json::json!({
        "schema": "mem-export/1",
        "memories": [
            {"root": "project", "path": "facts/cache.md", "frontmatter": {}, "body": "another cache fact\n"}
        ]
    });
    let file = env.tmp.path().join("twins.json");
    std::fs::write(&file, export.to_string()).unwrap();
    env.mem(["import", file.to_str().unwrap()]).assert().code(2).stderr(contains("only in case"));
    assert!(!env.project().join("facts/cache.md").exists());
}
