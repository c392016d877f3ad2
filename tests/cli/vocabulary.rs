//! One flag vocabulary: the same filters, limits, sorts and dry runs on
//! every command that takes them, and the commands that move memories
//! (`mv`, `restore --all`) keep what belongs to them.

use predicates::str::contains;
use serde_json::Value;

use crate::env::Env;

fn paths(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_same_filters_narrow_list_recall_export_clean_and_stats() {
    let env = Env::with_fixture("demo");
    let listed = paths(&env.json(["list", "--tag", "postgres", "--kind", "decision"]), "memories");
    assert!(!listed.is_empty());
    let exported =
        paths(&env.json(["export", "--tag", "postgres", "--kind", "decision"]), "memories");
    assert_eq!(exported, listed);
    let stats = env.json(["stats", "--tag", "postgres", "--kind", "decision"]);
    assert_eq!(stats["roots"][0]["memory_count"], listed.len());
    let found =
        env.json(["recall", "--no-track", "--tag", "postgres", "--kind", "decision", "ORM"]);
    let found = paths(&found, "results");
    assert!(!found.is_empty() && found.iter().all(|p| listed.contains(p)), "{found:?}");
    // Decisions about postgres are pinned or linked, which clean keeps:
    // the tag alone, then.
    let tagged = paths(&env.json(["list", "--tag", "postgres"]), "memories");
    let cleaned = env.json(["clean", "--max-age-days", "0", "--tag", "postgres"]);
    let cleaned = paths(&cleaned, "candidates");
    assert!(!cleaned.is_empty() && cleaned.iter().all(|p| tagged.contains(p)), "{cleaned:?}");
    assert!(cleaned.len() < tagged.len());
    for command in ["list", "recall", "export", "clean", "stats"] {
        let mut args = vec![command, "--category", "nonexistent"];
        if command == "recall" {
            args.push("database");
        }
        env.mem(&args).assert().code(2).stderr(contains("no category `nonexistent`"));
    }
}

#[test]
fn every_listing_takes_a_limit_and_list_sorts_by_hits_and_last_recall() {
    let env = Env::with_fixture("demo");
    // Recall counts hits: the pnpm memories twice, the ORM once, later.
    env.mem_at(["recall", "-n", "1", "pnpm"], 1_000).assert().success();
    env.mem_at(["recall", "-n", "1", "pnpm"], 2_000).assert().success();
    env.mem_at(["recall", "-n", "1", "ORM"], 3_000).assert().success();
    let by_hits = paths(&env.json(["list", "--sort", "hits", "-n", "2"]), "memories");
    let by_recall = paths(&env.json(["list", "--sort", "recalled", "-n", "2"]), "memories");
    assert_eq!(by_hits.len(), 2);
    // What the list was sorted by is shown beside each memory.
    let shown = env.stdout(["list", "--sort", "hits", "-n", "2"]);
    assert!(shown.lines().next().unwrap().contains("2 hit(s), last "), "{shown}");
    assert!(!env.stdout(["list", "-n", "2"]).contains("hit(s)"));
    assert_eq!(by_hits[0], by_recall[1], "{by_hits:?} {by_recall:?}");
    assert_eq!(by_hits[1], by_recall[0], "{by_hits:?} {by_recall:?}");
    assert_eq!(
        env.json(["recall", "--no-track", "-n", "2", "deploy"])["results"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let cleaned = env.json(["clean", "--max-age-days", "0", "--max-hits", "9", "-n", "3"]);
    assert_eq!(cleaned["candidates"].as_array().unwrap().len(), 3);
    env.mem(["remember", "facts/ci-runner-limits", "--summary", "Node 22 from now on"])
        .assert()
        .success();
    env.mem(["remember", "facts/ci-runner-limits", "--summary", "Node 24 from now on"])
        .assert()
        .success();
    assert_eq!(
        env.json(["history", "facts/ci-runner-limits"])["versions"].as_array().unwrap().len(),
        2
    );
    let one = env.json(["history", "facts/ci-runner-limits", "-n", "1"]);
    assert_eq!(one["versions"].as_array().unwrap().len(), 1);
    assert_eq!(one["root"], "project");
    env.mem(["forget", "facts/ci-runner-limits"]).assert().success();
    env.mem(["forget", "facts/staging-cluster"]).assert().success();
    assert_eq!(env.json(["trash", "-n", "1"])["trashed"].as_array().unwrap().len(), 1);
    for command in [&["list"][..], &["trash"], &["history", "facts/ci-runner-limits"], &["clean"]] {
        env.mem(command.iter().copied().chain(["-n", "0"])).assert().code(2);
    }
}

#[test]
fn mv_keeps_history_and_hits_and_a_dry_run_changes_nothing() {
    let env = Env::with_fixture("demo");
    env.mem(["remember", "facts/ci-runner-limits", "--summary", "Node 22 from now on"])
        .assert()
        .success();
    env.mem_at(["recall", "-n", "1", "ci runner limits"], 1_000).assert().success();
    let before = env.json(["list", "--sort", "hits", "-n", "1"]);
    assert_eq!(paths(&before, "memories"), ["facts/ci-runner-limits.md"]);
    let tree = || {
        let mut files = Vec::new();
        for entry in walkdir(&env.project()) {
            files.push((entry.clone(), std::fs::read(&entry).unwrap_or_default()));
        }
        files
    };
    let untouched = tree();
    env.mem(["mv", "facts/ci-runner-limits", "pitfalls/ci-runner-limits", "--dry-run"])
        .assert()
        .success()
        .stdout(contains("would rename"));
    assert!(tree() == untouched, "a dry run wrote something");
    env.mem(["mv", "facts/ci-runner-limits", "pitfalls/ci-runner-limits"]).assert().success();
    let history = env.json(["history", "pitfalls/ci-runner-limits"]);
    assert_eq!(history["versions"].as_array().unwrap().len(), 1, "{history}");
    let after = env.json(["list", "--sort", "hits", "-n", "1"]);
    assert_eq!(paths(&after, "memories"), ["pitfalls/ci-runner-limits.md"]);
    env.mem(["compile", "--check"]).assert().success();

    // forget and restore take --dry-run too.
    let untouched = tree();
    env.mem(["forget", "pitfalls/ci-runner-limits", "--dry-run"])
        .assert()
        .success()
        .stdout(contains("would forget"));
    assert!(tree() == untouched, "a dry run wrote something");
    env.mem(["forget", "pitfalls/ci-runner-limits"]).assert().success();
    let untouched = tree();
    let would = env.json(["restore", "pitfalls/ci-runner-limits", "--dry-run"]);
    assert_eq!(would["restored"][0]["action"], "would restore");
    assert!(tree() == untouched, "a dry run wrote something");
}

#[test]
fn restore_all_brings_back_what_has_a_free_place() {
    let env = Env::with_fixture("demo");
    env.mem(["restore", "--all"]).assert().code(1).stderr(contains("the trash is empty"));
    env.mem(["forget", "facts/staging-cluster"]).assert().success();
    env.mem(["forget", "decisions/queue-bullmq"]).assert().success();
    env.mem(["forget", "facts/ci-runner-limits"]).assert().success();
    // A new memory took one of the places: that copy stays in the trash.
    env.mem(["remember", "facts/ci-runner-limits", "Runners have 24 GiB now."]).assert().success();
    let out = env.mem(["--json", "restore", "--all"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut back = paths(&v, "restored");
    back.sort();
    assert_eq!(back, ["decisions/queue-bullmq.md", "facts/staging-cluster.md"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("facts/ci-runner-limits"));
    assert!(env.read("facts/ci-runner-limits.md").contains("24 GiB"));
    env.mem(["restore", "--all", "facts/a"]).assert().code(2);
    env.mem(["compile", "--check"]).assert().success();
}

/// Every file under `dir`, sorted.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn dry_runs_on_a_fresh_tree_create_nothing_and_import_previews_replacements() {
    let env = Env::with_fixture("demo");
    let before = walkdir(&env.project());
    env.mem(["mv", "facts/staging-cluster", "facts/staging", "--dry-run"]).assert().success();
    env.mem(["forget", "facts/staging-cluster", "--dry-run"]).assert().success();
    assert_eq!(walkdir(&env.project()), before, "a dry run created a file");
    // An import over a changed file: the dry run names it, --yes replaces it.
    let export = env.tmp.path().join("all.json");
    env.mem(["export", "--output", export.to_str().unwrap()]).assert().success();
    env.mem(["remember", "facts/staging-cluster", "--summary", "Changed since the export"])
        .assert()
        .success();
    let plan = env.json(["import", export.to_str().unwrap(), "--dry-run"]);
    assert_eq!(plan["actions"]["facts/staging-cluster.md"], "differs", "{plan}");
    let plan = env.json(["import", export.to_str().unwrap(), "--dry-run", "--yes"]);
    assert_eq!(plan["actions"]["facts/staging-cluster.md"], "updated", "{plan}");
    assert!(env.read("facts/staging-cluster.md").contains("Changed since the export"));
    env.mem(["import", export.to_str().unwrap()]).assert().code(2);
}

#[test]
fn history_shows_dates_and_lists_only_version_files() {
    let env = Env::with_fixture("demo");
    env.mem(["remember", "facts/staging-cluster", "--summary", "Changed once"]).assert().success();
    let dir = env.project().join(".history/facts/staging-cluster");
    std::fs::create_dir_all(dir.join("1800000000000.md")).unwrap();
    let shown = env.stdout(["history", "facts/staging-cluster"]);
    assert_eq!(shown.lines().count(), 2, "{shown}");
    // A local date and an age, not epoch milliseconds (the file keeps them).
    let row = shown.lines().nth(1).unwrap().trim_start();
    assert!(row.starts_with("2026-08-28 06:53  3 months ago"), "{shown}");
    // A zone file that is a FIFO or a device is no zone: UTC, no hang.
    let fifo = env.tmp.path().join("zone-fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for tz in [fifo.to_str().unwrap(), "/dev/zero"] {
        let shown = env.stdout_with(["history", "facts/staging-cluster"], &[("TZ", tz)]);
        assert_eq!(shown.lines().count(), 2, "{shown}");
    }
}

#[test]
fn a_rename_that_cannot_finish_changes_nothing() {
    let env = Env::with_fixture("demo");
    let snapshot = || {
        walkdir(&env.project())
            .into_iter()
            .filter(|p| !p.components().any(|c| c.as_os_str() == ".cache"))
            .map(|p| (p.clone(), std::fs::read(&p).unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    // The recompile fails (an index.md that is a folder): undone by renames,
    // the link in orm-drizzle.md included.
    std::fs::remove_file(env.project().join("pitfalls/index.md")).unwrap();
    std::fs::create_dir(env.project().join("pitfalls/index.md")).unwrap();
    let before = snapshot();
    env.mem(["mv", "decisions/orm-prisma", "pitfalls/orm-prisma"])
        .assert()
        .code(2)
        .stderr(contains("it was left where it was"));
    let after = snapshot();
    for ((p, a), (q, b)) in before.iter().zip(&after) {
        assert!(p == q && a == b, "{} / {} changed", p.display(), q.display());
    }
    assert_eq!(before.len(), after.len(), "{:?}", after.iter().map(|x| &x.0).collect::<Vec<_>>());
    // A write that cannot be made (the new folder is a link): nothing moved.
    std::fs::remove_dir(env.project().join("pitfalls/index.md")).unwrap();
    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.project().join("linked")).unwrap();
    let before = snapshot();
    env.mem(["mv", "decisions/orm-prisma", "linked/orm-prisma"]).assert().code(2);
    assert!(snapshot() == before, "a refused rename changed a file");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
