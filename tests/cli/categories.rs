//! Kinds and categories as a person meets them: a default category implies
//! its kind, crossing into or out of `rules/` is said, a mistyped category
//! or path gets "did you mean", a derived summary keeps what only looks
//! like HTML, and `.history/` stays out of git.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use predicates::str::contains;

use crate::env::Env;

fn git(env: &Env, args: &[&str]) -> Output {
    let out = Command::new("git")
        .current_dir(env.work())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.tmp.path().join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A git project with an initialised `.memory/`.
fn git_project() -> Env {
    let env = Env::new();
    git(&env, &["init", "-q"]);
    env.mem(["init"]).assert().success();
    env
}

fn paths(list: &serde_json::Value) -> Vec<String> {
    let memories = list["memories"].as_array().unwrap();
    memories.iter().map(|m| m["path"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_default_category_implies_its_kind_unless_the_file_says() {
    let env = git_project();
    env.mem(["remember", "pitfalls/tz", "Timestamps in the CSV export are local time."])
        .assert()
        .success();
    env.mem(["remember", "pitfalls/lesson", "Retry the flaky deploy once.", "--kind", "lesson"])
        .assert()
        .success();
    env.mem(["remember", "decisions/orm", "We use Drizzle for the ORM layer."]).assert().success();
    env.mem(["remember", "facts/node", "Node 22 runs the build everywhere."]).assert().success();
    assert_eq!(paths(&env.json(["list", "--kind", "pitfall"])), ["pitfalls/tz.md"]);
    assert_eq!(paths(&env.json(["list", "--kind", "lesson"])), ["pitfalls/lesson.md"]);
    assert_eq!(paths(&env.json(["list", "--kind", "decision"])), ["decisions/orm.md"]);
    assert_eq!(paths(&env.json(["list", "--kind", "fact"])), ["facts/node.md"]);
    assert_eq!(env.json(["inspect", "pitfalls/tz"])["memory"]["kind"], "pitfall");
    // The file itself is not given a kind: the folder says it.
    assert!(!env.read("pitfalls/tz.md").contains("kind:"));
}

#[test]
fn moving_into_or_out_of_rules_says_what_it_now_is() {
    let env = git_project();
    env.mem(["remember", "facts/x", "Deploys go through the staging cluster first."])
        .assert()
        .success();
    let out = env.json(["mv", "facts/x", "rules/x"]);
    let notes = out["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(notes[0].as_str().unwrap().contains("rules/x.md is now a hard rule"), "{out}");
    env.mem(["mv", "rules/x", "facts/y"])
        .assert()
        .success()
        .stdout(contains("note: facts/y.md is no longer a hard rule"));
    // A move that crosses nothing says nothing.
    let out = env.json(["mv", "facts/y", "facts/z"]);
    assert_eq!(out["notes"], serde_json::json!([]));
    // A kind that crosses the boundary, in place.
    env.mem(["remember", "facts/z", "--kind", "rule"])
        .assert()
        .success()
        .stdout(contains("note: facts/z.md is now a hard rule"));
    let out = env.json(["remember", "facts/z", "--kind", "fact"]);
    assert!(out["notes"][0].as_str().unwrap().contains("no longer a hard rule"), "{out}");
}

#[cfg(unix)]
#[test]
fn an_edit_that_moves_a_memory_across_the_rule_boundary_says_so() {
    let env = git_project();
    env.mem(["remember", "facts/x", "Deploys go through the staging cluster first."])
        .assert()
        .success();
    let script = env.tmp.path().join("to-rule");
    fs::write(&script, "#!/bin/sh\nsed -i '1a kind: rule' \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.mem(["edit", "facts/x"])
        .env("EDITOR", &script)
        .assert()
        .success()
        .stdout(contains("note: facts/x.md is now a hard rule"));
    assert!(env.read("facts/x.md").contains("kind: rule\n"));
}

#[cfg(unix)]
#[test]
fn a_new_memory_from_edit_starts_with_its_folders_kind() {
    let env = git_project();
    let script = env.tmp.path().join("write");
    fs::write(
        &script,
        "#!/bin/sh\nsed -i 's/^# Title$/# The CSV export is in local time/' \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.mem(["edit", "pitfalls/tz"]).env("EDITOR", &script).assert().success();
    assert!(env.read("pitfalls/tz.md").contains("\nkind: pitfall\n"));
    assert_eq!(paths(&env.json(["list", "--kind", "pitfall"])), ["pitfalls/tz.md"]);
}

#[test]
fn a_category_near_an_existing_one_is_refused_until_asked_for() {
    let env = git_project();
    env.mem(["remember", "decsions/typo", "We picked Postgres over MySQL."])
        .assert()
        .code(2)
        .stderr(contains("did you mean `decisions`?"))
        .stderr(contains("--new-category"));
    assert!(!env.project().join("decsions").exists());
    let out = env.json(["remember", "decsions/typo", "We picked Postgres.", "--new-category"]);
    assert_eq!(out["action"], "created");
    assert_eq!(out["notes"][0], "new category `decsions` in the project root");
    assert!(env.project().join("decsions/typo.md").is_file());
    // A name near nothing is made with a note, no flag needed.
    env.mem(["remember", "runbooks/deploy", "Run the deploy from the main branch only."])
        .assert()
        .success()
        .stdout(contains("note: new category `runbooks` in the project root"));
    // An existing category says nothing of the kind.
    let out = env.json(["remember", "facts/a", "Node 22 runs the build everywhere."]);
    assert_eq!(out["notes"], serde_json::json!([]));
    // mv into a mistyped category is refused the same way, and nothing moves.
    env.mem(["mv", "facts/a", "fact/a"]).assert().code(2).stderr(contains("did you mean `facts`?"));
    assert!(env.project().join("facts/a.md").is_file());
    env.mem(["mv", "facts/a", "fact/a", "--new-category"]).assert().success();
}

#[cfg(unix)]
#[test]
fn edit_refuses_a_mistyped_category_before_the_editor_opens() {
    let env = git_project();
    let marker = env.tmp.path().join("opened");
    let script = env.tmp.path().join("editor");
    fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.mem(["edit", "pitfals/x"])
        .env("EDITOR", &script)
        .assert()
        .code(2)
        .stderr(contains("did you mean `pitfalls`?"));
    assert!(!marker.exists());
    assert!(!env.project().join("pitfals").exists());
}

#[test]
fn a_path_that_is_not_there_suggests_the_nearest_memories() {
    let env = git_project();
    env.mem(["remember", "facts/temp", "The build cache lives in /var/cache/ci."])
        .assert()
        .success();
    for args in [
        vec!["forget", "facts/tmp"],
        vec!["inspect", "facts/tmp"],
        vec!["history", "facts/tmp"],
        vec!["mv", "facts/tmp", "facts/other"],
        vec!["remember", "facts/tmp", "--tag", "ci"],
    ] {
        env.mem(&args).assert().code(2).stderr(contains("did you mean facts/temp?"));
    }
    let err = env.mem(["--json", "forget", "facts/tmp"]).output().unwrap();
    let err: serde_json::Value = serde_json::from_slice(&err.stdout).unwrap();
    assert_eq!(err["error"], "facts/tmp.md: no such memory");
    assert_eq!(err["hint"], "did you mean facts/temp?");
    // restore looks in the trash.
    env.mem(["forget", "facts/temp"]).assert().success();
    env.mem(["restore", "facts/tmp"]).assert().code(2).stderr(contains("did you mean facts/temp?"));
    // Nothing near: the usual hint.
    env.mem(["forget", "decisions/orm"])
        .assert()
        .code(2)
        .stderr(contains("check the path with `mem list`"));
}

#[test]
fn a_summary_keeps_text_that_looks_like_html() {
    let env = git_project();
    env.mem(["remember", "facts/vec", "parse() returns Vec<String> for the argument list."])
        .assert()
        .success();
    let list = env.json(["list"]);
    let summary = &list["memories"][0]["summary"];
    assert_eq!(summary, "parse() returns Vec<String> for the argument list.");
    env.mem(["recall", "argument list"])
        .assert()
        .success()
        .stdout(contains("parse() returns Vec<String> for the argument list."));
    env.mem(["remember", "facts/generic", "# Box<T>\n\nA `Box<T>` owns a heap value; a < b > c."])
        .assert()
        .success();
    let detail = env.json(["inspect", "facts/generic"]);
    assert_eq!(detail["memory"]["title"], "Box<T>");
    assert_eq!(detail["memory"]["summary"], "A Box<T> owns a heap value; a < b > c.");
}

fn staged(env: &Env) -> String {
    git(env, &["add", "-A"]);
    String::from_utf8(git(env, &["diff", "--cached", "--name-only"]).stdout).unwrap()
}

#[test]
fn saved_versions_are_not_staged_by_git_add() {
    let env = git_project();
    env.mem(["remember", "facts/a", "Node 22 runs the build everywhere."]).assert().success();
    env.mem_at(["remember", "facts/a", "Node 24 runs the build everywhere."], 60_000)
        .assert()
        .success();
    assert!(env.project().join(".history/facts/a").is_dir());
    let staged = staged(&env);
    assert!(staged.contains(".memory/facts/a.md"), "{staged}");
    assert!(!staged.contains(".history"), "{staged}");
}

#[test]
fn update_gitignore_adds_only_its_missing_lines_once() {
    let env = git_project();
    // A root made by an older mem, with a line of the user's own.
    let old = "# Derived, per-device data written by mem: never commit it.\n.state.json\n.state.json.*\n.cache/\n.trash/\nscratch.txt";
    fs::write(env.project().join(".gitignore"), old).unwrap();
    env.mem(["remember", "facts/a", "Node 22 runs the build everywhere."]).assert().success();
    env.mem_at(["remember", "facts/a", "Node 24 runs the build everywhere."], 60_000)
        .assert()
        .success();
    // Nothing changes it but the explicit command; inspect points to it.
    env.mem(["init"]).assert().success();
    assert_eq!(fs::read_to_string(env.project().join(".gitignore")).unwrap(), old);
    env.mem(["inspect"]).assert().success().stdout(contains(
        "lacks */.*.draft.md, .history/: `mem init --update-gitignore` adds them",
    ));
    let out = env.json(["init", "--update-gitignore"]);
    assert_eq!(out["action"], "updated");
    assert_eq!(out["gitignore_added"], serde_json::json!(["*/.*.draft.md", ".history/"]));
    let after = fs::read_to_string(env.project().join(".gitignore")).unwrap();
    assert!(after.starts_with(&format!("{old}\n")), "{after}");
    assert!(after.ends_with("\n.history/\n"), "{after}");
    assert!(!staged(&env).contains(".history"));
    // Again: not a byte changes.
    let out = env.json(["init", "--update-gitignore"]);
    assert_eq!(out["action"], "unchanged");
    assert_eq!(fs::read_to_string(env.project().join(".gitignore")).unwrap(), after);
    let shown = env.stdout(["inspect"]);
    assert!(!shown.contains("lacks"), "{shown}");
}

#[test]
fn a_new_root_ignores_history() {
    let env = Env::new();
    env.mem(["init"]).assert().success();
    let ignore = fs::read_to_string(Path::new(&env.project()).join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == ".history/"), "{ignore}");
    assert_eq!(env.json(["init", "--update-gitignore"])["gitignore_added"], serde_json::json!([]));
}

#[test]
fn a_generated_index_keeps_angle_brackets_visible() {
    let env = git_project();
    env.mem(["remember", "facts/vec", "parse() returns Vec<String> for the argument list."])
        .assert()
        .success();
    let index = env.read("facts/index.md");
    assert!(index.contains("parse() returns Vec\\<String> for the argument list."), "{index}");
    env.mem(["compile", "--check"]).assert().success();
}
