//! Lifecycle commands: stats, export/import, clean, lint, edit.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use predicates::str::contains;

use crate::env::Env;

/// Every file under a folder with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(
                    e.path().strip_prefix(dir).unwrap().display().to_string(),
                    fs::read(e.path()).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn stats_counts_what_the_demo_holds() {
    let env = Env::with_fixture("demo");
    env.mem(["recall", "-n", "2", "部署"]).assert().success();
    let v = env.json(["stats"]);
    let r = &v["roots"][0];
    assert_eq!(r["memory_count"], 30);
    assert_eq!(r["pinned_count"], 3);
    assert_eq!(r["superseded_count"], 3);
    assert_eq!(r["by_category"]["rules"], 5);
    let langs = &r["languages"];
    assert_eq!(
        langs["zh"].as_u64().unwrap()
            + langs["en"].as_u64().unwrap()
            + langs["mixed"].as_u64().unwrap(),
        30
    );
    assert!(langs["mixed"].as_u64().unwrap() > 5 && langs["en"].as_u64().unwrap() > 5);
    assert_eq!(r["hit_totals"]["total"], 2);
    assert_eq!(r["hit_totals"]["never_hit"], 28);
    assert_eq!(r["hit_totals"]["top"].as_array().unwrap().len(), 2);
    assert!(r["bytes"].as_u64().unwrap() > 10_000);
    assert!(r["resident_tokens"].as_u64().unwrap() > 0);
    env.mem(["stats"])
        .env("MEM_MAX_ENTRIES", "10")
        .assert()
        .success()
        .stderr(contains("over MEM_MAX_ENTRIES=10"));
    // lint warns of the size and still passes: it is no fault of any file.
    let out = env.mem(["lint", "--json"]).env("MEM_MAX_ENTRIES", "10").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lint: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = lint["problems"].as_array().unwrap();
    assert!(
        found.iter().any(|p| p["severity"] == "warning"
            && p["problem"].as_str().unwrap().contains("over MEM_MAX_ENTRIES=10")),
        "{lint}"
    );
}

#[test]
fn export_import_round_trip_is_identical() {
    let env = Env::with_fixture("demo");
    env.mem(["recall", "-n", "3", "部署"]).assert().success();
    let first = env.stdout(["export"]);
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["schema"], "mem-export/1");
    assert_eq!(v["memories"].as_array().unwrap().len(), 30);
    let file = env.tmp.path().join("export.json");
    fs::write(&file, &first).unwrap();

    let other = Env::new();
    other.mem(["init"]).assert().success();
    other
        .mem(["import", file.to_str().unwrap(), "--dry-run"])
        .assert()
        .success()
        .stdout(contains("would import"));
    assert!(!other.project().join("rules/deploy-pnpm.md").exists(), "dry run writes nothing");
    other.mem(["import", file.to_str().unwrap()]).assert().success();
    assert_eq!(other.stdout(["export"]), first);
    // Importing again changes nothing.
    other
        .mem(["import", file.to_str().unwrap()])
        .assert()
        .success()
        .stdout(contains("nothing to import"));
}

#[test]
fn import_refuses_to_overwrite_a_different_file_unless_asked() {
    let env = Env::with_fixture("demo");
    let file = env.tmp.path().join("export.json");
    fs::write(&file, env.stdout(["export"])).unwrap();
    env.write("rules/deploy-pnpm.md", "---\nkind: rule\n---\nchanged by hand\n");
    env.mem(["import", file.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("rules/deploy-pnpm.md"))
        .stderr(contains("--yes"));
    assert_eq!(env.read("rules/deploy-pnpm.md"), "---\nkind: rule\n---\nchanged by hand\n");
    env.mem(["import", file.to_str().unwrap(), "--yes"]).assert().success();
    assert!(env.read("rules/deploy-pnpm.md").contains("部署脚本用 pnpm 而不是 npm"));
    let history = env.json(["history", "rules/deploy-pnpm"]);
    assert_eq!(history["versions"].as_array().unwrap().len(), 1);
    env.mem(["import", "/nonexistent.json"]).assert().code(2);
    fs::write(&file, "{\"schema\": \"other/9\", \"memories\": []}").unwrap();
    env.mem(["import", file.to_str().unwrap()]).assert().code(2).stderr(contains("schema"));
}

#[test]
fn markdown_export_is_one_readable_file() {
    let env = Env::with_fixture("demo");
    let out = env.tmp.path().join("memory.md");
    env.mem(["export", "--format", "markdown", "--output", out.to_str().unwrap()])
        .assert()
        .success();
    let text = fs::read_to_string(out).unwrap();
    assert!(text.starts_with("# Memory export\n\n30 memories.\n"));
    assert_eq!(text.matches("\n## ").count(), 30);
    assert!(text.contains("## rules/deploy-pnpm.md (project, never recalled)"));
}

#[test]
fn clean_dry_run_changes_nothing_and_yes_moves_exactly_the_listed() {
    let env = Env::with_fixture("demo");
    let before = snapshot(&env.project());
    let dry = env.json(["clean", "--max-age-days", "120"]);
    let listed: Vec<String> = dry["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|p| !p.starts_with("rules/")), "never rules");
    assert_eq!(snapshot(&env.project()), before, "dry run is byte-identical");
    let done = env.json(["clean", "--max-age-days", "120", "--yes"]);
    let moved: Vec<String> = done["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(moved, listed);
    for p in &listed {
        assert!(!env.project().join(p).exists(), "{p}");
    }
    let left = env.json(["list"])["memories"].as_array().unwrap().len();
    assert_eq!(left, 30 - listed.len());
    env.mem(["restore", &listed[0]]).assert().success();
}

#[test]
fn clean_spares_pinned_rules_and_recalled_memories() {
    let env = Env::with_fixture("demo");
    let all = env.json(["clean", "--max-age-days", "0"]);
    let listed: Vec<&str> =
        all["candidates"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert!(!listed.contains(&"decisions/orm-drizzle.md"), "pinned");
    assert!(!listed.iter().any(|p| p.starts_with("rules/")));
    env.mem(["recall", "-n", "1", "timezone bug"]).assert().success();
    let after = env.json(["clean", "--max-age-days", "0"]);
    assert!(!after.to_string().contains("pitfalls/tz-offset.md"), "hit once, over --max-hits 0");
    let with_hits =
        env.json(["clean", "--max-age-days", "0", "--max-hits", "1", "--category", "pitfalls"]);
    assert!(with_hits.to_string().contains("pitfalls/tz-offset.md"));
}

#[test]
fn lint_reports_exactly_the_planted_problems() {
    let env = Env::with_fixture("lint");
    let out = env.mem(["lint", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got: Vec<(String, String)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"]
                .as_str()
                .unwrap()
                .rsplit(".memory")
                .next()
                .unwrap()
                .trim_start_matches('/')
                .to_string();
            let line = f["line"].as_u64().map(|l| format!(":{l}")).unwrap_or_default();
            (
                format!("{file}{line}"),
                f["problem"]
                    .as_str()
                    .unwrap()
                    .split([' ', ':'])
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })
        .collect();
    got.sort();
    let want = [
        ("", "the always-resident memories"),
        ("Bad Dir", "folder name is"),
        ("decisions/dangling.md:3", "`supersedes` points at"),
        ("decisions/loop-a.md:4", "the supersede chain"),
        ("decisions/loop-b.md:4", "the supersede chain"),
        ("decisions/old-queue.md:3", "`superseded_by  decisions/new-queue.md`"),
        ("facts/bad name.md", "file name is"),
        ("facts/bad-yaml.md:4", "invalid YAML in"),
        ("facts/deploy-one.md:2", "trigger `deploy` is"),
        ("facts/deploy-two.md:2", "trigger `deploy` is"),
        ("facts/dup-a.md", "nearly the same"),
        ("facts/index.md", "generated text is"),
        ("facts/leaky.md:3", "looks like an"),
        ("facts/odd-pin.md:2", "`pinned` should be"),
        ("facts/typo.md:2", "unknown key `sumary`"),
    ];
    let want: Vec<(String, String)> =
        want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(got, want);
    let demo = Env::with_fixture("demo");
    demo.mem(["lint"]).assert().success().stdout("no problems\n");
}

/// An "editor": a shell script that runs `sed -i <expr>` on the file.
fn editor(env: &Env, name: &str, expr: &str) -> String {
    let path = env.tmp.path().join(name);
    fs::write(&path, format!("#!/bin/sh\nsed -i '{expr}' \"$1\"\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

#[cfg(unix)]
#[test]
fn edit_opens_the_editor_then_validates_and_recompiles() {
    let env = Env::with_fixture("demo");
    env.mem(["edit", "facts/staging-cluster"])
        .env("EDITOR", editor(&env, "rename", "s/namespace/namespace-renamed/"))
        .assert()
        .success()
        .stdout(contains("updated facts/staging-cluster.md"));
    assert!(env.read("facts/staging-cluster.md").contains("namespace-renamed"));
    assert_eq!(
        env.json(["history", "facts/staging-cluster"])["versions"].as_array().unwrap().len(),
        1
    );
    // A new memory starts from the template; saving it unchanged creates nothing.
    env.mem(["edit", "facts/brand-new"])
        .env("EDITOR", "true")
        .assert()
        .success()
        .stdout(contains("unchanged"));
    assert!(!env.project().join("facts/brand-new.md").exists());
    env.mem(["edit", "facts/brand-new"])
        .env("EDITOR", editor(&env, "title", "s/^# Title/# Brand new/"))
        .assert()
        .success();
    assert!(env.read("facts/brand-new.md").contains("id: facts/brand-new.md"));
    assert!(env.read("facts/index.md").contains("brand-new.md"));
    // Broken frontmatter after the edit: said so, exit 2, file kept as saved.
    env.mem(["edit", "facts/brand-new"])
        .env("EDITOR", editor(&env, "break", "s/^kind: fact/kind: [oops/"))
        .assert()
        .code(2)
        .stderr(contains("invalid YAML"));
    env.mem(["edit", "facts/x"]).env_remove("EDITOR").assert().code(2).stderr(contains("EDITOR"));
}

#[test]
fn export_then_import_of_an_unchanged_tree_writes_nothing() {
    let env = Env::with_fixture("demo");
    // Hand-formatted frontmatter: comments and flow lists, as people write.
    let file = env.project().join("facts/ci-runner-limits.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replacen("---\n", "---\n# checked in November\n", 1);
    std::fs::write(&file, &text).unwrap();
    env.settle();
    let export = env.tmp.path().join("all.json");
    env.mem(["export", "--output", export.to_str().unwrap()]).assert().success();
    let stamp = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let before: Vec<_> = walk(&env.project()).into_iter().map(|p| (stamp(&p), p)).collect();
    env.mem(["import", export.to_str().unwrap(), "--yes"])
        .assert()
        .success()
        .stdout(predicates::str::contains("nothing to import"));
    let after: Vec<_> = walk(&env.project()).into_iter().map(|p| (stamp(&p), p)).collect();
    assert_eq!(before, after, "a file was written");
    assert!(!env.project().join(".history").exists(), "history copies of unchanged memories");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // What `export --json` prints (with its warnings) imports as well.
    let printed = env.tmp.path().join("printed.json");
    std::fs::write(&printed, env.stdout(["export", "--json"])).unwrap();
    let again = env.json(["import", printed.to_str().unwrap(), "--dry-run"]);
    assert_eq!(again["root"], "project");
    assert!(again["actions"].as_object().unwrap().values().all(|a| a == "unchanged"), "{again}");
}

#[test]
fn an_update_keeps_every_byte_it_was_not_asked_to_change() {
    let env = Env::with_project();
    let text = "---\n# owner: infra team\nkind: fact\ntags: [db, ops]\nsummary: 'The old summary'\nload_when:\n  - database\n  - 数据库\ncreated: 1790000000000\nupdated: 1790000000000\n---\n# DB\n\nThe body, untouched.\n";
    env.write("facts/db.md", text);
    env.mem(["remember", "facts/db", "--summary", "The new summary"]).assert().success();
    let now = env.read("facts/db.md");
    let expected = text
        .replace("summary: 'The old summary'", "summary: The new summary")
        .replace("updated: 1790000000000", &format!("updated: {}", crate::env::NOW));
    assert_eq!(now, expected);
    env.mem(["remember", "facts/db", "--tag", "db,infra"]).assert().success();
    let now = env.read("facts/db.md");
    assert!(now.contains("tags: [db, infra]\n") && now.contains("# owner: infra team\n"), "{now}");
    assert!(now.contains("load_when:\n  - database\n  - 数据库\n"), "{now}");
}

/// Every file under `dir`, sorted.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn an_import_never_puts_one_roots_memory_over_anothers() {
    let env = Env::with_fixture("demo");
    env.mem(["init", "--global"]).assert().success();
    env.mem([
        "remember",
        "--global",
        "facts/staging-cluster",
        "--summary",
        "GLOBAL version of the staging facts",
        "The global body.",
    ])
    .assert()
    .success();
    let project_text = env.read("facts/staging-cluster.md");
    let export = env.tmp.path().join("both.json");
    env.mem(["export", "--output", export.to_str().unwrap()]).assert().success();
    env.mem(["import", export.to_str().unwrap(), "--yes"])
        .assert()
        .success()
        .stdout(contains("nothing to import"))
        .stdout(contains("skipped 1 memories of the other root"));
    assert_eq!(env.read("facts/staging-cluster.md"), project_text);
    // Into an empty project: its own memories, not the global one over them.
    let other = Env::new();
    other.mem(["init"]).assert().success();
    other.mem(["import", export.to_str().unwrap()]).assert().success();
    assert!(!other.read("facts/staging-cluster.md").contains("GLOBAL"));
    // Naming the root with --global (as every write does) brings the
    // project's memories into it too, never over its own.
    other.mem(["init", "--global"]).assert().success();
    let into = other.json(["--global", "import", export.to_str().unwrap(), "--dry-run"]);
    assert_eq!(into["actions"]["facts/staging-cluster.md"], "created", "{into}");
    assert!(into["actions"].as_object().unwrap().len() > 20, "{into}");
    other.mem(["--global", "import", export.to_str().unwrap()]).assert().success();
    let global = std::fs::read_to_string(other.global().join("facts/staging-cluster.md")).unwrap();
    assert!(global.contains("GLOBAL"), "{global}");
    other.mem(["import", export.to_str().unwrap(), "--into", "global"]).assert().code(2);
}

#[test]
fn a_frontmatter_json_cannot_hold_is_not_exported_as_empty() {
    let env = Env::with_project();
    env.write("facts/nk.md", "---\nkind: fact\nsummary: s\n1: one\n---\nbody\n");
    let out = env.mem(["export", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> =
        v["memories"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert!(!paths.contains(&"facts/nk.md"), "{v}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("facts/nk.md"));
}

#[test]
fn clean_keeps_both_ends_of_a_supersede_link_so_lint_still_passes() {
    let env = Env::with_fixture("demo");
    let all = env.json(["clean", "--max-age-days", "0", "--max-hits", "1000"]);
    let listed: Vec<&str> =
        all["candidates"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    for linked in
        ["decisions/orm-prisma.md", "facts/node-version-18.md", "facts/node-version-22.md"]
    {
        assert!(!listed.contains(&linked), "{linked} is in a supersede link");
    }
    env.mem(["clean", "--max-age-days", "0", "--max-hits", "1000", "--yes"]).assert().success();
    let lint = env.mem(["lint"]).output().unwrap();
    let said = String::from_utf8_lossy(&lint.stdout);
    assert!(!said.contains("supersede"), "{said}");
}

#[test]
fn lint_reports_a_file_too_big_to_read_once_with_a_fix_that_fits() {
    let env = Env::with_fixture("demo");
    env.write("facts/huge.md", &format!("---\nsummary: big\n---\n{}", "x".repeat(1_200_000)));
    let out = env.mem(["lint"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    let line = said.lines().find(|l| l.contains("huge.md")).unwrap();
    assert_eq!(line.matches("huge.md").count(), 1, "{line}");
    assert!(line.contains("over the 1 MiB limit"), "{line}");
    assert!(said.contains("shorten it"), "{said}");
}
