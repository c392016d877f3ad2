//! Several agents writing at once: every write applies on top of the one
//! before, and every replaced version is kept.

use std::process::{Child, Stdio};

use crate::env::Env;

/// Start `mem ARGS` in the project without waiting for it.
fn spawn(env: &Env, args: &[&str]) -> Child {
    env.process(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn wait_all(children: Vec<Child>) -> Vec<String> {
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        })
        .collect()
}

/// Every saved version of `rel` plus the live one.
fn versions(env: &Env, rel: &str) -> Vec<String> {
    let (category, slug) = rel.split_once('/').unwrap();
    let dir = env.project().join(".history").join(category).join(slug);
    let mut all: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect())
        .unwrap_or_default();
    all.push(env.read(&format!("{rel}.md")));
    all
}

#[test]
fn sixteen_updates_of_one_memory_all_apply_and_none_is_lost() {
    let env = Env::with_project();
    env.mem(["remember", "facts/db", "The staging database lives on host db0."]).assert().success();
    let children: Vec<Child> = (1..=16)
        .map(|i| {
            let text = format!("The staging database lives on host db{i}, in rack {i}.");
            spawn(&env, &["remember", "facts/db", &text])
        })
        .collect();
    wait_all(children);
    let all = versions(&env, "facts/db");
    for i in 0..=16 {
        let needle = format!("host db{i}");
        let found = all
            .iter()
            .filter(|v| v.contains(&format!("{needle},")) || v.contains(&format!("{needle}.")))
            .count();
        assert_eq!(found, 1, "version {i} is live or saved exactly once: {all:#?}");
    }
}

#[test]
fn updates_of_different_fields_at_once_both_apply() {
    for trial in 0..10 {
        let env = Env::with_project();
        env.mem(["remember", "facts/db", "The staging database lives on host db2."])
            .assert()
            .success();
        let a = spawn(
            &env,
            &["remember", "facts/db", "--summary", &format!("Staging DB on db2 ({trial})")],
        );
        let b = spawn(&env, &["remember", "facts/db", "--tag", "infra"]);
        wait_all(vec![a, b]);
        let text = env.read("facts/db.md");
        assert!(text.contains(&format!("Staging DB on db2 ({trial})")), "trial {trial}: {text}");
        assert!(text.contains("infra"), "trial {trial}: {text}");
    }
}

#[test]
fn two_creates_of_one_path_become_a_create_and_an_update() {
    for trial in 0..10 {
        let env = Env::with_project();
        let a = spawn(&env, &["remember", "facts/new", "First text about the cache layer."]);
        let b = spawn(&env, &["remember", "facts/new", "Second text about the cache layer."]);
        let outs = wait_all(vec![a, b]);
        let created = outs.iter().filter(|o| o.starts_with("created")).count();
        assert_eq!(created, 1, "trial {trial}: {outs:?}");
        let all = versions(&env, "facts/new").join("\n");
        assert!(all.contains("First text") && all.contains("Second text"), "trial {trial}: {all}");
    }
}
