//! The everyday path: init → remember → list → inspect → update → supersede
//! → forget → restore, checked on the files themselves.

use std::fs;

use crate::env::{Env, NOW, NOW_ISO, NOW_STAMP};

#[test]
fn init_creates_root_categories_and_gitignore() {
    let env = Env::new();
    env.mem(["init", "--lang", "zh"]).assert().success();
    let root = env.read("ROOT.md");
    assert!(root.contains("# 项目记忆"));
    // The regions are generated at once, as `mem compile` would.
    assert!(root.contains("<!-- auto:begin registry -->\n|"), "{root}");
    assert!(root.contains("<!-- auto:begin routing -->\n"), "{root}");
    assert!(!root.contains("<!-- auto:begin routing -->\n<!-- auto:end -->"), "{root}");
    for cat in ["rules", "decisions", "pitfalls", "preferences", "facts", "references"] {
        assert!(env.project().join(cat).is_dir(), "{cat}");
    }
    let ignore = env.read(".gitignore");
    for line in [".state.json", ".cache/", ".trash/"] {
        assert!(ignore.lines().any(|l| l == line), "{line}");
    }
}

#[test]
fn init_on_a_root_changes_nothing_and_says_so() {
    let env = Env::with_project();
    env.write("ROOT.md", "# mine\n");
    env.mem(["init"]).assert().success().stdout(predicates::str::contains("nothing changed"));
    assert_eq!(env.read("ROOT.md"), "# mine\n");
    assert_eq!(env.json(["init"])["action"], "unchanged");
}

#[test]
fn init_global_writes_the_global_root() {
    let env = Env::new();
    env.mem(["init", "--global"]).assert().success();
    assert!(env.global().join("ROOT.md").is_file());
    assert!(!env.project().exists());
}

#[test]
fn remember_creates_a_memory_with_frontmatter() {
    let env = Env::with_project();
    env.mem([
        "remember",
        "rules/deploy-pnpm",
        "# 部署\n\n部署脚本用 pnpm 而不是 npm",
        "--load-when",
        "部署",
        "--load-when",
        "deploy script",
        "--tag",
        "deploy,ci",
        "--pin",
        "--highlight",
        "pnpm only",
    ])
    .assert()
    .success()
    .stdout(predicates::str::contains("created project rules/deploy-pnpm.md"));
    let text = env.read("rules/deploy-pnpm.md");
    let expected = format!(
        "---\nid: rules/deploy-pnpm.md\nhighlight: pnpm only\ncreated: {NOW_ISO}\nupdated: {NOW_ISO}\n\
         load_when:\n- 部署\n- deploy script\npinned: true\ntags:\n- deploy\n- ci\n---\n\
         # 部署\n\n部署脚本用 pnpm 而不是 npm\n"
    );
    assert_eq!(text, expected);
    let list = env.json(["list"]);
    let m = &list["memories"][0];
    assert_eq!(m["path"], "rules/deploy-pnpm.md");
    assert_eq!(m["title"], "部署");
    assert_eq!(m["kind"], "rule");
    assert_eq!(m["summary"], "部署脚本用 pnpm 而不是 npm");
    assert_eq!(m["pinned"], true);
}

#[test]
fn remember_reads_the_body_from_stdin() {
    let env = Env::with_project();
    env.mem(["remember", "facts/release", "-"])
        .write_stdin("Released v2 on Friday.")
        .assert()
        .success();
    assert!(env.read("facts/release.md").ends_with("---\nReleased v2 on Friday.\n"));
}

#[test]
fn update_keeps_created_unknown_keys_and_body_and_saves_history() {
    let env = Env::with_project();
    let original = "---\nzeta: keep me\nkind: fact\ncreated: 1000\nupdated: 2000\n\
                    custom:\n  nested: [1, 2]\n---\nBody line one\r\n---\r\ntrailing  spaces  \n";
    env.write("facts/node.md", original);
    env.mem(["remember", "facts/node", "--summary", "Node 22 everywhere"]).assert().success();
    let text = env.read("facts/node.md");
    assert_eq!(
        text,
        format!(
            "---\nzeta: keep me\nkind: fact\ncreated: 1000\nupdated: {NOW}\ncustom:\n  nested: [1, 2]\n\
             summary: Node 22 everywhere\n---\nBody line one\r\n---\r\ntrailing  spaces  \n"
        )
    );
    let saved = env.project().join(".history/facts/node/1970-01-01T00-00-02.000Z.md");
    assert_eq!(fs::read_to_string(saved).unwrap(), original);
    let history = env.json(["history", "facts/node"]);
    assert_eq!(history["versions"][0]["updated"], 2000);
}

#[test]
fn update_with_nothing_new_writes_nothing() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "text here"]).assert().success();
    let before = env.read("facts/a.md");
    env.mem(["remember", "facts/a", "text here"])
        .assert()
        .success()
        .stdout(predicates::str::contains("unchanged"));
    assert_eq!(env.read("facts/a.md"), before);
    assert!(!env.project().join(".history").exists());
}

#[test]
fn supersede_links_both_memories_and_hides_nothing_on_disk() {
    let env = Env::with_project();
    env.mem(["remember", "decisions/orm-prisma", "We use Prisma."]).assert().success();
    env.mem([
        "remember",
        "decisions/orm-drizzle",
        "We use Drizzle.",
        "--supersedes",
        "decisions/orm-prisma",
    ])
    .assert()
    .success();
    assert!(env.read("decisions/orm-drizzle.md").contains("supersedes: decisions/orm-prisma.md\n"));
    assert!(
        env.read("decisions/orm-prisma.md").contains("superseded_by: decisions/orm-drizzle.md\n")
    );
    let detail = env.json(["inspect", "decisions/orm-prisma"]);
    assert_eq!(detail["superseded_by_chain"][0]["path"], "decisions/orm-drizzle.md");
    let detail = env.json(["inspect", "decisions/orm-drizzle"]);
    assert_eq!(detail["supersedes_chain"][0]["path"], "decisions/orm-prisma.md");
    assert_eq!(detail["memory"]["kind"], "decision");
    assert_eq!(detail["body"], "We use Drizzle.\n");
}

#[test]
fn forget_moves_to_trash_and_restore_brings_it_back() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "alpha"]).assert().success();
    let text = env.read("facts/a.md");
    env.mem(["forget", "facts/a"]).assert().success();
    assert!(!env.project().join("facts/a.md").exists());
    let trashed = env.project().join(format!(".trash/facts/a.{NOW_STAMP}.md"));
    assert_eq!(fs::read_to_string(&trashed).unwrap(), text);
    assert_eq!(env.json(["list"])["memories"].as_array().unwrap().len(), 0);
    env.mem(["restore", "facts/a"]).assert().success();
    assert_eq!(env.read("facts/a.md"), text);
    assert!(!trashed.exists());
}

#[test]
fn restore_picks_the_newest_and_refuses_to_overwrite() {
    let env = Env::with_project();
    env.write(".trash/facts/a.100.md", "old\n");
    env.write(".trash/facts/a.300.md", "newest\n");
    env.write(".trash/facts/a.b.200.md", "another slug\n");
    env.write("facts/a.md", "live\n");
    env.mem(["restore", "facts/a"]).assert().code(2).stderr(predicates::str::contains("overwrite"));
    assert_eq!(env.read("facts/a.md"), "live\n");
    fs::remove_file(env.project().join("facts/a.md")).unwrap();
    env.mem(["restore", "facts/a"]).assert().success();
    assert_eq!(env.read("facts/a.md"), "newest\n");
}

#[test]
fn list_filters_and_sorts() {
    let env = Env::with_fixture("demo");
    let names = |args: &[&str]| -> Vec<String> {
        let v = env.json(args);
        v["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_string())
            .collect()
    };
    let all = names(&["list"]);
    assert_eq!(all.len(), 30);
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    let decisions = names(&["list", "--category", "decisions"]);
    assert!(decisions.len() >= 3 && decisions.iter().all(|p| p.starts_with("decisions/")));
    let pitfalls = names(&["list", "--kind", "pitfall"]);
    assert!(!pitfalls.is_empty() && pitfalls.iter().all(|p| p.starts_with("pitfalls/")));
    let recent = env.json(["list", "--sort", "recent"]);
    let updated: Vec<i64> = recent["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["updated"].as_i64().unwrap())
        .collect();
    assert!(updated.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn inspect_overview_counts_categories() {
    let env = Env::with_fixture("demo");
    let v = env.json(["inspect"]);
    let project = &v["roots"][0];
    assert_eq!(project["root"], "project");
    assert_eq!(project["memory_count"], 30);
    assert_eq!(project["categories"]["rules"], 5);
    assert_eq!(v["problems"].as_array().unwrap().len(), 0);
    let text = env.stdout(["inspect"]);
    assert!(text.contains("no problems"), "{text}");
}

#[test]
fn completions_and_man_page_are_generated() {
    let env = Env::new();
    // Each script registers mem as its own completer (`COMPLETE=<shell> mem`),
    // which then answers with the commands.
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = env.stdout(["completions", shell]);
        assert!(out.contains("COMPLETE") && out.contains(shell) && out.contains("mem"), "{shell}");
    }
    let out = env.process(["--", "mem", "re"]).env("COMPLETE", "fish").output().unwrap();
    let words = String::from_utf8(out.stdout).unwrap();
    assert!(words.contains("recall\t") && words.contains("remember\t"), "{words}");
    let man = env.stdout(["man"]);
    assert!(man.starts_with(".ie") || man.contains(".TH mem 1"), "{man}");
    env.mem(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn list_limits_and_filters_by_tag_and_role_and_names_a_missing_category() {
    let env = Env::with_fixture("demo");
    let listed = env.stdout(["list", "-n", "3"]);
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert_eq!(env.json(["list", "--limit", "2"])["memories"].as_array().unwrap().len(), 2);
    let tagged = env.json(["list", "--tag", "POSTGRES"]);
    let tagged = tagged["memories"].as_array().unwrap();
    assert!(!tagged.is_empty());
    assert!(tagged.iter().all(|m| {
        m["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().eq_ignore_ascii_case("postgres"))
    }));
    // `--role R` is what role R sees: shared memories and its own, not
    // another role's.
    env.write("facts/for-review.md", "---\nrole: reviewer\n---\nCheck the migration plan.\n");
    env.write("facts/for-writing.md", "---\nrole: writer\n---\nWrite the changelog.\n");
    let paths = |v: serde_json::Value| -> Vec<String> {
        v["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_string())
            .collect()
    };
    let everything = paths(env.json(["list"]));
    let reviewer = paths(env.json(["list", "--role", "reviewer"]));
    assert!(reviewer.contains(&"facts/for-review.md".to_string()), "{reviewer:?}");
    assert!(!reviewer.contains(&"facts/for-writing.md".to_string()), "{reviewer:?}");
    assert_eq!(reviewer.len(), everything.len() - 1);
    let stats = env.json(["stats", "--role", "reviewer"]);
    assert_eq!(stats["roots"][0]["memory_count"], reviewer.len());
    assert_eq!(stats["roots"][0]["by_role"]["reviewer"], 1);
    assert!(stats["roots"][0]["by_role"].get("writer").is_none());
    assert_eq!(env.json(["stats"])["roots"][0]["by_role"]["writer"], 1);
    env.mem(["list", "--tag", "no-such-tag"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no memory matches"));
    env.mem(["list", "--category", "nonexistent"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no category `nonexistent`"))
        .stderr(predicates::str::contains("decisions"));
    env.mem(["list", "-n", "0"]).assert().code(2);
}

/// A TZif file (version 1) for a zone that is always UTC+8.
fn utc_plus_8() -> Vec<u8> {
    let mut b = b"TZif".to_vec();
    b.extend([0u8; 16]);
    for count in [0u32, 0, 0, 0, 1, 4] {
        b.extend(count.to_be_bytes());
    }
    b.extend(28_800i32.to_be_bytes());
    b.extend([0, 0]);
    b.extend(b"CST\0");
    b
}

#[test]
fn inspect_stats_and_trash_show_local_dates_and_ages() {
    let env = Env::with_fixture("demo");
    let shown = env.stdout(["inspect", "rules/deploy-pnpm"]);
    let line = shown.lines().find(|l| l.trim_start().starts_with("created")).unwrap();
    assert!(line.ends_with("2026-06-02 14:53, 6 months ago"), "{line}");
    // In the user's time zone ($TZ names a zone file).
    let zone = env.tmp.path().join("utc+8");
    std::fs::write(&zone, utc_plus_8()).unwrap();
    let tz = zone.to_str().unwrap();
    let local = env.stdout_with(["inspect", "rules/deploy-pnpm"], &[("TZ", tz)]);
    assert!(local.contains("2026-06-02 22:53, 6 months ago"), "{local}");
    let stats = env.stdout(["stats"]);
    let oldest = stats.lines().find(|l| l.trim_start().starts_with("oldest")).unwrap();
    assert!(oldest.trim_end().ends_with(" ago)"), "{oldest}");
    env.mem(["forget", "facts/staging-cluster"]).assert().success();
    let trash = env.stdout(["trash"]);
    assert!(trash.contains("trashed 2026-11-30 00:00, just now"), "{trash}");
    for text in [&shown, &stats, &trash] {
        assert!(!text.split(|c: char| !c.is_ascii_digit()).any(|n| n.len() == 13), "{text}");
    }
}

#[test]
fn trash_lists_what_forget_put_there_newest_first_until_it_is_restored() {
    let env = Env::with_fixture("demo");
    env.mem(["trash"]).assert().success().stdout("the trash is empty\n");
    env.mem(["forget", "facts/db-schema-owners"]).assert().success();
    env.mem(["forget", "pitfalls/pg-pool-exhaustion"]).assert().success();
    let listed = env.json(["trash"]);
    let paths: Vec<&str> =
        listed["trashed"].as_array().unwrap().iter().map(|t| t["path"].as_str().unwrap()).collect();
    assert_eq!(paths.len(), 2, "{listed}");
    assert!(
        paths.contains(&"facts/db-schema-owners.md")
            && paths.contains(&"pitfalls/pg-pool-exhaustion.md")
    );
    let human = env.stdout(["trash"]);
    assert!(human.contains("mem restore facts/db-schema-owners"), "{human}");
    env.mem(["restore", "facts/db-schema-owners"]).assert().success();
    let after = env.json(["trash"]);
    assert_eq!(after["trashed"].as_array().unwrap().len(), 1, "{after}");
}

#[test]
fn restore_brings_back_several_at_once_or_none() {
    let env = Env::with_fixture("demo");
    env.mem(["forget", "facts/db-schema-owners"]).assert().success();
    env.mem(["forget", "pitfalls/pg-pool-exhaustion"]).assert().success();
    // One path that cannot be restored: nothing moves.
    env.mem(["restore", "facts/db-schema-owners", "facts/never-was"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("facts/never-was.md: nothing in the trash"));
    assert!(!env.project().join("facts/db-schema-owners.md").exists());
    let done = env.json(["restore", "facts/db-schema-owners", "pitfalls/pg-pool-exhaustion"]);
    assert_eq!(done["restored"].as_array().unwrap().len(), 2, "{done}");
    assert!(env.project().join("facts/db-schema-owners.md").exists());
    assert!(env.project().join("pitfalls/pg-pool-exhaustion.md").exists());
    env.mem(["trash"]).assert().success().stdout("the trash is empty\n");
    env.mem(["compile", "--check"]).assert().success();
}

#[test]
fn rename_moves_the_file_with_its_id_relinks_supersedes_and_keeps_trust() {
    let env = Env::with_fixture("demo");
    env.mem(["trust", "--yes"]).assert().success();
    let before = env.read("decisions/orm-prisma.md");
    let done = env.json(["rename", "decisions/orm-prisma", "decisions/orm-prisma-2023"]);
    assert_eq!(done["path"], "decisions/orm-prisma-2023.md");
    assert_eq!(done["relinked"], serde_json::json!(["decisions/orm-drizzle.md"]));
    assert!(!env.project().join("decisions/orm-prisma.md").exists());
    // Moved as it was, but for its `id:` (the relative path), which follows.
    let want = before.replace("id: decisions/orm-prisma.md", "id: decisions/orm-prisma-2023.md");
    assert_ne!(want, before);
    assert_eq!(env.read("decisions/orm-prisma-2023.md"), want);
    assert!(
        env.read("decisions/orm-drizzle.md").contains("supersedes: decisions/orm-prisma-2023.md")
    );
    env.mem(["lint"]).assert().success();
    env.mem(["compile", "--check"]).assert().success();
    // Trust followed both files: nothing is held back, and a hard rule
    // renamed through mem still reaches the agent.
    env.mem(["rename", "rules/deploy-pnpm", "rules/deploy-with-pnpm"]).assert().success();
    let context = env.stdout(["context"]);
    assert!(!context.to_lowercase().contains("held back"), "{context}");
    assert!(context.contains("rules/deploy-with-pnpm.md"), "{context}");
    // Never over another memory, and never a missing one.
    env.mem(["rename", "decisions/orm-drizzle", "decisions/api-versioning"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("exists"));
    env.mem(["rename", "facts/nope", "facts/other"]).assert().code(2);
}
