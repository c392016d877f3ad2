//! `mem compile`: generated indexes and ROOT.md tables, exact and quiet.

use std::fs;
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use predicates::str::contains;

use crate::env::Env;

fn seeded(lang: &str) -> Env {
    let env = Env::new();
    env.mem(["init", "--lang", lang]).assert().success();
    let add = |args: &[&str]| env.mem(["remember"]).args(args).assert().success();
    add(&[
        "rules/deploy-pnpm",
        "# 部署用 pnpm\n\n部署脚本用 pnpm 而不是 npm。",
        "--load-when",
        "部署脚本",
        "--pin",
    ]);
    add(&[
        "rules/no-force-push",
        "Never force-push main.",
        "--highlight",
        "use --force-with-lease | on branches",
    ]);
    add(&[
        "decisions/orm",
        "# ORM\n\nWe use Drizzle.",
        "--load-when",
        "ORM choice",
        "--kind",
        "decision",
    ]);
    add(&["facts/multi-line", "x", "--summary", "first line\nsecond line"]);
    env
}

#[test]
fn english_root_snapshot() {
    let env = seeded("en");
    insta::assert_snapshot!("root_en", env.read("ROOT.md"));
    insta::assert_snapshot!("rules_index_en", env.read("rules/index.md"));
}

#[test]
fn chinese_root_snapshot() {
    let env = seeded("zh");
    insta::assert_snapshot!("root_zh", env.read("ROOT.md"));
    insta::assert_snapshot!("rules_index_zh", env.read("rules/index.md"));
}

#[test]
fn second_compile_is_byte_identical_and_writes_nothing() {
    let env = seeded("en");
    let files = ["ROOT.md", "rules/index.md", "decisions/index.md", "facts/index.md"];
    let old = SystemTime::now() - Duration::from_secs(3600);
    let before: Vec<String> = files.iter().map(|f| env.read(f)).collect();
    for f in files {
        fs::File::options()
            .write(true)
            .open(env.project().join(f))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    for (f, text) in files.iter().zip(&before) {
        assert_eq!(&env.read(f), text);
        let mtime = fs::metadata(env.project().join(f)).unwrap().modified().unwrap();
        assert_eq!(mtime, old, "{f} was rewritten");
    }
}

#[test]
fn user_text_around_and_between_regions_survives_even_with_regions_swapped() {
    let env = seeded("en");
    let custom = "# Mine\r\n\r\nintro text\r\n<!-- auto:begin routing -->\r\nstale\r\n<!-- auto:end -->\r\n\r\nbetween, kept\r\n<!-- auto:begin registry -->\r\n<!-- auto:end -->\r\ntrailing words";
    env.write("ROOT.md", custom);
    env.mem(["compile"]).assert().success();
    let text = env.read("ROOT.md");
    assert!(text.starts_with("# Mine\r\n\r\nintro text\r\n<!-- auto:begin routing -->\r\n| trigger | file | kind |\r\n"), "{text:?}");
    assert!(
        text.contains(
            "<!-- auto:end -->\r\n\r\nbetween, kept\r\n<!-- auto:begin registry -->\r\n| category |"
        ),
        "{text:?}"
    );
    assert!(text.ends_with("<!-- auto:end -->\r\ntrailing words"), "{text:?}");
    assert!(!text.contains("stale"));
    assert!(!text.replace("\r\n", "").contains('\n'), "line endings kept");
}

#[test]
fn broken_markers_are_errors_and_leave_the_file_alone() {
    let env = seeded("en");
    let cases = [
        (
            "<!-- auto:begin registry -->\nx\n<!-- auto:begin routing -->\n<!-- auto:end -->\n",
            "ROOT.md:3",
        ),
        ("a\n<!-- auto:begin registry -->\nno end\n", "ROOT.md:2"),
        (
            "<!-- auto:begin routing -->\n<!-- auto:end -->\n<!-- auto:begin routing -->\n<!-- auto:end -->\n",
            "ROOT.md:3",
        ),
    ];
    for (text, place) in cases {
        env.write("ROOT.md", text);
        env.mem(["compile"]).assert().code(2).stderr(contains(place));
        assert_eq!(env.read("ROOT.md"), text);
    }
}

#[test]
fn root_md_without_markers_is_reported_and_fixed_on_request() {
    let env = seeded("en");
    env.write("ROOT.md", "# Plan\n\nOnly prose.\n");
    env.mem(["compile"]).assert().success().stderr(contains("--fix-markers"));
    assert_eq!(env.read("ROOT.md"), "# Plan\n\nOnly prose.\n");
    env.mem(["compile", "--fix-markers"]).assert().success();
    let text = env.read("ROOT.md");
    assert!(
        text.starts_with(
            "# Plan\n\nOnly prose.\n\n## Categories\n\n<!-- auto:begin registry -->\n"
        ),
        "{text}"
    );
    assert!(text.contains("## Routing\n\n<!-- auto:begin routing -->\n| trigger |"));
}

#[test]
fn emptied_category_index_is_removed_but_hand_written_ones_stay() {
    let env = seeded("en");
    env.mem(["forget", "decisions/orm"]).assert().success();
    assert!(!env.project().join("decisions/index.md").exists());
    env.write("facts/index.md", "# Facts, curated by hand\n");
    env.mem(["compile"]).assert().success().stderr(contains("hand-written"));
    assert_eq!(env.read("facts/index.md"), "# Facts, curated by hand\n");
    env.mem(["forget", "facts/multi-line"]).assert().success();
    assert_eq!(env.read("facts/index.md"), "# Facts, curated by hand\n");
    env.mem(["restore", "decisions/orm"]).assert().success();
    assert!(env.read("decisions/index.md").contains("[orm.md](orm.md)"));
}

#[test]
fn check_shows_the_diff_and_exits_1_when_stale() {
    let env = seeded("en");
    env.mem(["compile", "--check"]).assert().success().stdout("");
    env.write("facts/hand-added.md", "---\nsummary: added in an editor\n---\nbody\n");
    let before = env.read("facts/index.md");
    env.mem(["compile", "--check"])
        .assert()
        .code(1)
        .stdout(contains("+| [hand-added.md](hand-added.md) | added in an editor | — |"))
        .stdout(contains("facts/index.md"))
        .stderr(contains("stale; run `mem compile`"));
    assert_eq!(env.read("facts/index.md"), before, "--check writes nothing");
    let _ = std::fs::remove_dir_all(env.project().join(".cache"));
    env.mem(["compile", "--check"]).assert().code(1);
    assert!(!env.project().join(".cache").exists(), "--check writes no cache either");
    env.mem(["compile"]).assert().success();
    env.mem(["compile", "--check"]).assert().success();
}

#[test]
fn cells_escape_pipes_fold_lines_and_show_a_dash_when_empty() {
    let env = seeded("en");
    let rules = env.read("rules/index.md");
    assert!(rules.contains("| use --force-with-lease \\| on branches |"), "{rules}");
    assert!(
        rules.contains("| [deploy-pnpm.md](deploy-pnpm.md) | 部署脚本用 pnpm 而不是 npm。 | — |"),
        "{rules}"
    );
    assert!(env.read("facts/index.md").contains("| first line second line |"));
}

#[test]
fn the_demo_fixture_is_compiled() {
    let env = Env::with_fixture("demo");
    env.mem(["compile", "--check"]).assert().success();
}

#[test]
fn compile_json_lists_what_changed() {
    let env = seeded("en");
    env.write("facts/new.md", "new fact\n");
    let v = env.json(["compile"]);
    assert_eq!(v["stale"], true);
    // A memory in a category that was there: ROOT.md holds no count to change.
    assert_eq!(v["roots"][0]["written"], serde_json::json!(["facts/index.md"]));
}

#[test]
fn an_unchanged_tree_is_recognised_and_every_change_still_seen() {
    let env = Env::with_fixture("demo");
    let stamp = env.project().join(".cache/compiled");
    env.settle();
    // `--check` writes nothing at all, not even derived data.
    env.mem(["compile", "--check"]).assert().success();
    assert!(!env.project().join(".cache").exists());
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    assert!(stamp.is_file(), "a clean compile of a settled tree leaves a stamp");
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    env.mem(["compile", "--check"]).assert().success();

    // A memory edited in place.
    let file = env.project().join("facts/ci-runner-limits.md");
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.contains("summary:"), "{text}");
    fs::write(&file, text.replacen("summary:", "summary: Edited window.", 1)).unwrap();
    env.mem(["compile", "--check"]).assert().code(1);
    env.mem(["compile"]).assert().success().stdout(contains("facts/index.md"));
    assert!(env.read("facts/index.md").contains("Edited window."));

    // A hand-damaged index, a deleted index, a new memory.
    env.settle();
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    let index = env.read("decisions/index.md");
    let row = index.lines().find(|l| l.starts_with("| [")).unwrap();
    env.write("decisions/index.md", &index.replace(row, "| tampered |"));
    env.settle();
    env.mem(["compile"]).assert().success().stdout(contains("decisions/index.md"));
    assert_eq!(env.read("decisions/index.md"), index);
    fs::remove_file(env.project().join("facts/index.md")).unwrap();
    env.mem(["compile"]).assert().success().stdout(contains("facts/index.md"));
    env.settle();
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    env.write("facts/brand-new.md", "---\nsummary: A brand new fact.\n---\nbody\n");
    env.mem(["compile"]).assert().success();
    assert!(env.read("facts/index.md").contains("A brand new fact."));

    // A damaged stamp only costs a full compile.
    env.settle();
    fs::write(&stamp, b"MEMSTMP\x01garbage").unwrap();
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    let index = env.read("facts/index.md");
    let row = index.lines().find(|l| l.starts_with("| [")).unwrap();
    env.write("facts/index.md", &index.replace(row, "| tampered |"));
    env.settle();
    fs::write(&stamp, b"garbage").unwrap();
    env.mem(["compile"]).assert().success().stdout(contains("facts/index.md"));
}

#[test]
fn ten_thousand_triggers_leave_root_md_within_its_bound() {
    let env = Env::new();
    env.mem(["init"]).assert().success();
    // 10,000 triggers: a whole routing table would be over 1 MiB.
    for i in 0..1000 {
        let triggers: Vec<String> = (0..10)
            .map(|k| format!("  - the deployment pipeline step {i} stage {k} of the release train"))
            .collect();
        let text =
            format!("---\nsummary: step {i}\nload_when:\n{}\n---\nbody\n", triggers.join("\n"));
        env.write(&format!("facts/step-{i}.md"), &text);
    }
    env.mem(["compile"]).assert().success();
    let root = env.read("ROOT.md");
    assert!(root.len() <= 25_000 && root.lines().count() <= 200, "{root}");
    assert!(root.contains("<!-- mem:more total=10000 "), "{root}");
    let index = env.read("facts/index.md");
    assert_eq!(index.lines().filter(|l| l.starts_with("| [step-")).count(), 1000);
    env.mem(["compile"]).assert().success().stdout("up to date\n");
    env.mem(["compile", "--check"]).assert().success();
    // Many near-twins and entries are reported; ROOT.md is not.
    let lint = env.mem(["lint"]).output().unwrap();
    let said =
        String::from_utf8_lossy(&lint.stdout).to_string() + &String::from_utf8_lossy(&lint.stderr);
    assert!(!said.contains("ROOT.md"), "{said}");
    env.mem(["trust", "--yes"]).assert().success();
    let context = env.stdout(["context"]);
    assert!(!context.to_lowercase().contains("held back"), "{context}");
}

#[test]
fn a_memory_that_cannot_be_read_is_named_not_silently_dropped() {
    let env = Env::with_fixture("demo");
    env.mem(["compile"]).assert().success();
    env.write("facts/broken.md", "---\nsummary: [unclosed\n---\nbody\n");
    env.mem(["compile"])
        .assert()
        .success()
        .stderr(contains("facts/broken.md:3: left out of the indexes: invalid YAML"));
    assert!(!env.read("facts/index.md").contains("broken.md"));
    // Said on every run while it is broken, never recorded as clean.
    env.mem(["compile"]).assert().success().stderr(contains("facts/broken.md"));
    // A check fails on it: no commit should hold what cannot be read back.
    env.mem(["compile", "--check"]).assert().code(1).stderr(contains("facts/broken.md:3:"));
}

/// The state a `kill -9` between a memory's write and its recompile
/// leaves: the memory changed, the indexes not, the marker set. Made by
/// hand, so the test does not race a kill.
fn interrupted_write(env: &Env) {
    env.mem(["remember", "facts/cache", "The CI cache lives in the ci-cache bucket."])
        .assert()
        .success();
    let text = env.read("facts/cache.md");
    env.write(
        "facts/cache.md",
        &text.replace("---\n", "---\nsummary: Moved to the ci-cache-eu bucket.\n"),
    );
    fs::create_dir_all(env.project().join(".cache")).unwrap();
    fs::write(env.project().join(".cache/compile-pending"), "").unwrap();
    assert!(!env.read("facts/index.md").contains("ci-cache-eu"));
}

#[test]
fn lint_and_the_check_name_an_interrupted_write_and_its_fix() {
    let env = Env::with_project();
    interrupted_write(&env);
    env.mem(["lint"])
        .assert()
        .code(1)
        .stdout(contains("a write through mem stopped before its recompile"))
        .stdout(contains("run `mem compile`"));
    env.mem(["compile", "--check"])
        .assert()
        .code(1)
        .stderr(contains("a write through mem stopped before its recompile"));
    env.mem(["compile"]).assert().success();
    assert!(env.read("facts/index.md").contains("ci-cache-eu"));
    assert!(!env.project().join(".cache/compile-pending").exists());
    env.mem(["lint"]).assert().stdout(contains("stopped before its recompile").not());
}

#[test]
fn the_next_write_repairs_an_interrupted_one_even_when_it_is_refused() {
    let env = Env::with_project();
    interrupted_write(&env);
    // A write that is refused (a credential) still takes the lock, sees
    // the marker and recompiles.
    env.mem(["remember", "facts/db", "password = hunter2hunter2"]).assert().code(2);
    assert!(env.read("facts/index.md").contains("ci-cache-eu"), "{}", env.read("facts/index.md"));
    assert!(!env.project().join(".cache/compile-pending").exists());
    env.mem(["compile", "--check"]).assert().success();
}

#[test]
fn a_finished_write_leaves_no_marker() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "A plain fact about the build."]).assert().success();
    env.mem(["forget", "facts/a"]).assert().success();
    assert!(!env.project().join(".cache/compile-pending").exists());
    env.mem(["lint"]).assert().stdout(contains("stopped before its recompile").not());
}
