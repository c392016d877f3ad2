//! Bad input: one clear line naming the argument or file, exit code 2, and
//! nothing written.

use predicates::str::contains;

use crate::env::Env;

#[test]
fn bad_memory_paths_are_refused() {
    let env = Env::with_project();
    let long = format!("facts/{}", "x".repeat(65));
    for bad in [
        "../escape",
        "facts/../../x",
        "/etc/passwd",
        "facts/.hidden",
        ".trash/x",
        "facts/",
        "facts",
        "Facts/x",
        "facts/a b",
        "facts/sub/x",
        &long,
        "",
    ] {
        env.mem(["remember", bad, "some text"]).assert().code(2).stderr(contains("mem: "));
        env.mem(["forget", bad]).assert().code(2);
        env.mem(["inspect", bad]).assert().code(2);
    }
    let files: Vec<_> = walk(&env.tmp.path().to_path_buf());
    assert!(files.iter().all(|f| !f.ends_with("x.md") && !f.ends_with("escape.md")), "{files:?}");
}

fn walk(dir: &std::path::PathBuf) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path().display().to_string());
        }
    }
    out
}

#[test]
fn messages_name_the_argument_and_the_fix() {
    let env = Env::with_project();
    env.mem(["remember", "facts/../x", "t"])
        .assert()
        .code(2)
        .stderr(contains("`..`"))
        .stderr(contains("hint:"));
    env.mem(["remember", "Bad/x", "t"]).assert().code(2).stderr(contains("invalid category `Bad`"));
}

#[test]
fn missing_things_are_errors_not_panics() {
    let env = Env::with_project();
    env.mem(["forget", "facts/nope"])
        .assert()
        .code(2)
        .stderr(contains("facts/nope.md: no such memory"));
    env.mem(["restore", "facts/nope"]).assert().code(2).stderr(contains("nothing in the trash"));
    env.mem(["inspect", "facts/nope"]).assert().code(2).stderr(contains("no such memory"));
    env.mem(["history", "facts/nope"]).assert().code(2);
    env.mem(["remember", "facts/a", "--supersedes", "facts/nope", "x"])
        .assert()
        .code(2)
        .stderr(contains("--supersedes"));
    assert!(
        !env.project().join("facts/a.md").exists(),
        "nothing written when --supersedes is wrong"
    );
    env.mem(["remember", "facts/a", "x", "--supersedes", "facts/a"])
        .assert()
        .code(2)
        .stderr(contains("itself"));
    env.mem(["remember", "facts/empty"]).assert().code(2).stderr(contains("nothing to remember"));
}

#[test]
fn no_root_gives_a_hint_to_init() {
    let env = Env::new();
    env.mem(["remember", "facts/a", "text"]).assert().code(2).stderr(contains("mem init"));
    env.mem(["--project", "nowhere", "list"])
        .assert()
        .code(2)
        .stderr(contains("ROOT.md is missing"));
    env.mem(["--project-only", "remember", "facts/a", "t"])
        .assert()
        .code(2)
        .stderr(contains("no project"));
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::with_project();
    env.mem(["list", "--sort", "sideways"]).assert().code(2);
    env.mem(["frobnicate"]).assert().code(2);
    env.mem(["remember", "facts/a", "x", "--pin", "--unpin"]).assert().code(2);
    env.mem(["list"]).env("MEM_NOW", "yesterday").assert().code(2).stderr(contains("MEM_NOW"));
}

#[test]
fn non_utf8_stdin_is_refused() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "-"])
        .write_stdin(vec![0xff, 0xfe, 0x00])
        .assert()
        .code(2)
        .stderr(contains("UTF-8"));
}
