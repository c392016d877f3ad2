//! The git workflow with real git: the pre-commit hook refuses stale
//! indexes, and merges of generated files never conflict.

use std::path::Path;
use std::process::{Command, Output};

use crate::env::Env;

fn git(env: &Env, dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
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

fn ok(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = git(env, dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with a compiled memory root and the hook installed.
fn repo() -> Env {
    let env = Env::new();
    let work = env.work();
    ok(&env, &work, &["init", "-q", "-b", "main"]);
    env.mem(["init"]).assert().success();
    env.mem(["remember", "decisions/a", "Decision A."]).assert().success();
    env.mem(["hook", "install"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "memory"]);
    env
}

#[test]
fn merging_two_branches_that_add_memories_gives_an_exact_index() {
    let env = repo();
    let work = env.work();
    let clone = env.tmp.path().join("clone");
    ok(&env, env.tmp.path(), &["clone", "-q", work.to_str().unwrap(), clone.to_str().unwrap()]);
    let in_clone = |args: &[&str]| env.mem(args).current_dir(&clone).assert().success();
    in_clone(&["hook", "install"]);
    in_clone(&["remember", "decisions/c", "Decision C.", "--load-when", "choice c"]);
    in_clone(&["remember", "facts/z", "A fact from the clone."]);
    ok(&env, &clone, &["add", "-A"]);
    ok(&env, &clone, &["commit", "-q", "-m", "clone adds c and z"]);

    env.mem(["remember", "decisions/b", "Decision B.", "--load-when", "choice b", "--pin"])
        .assert()
        .success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "main adds b"]);

    let out = git(
        &env,
        &work,
        &["-c", "pull.rebase=false", "pull", "-q", "--no-edit", clone.to_str().unwrap(), "main"],
    );
    assert!(out.status.success(), "merge failed: {}", String::from_utf8_lossy(&out.stderr));
    let index = env.read("decisions/index.md");
    assert!(!index.contains("<<<<<<<"), "{index}");
    // The merged files are exactly what compile writes on the merged tree.
    env.mem(["compile", "--check"]).assert().success();
    assert!(index.contains("[b.md](b.md)") && index.contains("[c.md](c.md)"));
    let root = env.read("ROOT.md");
    assert!(root.contains("| choice b |") && root.contains("| choice c |"), "{root}");
    // The merge commit itself holds it: nothing is left to refresh.
    assert_eq!(ok(&env, &work, &["status", "--porcelain"]), "");
}

#[test]
fn a_commit_with_a_stale_index_is_refused_with_the_diff() {
    let env = repo();
    let work = env.work();
    env.write("facts/by-hand.md", "---\nsummary: written in an editor\n---\nbody\n");
    ok(&env, &work, &["add", "-A"]);
    let out = git(&env, &work, &["commit", "-q", "-m", "stale"]);
    assert!(!out.status.success(), "the hook let a stale index through");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("+| [by-hand.md](by-hand.md) | written in an editor | — |"), "{text}");
    // The message names the files to regenerate and add, in the project.
    assert!(
        text.contains("run `mem compile`, then `git add .memory/facts/index.md .memory/ROOT.md`"),
        "{text}"
    );
    // Compiled but not staged: the commit would still hold the stale index.
    env.mem(["compile"]).assert().success();
    let out = git(&env, &work, &["commit", "-q", "-m", "compiled, not added"]);
    assert!(!out.status.success(), "the hook judged the working tree, not the commit");
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "fresh"]);
    // What is staged is judged, not the working tree: an unstaged new
    // memory does not block a commit of something else.
    env.write("facts/unstaged.md", "---\nsummary: not added yet\n---\nbody\n");
    std::fs::write(work.join("notes.txt"), "other work\n").unwrap();
    ok(&env, &work, &["add", "notes.txt"]);
    ok(&env, &work, &["commit", "-q", "-m", "other work"]);
}

#[test]
fn an_existing_hook_is_chained_and_uninstall_restores_everything() {
    let env = Env::new();
    let work = env.work();
    ok(&env, &work, &["init", "-q", "-b", "main"]);
    env.mem(["init"]).assert().success();
    let hooks = work.join(".git/hooks");
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\necho previous hook ran\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(hooks.join("pre-commit"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    std::fs::write(work.join(".gitattributes"), "*.png binary\n").unwrap();
    env.mem(["hook", "install"]).assert().success();
    env.mem(["hook", "install"]).assert().success();
    env.mem(["remember", "facts/a", "alpha"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    let out = git(&env, &work, &["commit", "-m", "with both hooks"]);
    assert!(out.status.success());
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("previous hook ran"), "{said}");
    assert!(ok(&env, &work, &["config", "merge.mem.driver"]).contains("merge-driver %O %A %B %P"));

    env.mem(["hook", "uninstall"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
        "#!/bin/sh\necho previous hook ran\n"
    );
    assert!(!hooks.join("pre-commit.before-mem").exists());
    assert_eq!(std::fs::read_to_string(work.join(".gitattributes")).unwrap(), "*.png binary\n");
    assert!(!git(&env, &work, &["config", "merge.mem.driver"]).status.success());
}

#[test]
fn hook_outside_a_repository_explains() {
    let env = Env::with_project();
    env.mem(["hook", "install"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("git repository"));
}

#[test]
fn a_folder_name_cannot_run_a_command_in_the_hook() {
    let env = Env::new();
    let pwned = env.tmp.path().join("pwned");
    let name = format!("sub'$(touch {})'", pwned.display());
    let project = env.work().join(&name);
    std::fs::create_dir_all(&project).unwrap();
    ok(&env, &env.work(), &["init", "-q"]);
    env.mem(["init"]).current_dir(&project).assert().success();
    env.mem(["hook", "install"]).current_dir(&project).assert().success();
    env.mem(["compile"]).current_dir(&project).assert().success();
    ok(&env, &env.work(), &["add", "-A"]);
    ok(&env, &env.work(), &["commit", "-qm", "memory"]);
    assert!(!pwned.exists(), "the hook ran a command from the folder's name");
    // The hook still checks that project: a stale index is refused.
    std::fs::write(project.join(".memory/facts/x.md"), "---\nsummary: a new fact\n---\nx\n")
        .unwrap();
    ok(&env, &env.work(), &["add", "-A"]);
    let refused = git(&env, &env.work(), &["commit", "-qm", "stale"]);
    assert!(!refused.status.success(), "a stale index was committed");
}

#[cfg(unix)]
#[test]
fn a_linked_gitattributes_is_refused_before_anything_is_installed() {
    let env = Env::new();
    ok(&env, &env.work(), &["init", "-q"]);
    env.mem(["init"]).assert().success();
    std::os::unix::fs::symlink("/dev/zero", env.work().join(".gitattributes")).unwrap();
    env.mem(["hook", "install"]).assert().code(2).stderr(predicates::str::contains("symlink"));
    assert!(!env.work().join(".git/hooks/pre-commit").exists(), "installed half");
}

#[test]
fn a_fresh_root_passes_its_own_checks_and_the_hook() {
    for lang in ["en", "zh"] {
        let env = Env::new();
        let work = env.work();
        ok(&env, &work, &["init", "-q", "-b", "main"]);
        env.mem(["init", "--lang", lang]).assert().success();
        env.mem(["lint"]).assert().success();
        env.mem(["compile", "--check"]).assert().success();
        env.mem(["hook", "install"]).assert().success();
        ok(&env, &work, &["add", "-A"]);
        ok(&env, &work, &["commit", "-q", "-m", "a new memory root"]);
        let root_md = env.read("ROOT.md");
        let title = if lang == "en" { "# Project memory" } else { "# 项目记忆" };
        assert!(root_md.starts_with(title), "{root_md}");

        // The global root: its own template, and the same checks.
        env.mem(["init", "--global", "--lang", lang]).assert().success();
        env.mem(["--global", "lint"]).assert().success();
        env.mem(["--global", "compile", "--check"]).assert().success();
        let global = std::fs::read_to_string(env.global().join("ROOT.md")).unwrap();
        let title = if lang == "en" { "# Global memory" } else { "# 全局记忆" };
        assert!(global.starts_with(title), "{global}");
        assert!(!global.contains("this project") && !global.contains("本项目"), "{global}");
        // An unedited template says nothing to an agent.
        let context = env.stdout(["context", "--global"]);
        assert!(!context.contains("every project"), "{context}");
    }
}

/// Every commit is fresh, and the working tree is never touched by a hook.
fn fresh_and_clean(env: &Env, dir: &Path) {
    env.mem(["--project", dir.to_str().unwrap(), "compile", "--check"]).assert().success();
    assert_eq!(ok(env, dir, &["status", "--porcelain", "--untracked-files=no"]), "");
}

/// `branch` gets one more memory in `decisions/`, committed.
fn add_on(env: &Env, dir: &Path, branch: &str, slug: &str) {
    ok(env, dir, &["checkout", "-q", branch]);
    env.mem([
        "--project",
        dir.to_str().unwrap(),
        "remember",
        &format!("decisions/{slug}"),
        "A decision.",
    ])
    .assert()
    .success();
    ok(env, dir, &["add", "-A"]);
    ok(env, dir, &["commit", "-q", "-m", slug]);
}

#[test]
fn after_a_merge_a_rebase_or_a_checkout_every_commit_is_fresh() {
    let env = repo();
    let work = env.work();
    // Two branches each add one memory to the same category: the generated
    // text has no line both change the same way, so git merges it exactly.
    ok(&env, &work, &["branch", "side"]);
    add_on(&env, &work, "side", "side");
    add_on(&env, &work, "main", "main");
    ok(&env, &work, &["merge", "-q", "--no-edit", "side"]);
    fresh_and_clean(&env, &work);
    let index = env.read("decisions/index.md");
    assert!(index.contains("[main.md]") && index.contains("[side.md]"), "{index}");
    // A rebase of one onto the other, and checkouts of either.
    ok(&env, &work, &["checkout", "-q", "-b", "other", "HEAD~1"]);
    fresh_and_clean(&env, &work);
    add_on(&env, &work, "side", "side2");
    ok(&env, &work, &["rebase", "-q", "main"]);
    fresh_and_clean(&env, &work);
    for branch in ["main", "other", "side"] {
        ok(&env, &work, &["checkout", "-q", branch]);
        fresh_and_clean(&env, &work);
    }
    // Interactive: reword every commit; the pre-commit hook lets each through.
    let out = git(
        &env,
        &work,
        &[
            "-c",
            "sequence.editor=sed -i s/^pick/reword/",
            "-c",
            "core.editor=true",
            "rebase",
            "-i",
            "main~1",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    fresh_and_clean(&env, &work);

    // Uninstall removes every hook it added.
    env.mem(["hook", "uninstall"]).assert().success();
    assert!(!work.join(".git/hooks/pre-commit").exists());
}

#[test]
fn after_a_cherry_pick_of_one_or_several_commits_every_commit_is_fresh() {
    let env = repo();
    let work = env.work();
    ok(&env, &work, &["branch", "side"]);
    add_on(&env, &work, "side", "s1");
    add_on(&env, &work, "side", "s2");
    add_on(&env, &work, "main", "m1");
    ok(&env, &work, &["cherry-pick", "side~1"]);
    fresh_and_clean(&env, &work);
    ok(&env, &work, &["reset", "-q", "--hard", "HEAD~1"]);
    ok(&env, &work, &["cherry-pick", "side~1", "side"]);
    fresh_and_clean(&env, &work);
    ok(&env, &work, &["revert", "--no-edit", "HEAD~1"]);
    fresh_and_clean(&env, &work);
    let index = env.read("decisions/index.md");
    assert!(index.contains("[s2.md]") && !index.contains("[s1.md]"), "{index}");
}

#[test]
fn after_a_pull_that_merges_or_rebases_every_commit_is_fresh() {
    let env = repo();
    let work = env.work();
    let clone = env.tmp.path().join("clone");
    ok(&env, env.tmp.path(), &["clone", "-q", work.to_str().unwrap(), "clone"]);
    env.mem(["--project", clone.to_str().unwrap(), "hook", "install"]).assert().success();
    add_on(&env, &work, "main", "upstream");
    add_on(&env, &clone, "main", "local");
    ok(&env, &clone, &["pull", "-q", "--no-rebase", "--no-edit"]);
    fresh_and_clean(&env, &clone);
    add_on(&env, &work, "main", "upstream2");
    add_on(&env, &clone, "main", "local2");
    // With an edit of ROOT.md in progress: autostash gives it back intact.
    let root_md = clone.join(".memory/ROOT.md");
    let edited = std::fs::read_to_string(&root_md).unwrap() + "\nA note being written.\n";
    std::fs::write(&root_md, &edited).unwrap();
    ok(&env, &clone, &["pull", "-q", "--rebase", "--autostash"]);
    assert_eq!(std::fs::read_to_string(&root_md).unwrap(), edited);
    ok(&env, &clone, &["stash", "-q"]);
    fresh_and_clean(&env, &clone);
    let index = std::fs::read_to_string(clone.join(".memory/decisions/index.md")).unwrap();
    for slug in ["upstream", "upstream2", "local", "local2"] {
        assert!(index.contains(&format!("[{slug}.md]")), "{slug}: {index}");
    }
}

#[test]
fn a_branch_without_memory_commits_freely_and_an_old_install_is_cleaned_up() {
    let env = Env::new();
    let work = env.work();
    ok(&env, &work, &["init", "-q", "-b", "main"]);
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "before memory"]);
    env.mem(["init"]).assert().success();
    // A refresh hook an earlier version installed goes on the next install.
    let hooks = work.join(".git/hooks");
    std::fs::write(
        hooks.join("post-merge"),
        "#!/bin/sh\n# Installed by `mem hook install`; `mem hook uninstall` removes it.\n",
    )
    .unwrap();
    env.mem(["hook", "install"]).assert().success();
    assert!(!hooks.join("post-merge").exists());
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "memory"]);
    ok(&env, &work, &["checkout", "-q", "-b", "old", "HEAD~1"]);
    std::fs::write(work.join("a.txt"), "b\n").unwrap();
    ok(&env, &work, &["commit", "-q", "-am", "on a branch without .memory"]);
}

#[test]
fn the_hook_can_keep_exported_rule_files_fresh() {
    let env = repo();
    let work = env.work();
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["hook", "install", "--export", "agents-md"]).assert().success();
    env.mem(["export", "--format", "agents-md"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "AGENTS.md"]);
    // A new rule, committed without exporting again: refused, with the fix.
    env.mem(["remember", "rules/smoke", "Run the smoke test after every deploy."])
        .assert()
        .success();
    ok(&env, &work, &["add", "-A"]);
    let out = git(&env, &work, &["commit", "-q", "-m", "a rule"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("mem export --format agents-md"), "{said}");
    env.mem(["export", "--format", "agents-md"]).assert().success();
    // Exported but not staged: the commit would hold the stale one.
    let out = git(&env, &work, &["commit", "-q", "-m", "a rule"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("git add"));
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "a rule, exported"]);
    // Unstaged memory edits, or a memory this clone does not trust: said,
    // never a refused commit.
    env.mem(["remember", "rules/later", "Not staged yet, this rule."]).assert().success();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    ok(&env, &work, &["add", "a.txt"]);
    let out = git(&env, &work, &["commit", "-q", "-m", "unrelated"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not checked"));
    ok(&env, &work, &["checkout", "-q", "--", "."]);
    ok(&env, &work, &["clean", "-qfd", ".memory"]);
    env.mem(["untrust"]).assert().success();
    std::fs::write(work.join("a.txt"), "b\n").unwrap();
    ok(&env, &work, &["add", "a.txt"]);
    let out = git(&env, &work, &["commit", "-q", "-m", "unrelated, untrusted"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    env.mem(["hook", "uninstall"]).assert().success();
}

/// A repository whose ROOT.md is over its bound: 260 memories with a
/// trigger each, two of them pinned (always shown), compiled and committed
/// with the hook installed.
fn bounded_repo() -> Env {
    let env = Env::new();
    let work = env.work();
    ok(&env, &work, &["init", "-q", "-b", "main"]);
    env.mem(["init"]).assert().success();
    for i in 0..260 {
        let updated = crate::env::NOW - (i % 90 + 1) * 86_400_000;
        let pinned = if i < 2 { "pinned: true\n" } else { "" };
        env.write(
            &format!("facts/note-{i}.md"),
            &format!(
                "---\nupdated: {updated}\n{pinned}load_when:\n  - topic {i}\n---\nNote {i}.\n"
            ),
        );
    }
    env.mem(["compile"]).assert().success();
    assert!(env.read("ROOT.md").contains("<!-- mem:more total=260 "));
    env.mem(["hook", "install"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "memory"]);
    env
}

/// `branch` gets one more memory with a trigger, committed.
fn add_trigger_on(env: &Env, dir: &Path, branch: &str, slug: &str) {
    ok(env, dir, &["checkout", "-q", branch]);
    let project = dir.to_str().unwrap();
    let memory = format!("decisions/{slug}");
    let trigger = format!("choice {slug}");
    env.mem(["--project", project, "remember", &memory, "A decision.", "--load-when", &trigger])
        .assert()
        .success();
    ok(env, dir, &["add", "-A"]);
    ok(env, dir, &["commit", "-q", "-m", slug]);
}

#[test]
fn on_a_bounded_root_md_merges_rebases_and_cherry_picks_stay_exact() {
    let env = bounded_repo();
    let work = env.work();
    // Two branches each add memories: ROOT.md merges to exactly what
    // compile writes, within its bound.
    ok(&env, &work, &["branch", "side"]);
    add_trigger_on(&env, &work, "side", "side");
    add_trigger_on(&env, &work, "side", "side2");
    add_trigger_on(&env, &work, "main", "main");
    ok(&env, &work, &["merge", "-q", "--no-edit", "side"]);
    fresh_and_clean(&env, &work);
    let root = env.read("ROOT.md");
    assert!(root.lines().count() <= 200 && root.len() <= 25_000, "{root}");
    for slug in ["main", "side", "side2"] {
        assert!(root.contains(&format!("| choice {slug} |")), "{slug}: {root}");
    }
    assert!(root.contains("<!-- mem:more total=263 "), "{root}");
    // A rebase, a cherry-pick of two commits, a revert of one.
    ok(&env, &work, &["checkout", "-q", "-b", "other", "HEAD~1"]);
    add_trigger_on(&env, &work, "other", "other");
    ok(&env, &work, &["rebase", "-q", "main"]);
    fresh_and_clean(&env, &work);
    ok(&env, &work, &["checkout", "-q", "-b", "picked", "main~2"]);
    add_trigger_on(&env, &work, "picked", "picked");
    ok(&env, &work, &["cherry-pick", "side~1", "side"]);
    fresh_and_clean(&env, &work);
    ok(&env, &work, &["revert", "--no-edit", "HEAD~1"]);
    fresh_and_clean(&env, &work);
    let root = env.read("ROOT.md");
    assert!(root.contains("| choice side2 |") && !root.contains("| choice side |"), "{root}");
}

#[test]
fn when_three_versions_cannot_tell_the_merge_stops_on_root_md_for_mem_compile() {
    let env = bounded_repo();
    let work = env.work();
    // Each branch forgets a memory ROOT.md shows: the merged table needs
    // a row that neither branch shows.
    ok(&env, &work, &["branch", "side"]);
    ok(&env, &work, &["checkout", "-q", "side"]);
    env.mem(["forget", "facts/note-1"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "side forgets one"]);
    ok(&env, &work, &["checkout", "-q", "main"]);
    env.mem(["forget", "facts/note-0"]).assert().success();
    ok(&env, &work, &["add", "-A"]);
    ok(&env, &work, &["commit", "-q", "-m", "main forgets one"]);
    let out = git(&env, &work, &["merge", "-q", "--no-edit", "side"]);
    assert!(!out.status.success(), "a merge that cannot be told went through");
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("the generated tables cannot be told from the three versions"), "{said}");
    assert!(said.contains("run `mem compile`, then `git add .memory/ROOT.md`"), "{said}");
    // The indexes merged; ROOT.md waits for one compile.
    env.mem(["compile"]).assert().success();
    ok(&env, &work, &["add", ".memory/ROOT.md"]);
    ok(&env, &work, &["commit", "-q", "--no-edit"]);
    fresh_and_clean(&env, &work);
    assert!(env.read("ROOT.md").contains("<!-- mem:more total=258 "));
}
