//! Files edited by hand or by git: a change made outside `mem` to a trusted
//! project is named wherever people look, and what a merge left unresolved
//! or unparsable is refused by the hook and left out by every reader.

use std::process::{Command, Output};

use predicates::str::contains;

use crate::env::Env;

fn git(env: &Env, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(env.work())
        .args(args)
        .env_clear()
        .env("PATH", crate::env::path_with_mem())
        .env("HOME", env.tmp.path().join("home"))
        .env("MEM_GLOBAL_DIR", env.global())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .unwrap()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let out = git(env, args);
    assert!(out.status.success(), "git {args:?}: {}", all(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn all(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A git repository with a trusted project root holding a rule and a fact,
/// committed.
fn repo() -> Env {
    let env = Env::new();
    ok(&env, &["init", "-q", "-b", "main"]);
    env.mem(["init"]).assert().success();
    env.mem(["remember", "rules/no-force", "Never force-push to main."]).assert().success();
    env.mem(["remember", "facts/orm", "The ORM is Drizzle, chosen for its SQL-first API."])
        .assert()
        .success();
    ok(&env, &["add", "-A"]);
    ok(&env, &["commit", "-q", "-m", "memory"]);
    env
}

/// Append a line to a memory's body, as an editor would.
fn append(env: &Env, rel: &str, line: &str) {
    let text = env.read(rel);
    env.write(rel, &format!("{text}{line}\n"));
}

const ONE_HELD: &str = "1 project file changed outside mem is held back from agents (rules/no-force.md): review with `mem trust`";

#[test]
fn a_rule_edited_by_hand_is_named_by_every_command_that_looks() {
    let env = repo();
    // Nothing is held back yet: nothing says so.
    for args in [&["inspect"][..], &["stats"], &["compile"]] {
        let out = env.mem(args).output().unwrap();
        assert!(!stderr(&out).contains("held back"), "{args:?}: {}", stderr(&out));
    }
    append(&env, "rules/no-force.md", "Not even on a Friday.");

    // Commands that describe the root.
    for args in [&["inspect"][..], &["stats"]] {
        env.mem(args).assert().success().stderr(contains(ONE_HELD));
    }
    // Commands that write or check it.
    env.mem(["compile"]).assert().success().stderr(contains(ONE_HELD));
    env.mem(["compile", "--check"]).assert().success().stderr(contains(ONE_HELD));
    env.mem(["remember", "facts/ci", "CI runs on every push."])
        .assert()
        .success()
        .stderr(contains(ONE_HELD));
    env.mem(["edit", "facts/ci"])
        .env("VISUAL", "true")
        .assert()
        .success()
        .stderr(contains(ONE_HELD));

    // lint: a warning, which alone does not fail it.
    env.mem(["lint"])
        .assert()
        .success()
        .stdout(contains(format!("warning: {ONE_HELD}")))
        .stdout(contains("no problems, 1 warning(s)"));
    let json = env.json(["lint"]);
    let problems = json["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{json}");
    assert_eq!(problems[0]["severity"], "warning");
    assert_eq!(problems[0]["problem"], ONE_HELD);
    // An error beside it still fails lint, and says both.
    env.write("facts/broken.md", "---\nsummary: [unclosed\n---\nbody\n");
    env.mem(["lint"]).assert().code(1).stdout(contains("1 problem(s), 1 warning(s)"));
    std::fs::remove_file(env.project().join("facts/broken.md")).unwrap();

    // The pre-commit hook says it too, and lets the commit through.
    env.mem(["compile"]).assert().success();
    env.mem(["hook", "install"]).assert().success();
    ok(&env, &["add", "-A"]);
    let out = git(&env, &["commit", "-q", "-m", "edited by hand"]);
    assert!(out.status.success(), "{}", all(&out));
    assert!(all(&out).contains(ONE_HELD), "{}", all(&out));

    // Once reviewed and trusted, nothing is said.
    env.mem(["trust", "--yes"]).assert().success();
    for args in [&["inspect"][..], &["stats"], &["compile"], &["lint"]] {
        let out = env.mem(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", all(&out));
        assert!(!all(&out).contains("held back"), "{args:?}: {}", all(&out));
    }
}

#[test]
fn the_notice_names_three_files_and_counts_the_rest() {
    let env = repo();
    for slug in ["a", "b", "c"] {
        env.mem(["remember", &format!("facts/{slug}"), &format!("Fact {slug} about the build.")])
            .assert()
            .success();
    }
    for rel in ["facts/a.md", "facts/b.md", "facts/orm.md"] {
        append(&env, rel, "Edited in an editor.");
    }
    env.write("facts/pulled.md", "---\nsummary: arrived with git pull\n---\nbody\n");
    env.mem(["stats"]).assert().success().stderr(contains(
        "4 project files changed outside mem are held back from agents (facts/a.md, facts/b.md, facts/orm.md, and 1 more): review with `mem trust`",
    ));
}

#[test]
fn an_edit_that_keeps_size_and_time_is_still_seen_after_the_notice_was_cached() {
    let env = repo();
    env.settle();
    // Everything verified and old enough to be kept in the cache.
    let out = env.mem(["stats"]).output().unwrap();
    assert!(!stderr(&out).contains("held back"), "{}", stderr(&out));
    assert!(env.project().join(".cache/trusted").is_file());
    let text = env.read("rules/no-force.md");
    env.write("rules/no-force.md", &text.replace("Never", "Always"));
    env.settle();
    env.mem(["stats"]).assert().success().stderr(contains(ONE_HELD));
    // A damaged cache is only a cache.
    std::fs::write(env.project().join(".cache/trusted"), b"garbage").unwrap();
    env.mem(["stats"]).assert().success().stderr(contains(ONE_HELD));
}

#[test]
fn a_project_never_trusted_here_is_said_once_where_a_root_is_described() {
    // As a clone arrives: a project root this device never trusted.
    let env = Env::with_project();
    env.mem(["untrust"]).assert().success();
    env.write("facts/cloned.md", "---\nsummary: came with a clone\n---\nbody\n");
    let line = "this project's memory is not trusted on this device, so agents get none of it: review with `mem trust`";
    for args in [&["inspect"][..], &["stats"]] {
        env.mem(args).assert().success().stderr(contains(line));
    }
    // lint says it without failing on it.
    env.mem(["compile"]).assert().success();
    env.mem(["lint"]).assert().success().stderr(contains(line));
    // Commands that write stay quiet about it.
    let out = env.mem(["remember", "facts/more", "Another fact."]).output().unwrap();
    assert!(out.status.success(), "{}", all(&out));
    assert!(!stderr(&out).contains("trust"), "{}", stderr(&out));
}

/// The line of `marker` in `text`, 1-based.
fn line_of(text: &str, marker: &str) -> usize {
    text.lines().position(|l| l.starts_with(marker)).unwrap() + 1
}

/// `main` and `feature` both change facts/orm.md; merging leaves markers.
fn conflicted() -> Env {
    let env = repo();
    ok(&env, &["checkout", "-q", "-b", "feature"]);
    let orm = env.read("facts/orm.md");
    env.write("facts/orm.md", &orm.replace("Drizzle", "Prisma"));
    ok(&env, &["commit", "-q", "-am", "prisma"]);
    ok(&env, &["checkout", "-q", "main"]);
    env.write("facts/orm.md", &orm.replace("Drizzle", "Kysely"));
    ok(&env, &["commit", "-q", "-am", "kysely"]);
    let out = git(&env, &["merge", "-q", "feature"]);
    assert!(!out.status.success(), "the merge was expected to conflict: {}", all(&out));
    assert!(env.read("facts/orm.md").contains("<<<<<<< HEAD"));
    env
}

#[test]
fn a_merge_conflict_in_a_memory_is_reported_with_its_line_and_left_out_of_recall() {
    let env = conflicted();
    let text = env.read("facts/orm.md");
    let (start, end) = (line_of(&text, "<<<<<<<"), line_of(&text, ">>>>>>>"));
    let at = format!("facts/orm.md:{start}: unresolved git conflict (lines {start}-{end})");
    env.mem(["lint"]).assert().code(1).stdout(contains(at.as_str())).stdout(contains("git add"));

    // recall leaves it out, with a warning; the markers never reach the output.
    let out = env.mem(["recall", "ORM"]).output().unwrap();
    let said = all(&out);
    assert!(stderr(&out).contains(&at), "{said}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("orm.md"), "{said}");
    assert!(!said.contains("Kysely") && !said.contains("Prisma"), "{said}");

    // context, with the project trusted as a whole: left out with a warning.
    let out = env.mem(["context", "--query", "ORM"]).env("MEM_TRUST_ALL", "1").output().unwrap();
    assert!(stderr(&out).contains(&at), "{}", all(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("<<<<<<<"), "{}", all(&out));

    // The hook refuses to commit the markers, naming file and line.
    env.mem(["hook", "install"]).assert().success();
    ok(&env, &["add", "-A"]);
    let out = git(&env, &["commit", "-q", "--no-edit"]);
    assert!(!out.status.success(), "the hook let a conflicted memory through: {}", all(&out));
    let said = all(&out);
    assert!(
        said.contains(&format!(
            "facts/orm.md:{start}: left out of the indexes: unresolved git conflict"
        )),
        "{said}"
    );
    assert!(said.contains("staged memory file(s) cannot be read"), "{said}");

    // Resolved, the memory is back and the commit goes through.
    env.write(
        "facts/orm.md",
        &text
            .lines()
            .filter(|l| {
                !l.starts_with("<<<<<<<")
                    && !l.starts_with("=======")
                    && !l.starts_with(">>>>>>>")
                    && !l.contains("Prisma")
            })
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    env.mem(["compile"]).assert().success();
    ok(&env, &["add", "-A"]);
    ok(&env, &["commit", "-q", "--no-edit"]);
    env.mem(["recall", "Kysely"]).assert().success().stdout(contains("facts/orm.md"));
}

#[test]
fn conflict_markers_documented_in_a_fenced_block_are_text() {
    let env = Env::with_project();
    env.mem(["remember", "pitfalls/merge-markers", "A merge can leave markers behind:\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n```\n\nSearch for them before committing."])
        .assert()
        .success();
    env.mem(["lint"]).assert().success().stdout(contains("no problems"));
    // The same lines outside a fence would read back as a conflict: refused.
    env.mem([
        "remember",
        "pitfalls/bare",
        "Before:\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n",
    ])
    .assert()
    .code(2)
    .stderr(contains("unresolved git conflict"))
    .stderr(contains("fenced code block"));
    assert!(!env.project().join("pitfalls/bare.md").exists());
    env.mem(["recall", "markers"]).assert().success().stdout(contains("pitfalls/merge-markers.md"));
    env.mem(["compile", "--check"]).assert().success();
}

#[test]
fn invalid_yaml_staged_fails_the_staged_check_and_the_hook() {
    let env = repo();
    env.mem(["hook", "install"]).assert().success();
    // Not staged: the commit of something else goes through.
    env.write("facts/draft.md", "---\nsummary: [never closed\n---\nbody\n");
    std::fs::write(env.work().join("notes.txt"), "other work\n").unwrap();
    ok(&env, &["add", "notes.txt"]);
    ok(&env, &["commit", "-q", "-m", "other work"]);
    env.mem(["compile", "--check", "--staged"]).assert().success();

    // Staged: refused, naming the file and the line.
    ok(&env, &["add", ".memory/facts/draft.md"]);
    let out = env.mem(["compile", "--check", "--staged"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", all(&out));
    assert!(stderr(&out).contains("facts/draft.md:3:"), "{}", all(&out));
    assert!(stderr(&out).contains("staged memory file(s) cannot be read"), "{}", all(&out));
    let json = {
        let out = env.mem(["compile", "--check", "--staged", "--json"]).output().unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let notes = json["roots"][0]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["path"] == "facts/draft.md" && n["line"] == 3 && n["skipped"] == true),
        "{json}"
    );
    let out = git(&env, &["commit", "-q", "-m", "unreadable memory"]);
    assert!(!out.status.success(), "the hook let an unparsable memory through: {}", all(&out));
    assert!(all(&out).contains("facts/draft.md:3:"), "{}", all(&out));

    // In the working tree too, `compile --check` fails on it.
    env.mem(["compile", "--check"]).assert().code(1).stderr(contains("facts/draft.md:3:"));
    // An unclosed frontmatter is as unreadable.
    env.write("facts/draft.md", "---\nsummary: open\nbody with no closing fence\n");
    ok(&env, &["add", ".memory/facts/draft.md"]);
    env.mem(["compile", "--check", "--staged"])
        .assert()
        .code(1)
        .stderr(contains("facts/draft.md:1:"));
}
