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

/// A small seeded generator (no dependency needed for this).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

#[test]
fn writes_killed_at_random_moments_leave_whole_files_and_an_exact_index() {
    let env = Env::with_fixture("demo");
    let mut rng = Lcg(0x5eed);
    let mut bodies = vec![String::new()];
    let export = env.tmp.path().join("export.json");
    env.mem(["export", "--output", export.to_str().unwrap()]).assert().success();
    let mut kills = 0;
    // Until 200 writes were killed mid-way (the others finish first).
    for i in 0..2000 {
        if kills >= 200 {
            break;
        }
        let body = format!("The staging database lives on host db{i} in rack {}.", rng.next(1000));
        let args: Vec<String> = match rng.next(5) {
            0 | 1 => vec!["remember".into(), "facts/db".into(), body.clone()],
            2 => vec!["forget".into(), "facts/db".into()],
            3 => vec!["restore".into(), "facts/db".into()],
            _ => vec!["import".into(), export.display().to_string(), "--yes".into()],
        };
        bodies.push(body);
        let mut child =
            env.process(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_micros(rng.next(15_000)));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        // Every memory file is whole: it parses, and a body is one written.
        let db = env.project().join("facts/db.md");
        if let Ok(text) = std::fs::read_to_string(&db) {
            let doc = mem::model::frontmatter::Document::parse(&text).expect("a torn memory");
            assert!(bodies.iter().any(|b| doc.body.trim() == b.trim()), "unknown body: {text}");
        }
        for entry in std::fs::read_dir(env.project().join("facts")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    mem::model::frontmatter::Document::parse(&text).is_ok(),
                    "torn {}",
                    path.display()
                );
            }
        }
    }
    assert!(kills >= 200, "only {kills} writes were killed");
    // The index answers exactly as a fresh rescan of the files.
    let query = ["recall", "--json", "--no-track", "-n", "30", "--", "staging database deploy"];
    let cached = env.stdout(query);
    let _ = std::fs::remove_dir_all(env.project().join(".cache"));
    let fresh = env.stdout(query);
    let results =
        |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["results"].clone();
    assert_eq!(results(&cached), results(&fresh));
}
