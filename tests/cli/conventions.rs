//! The conventions people bring from ripgrep, fd, gh and git: `--color`,
//! `-q`, `-` for stdin, `show`/`search`, a help block for global options,
//! a man page per command, exit 2 for a value that names nothing, and
//! JSON errors that say everything the text says.

use predicates::str::contains;

use crate::env::Env;

const ESC: &str = "\u{1b}[";

fn stdout_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> String {
    let out = env.process(args).envs(vars.iter().copied()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn color_follows_the_flag_then_the_environment() {
    let env = Env::with_fixture("demo");
    let list = ["list"];
    assert!(!stdout_with(&env, &list, &[]).contains(ESC), "a pipe gets no colour");
    assert!(stdout_with(&env, &["--color", "always", "list"], &[]).contains(ESC));
    assert!(stdout_with(&env, &list, &[("CLICOLOR_FORCE", "1")]).contains(ESC));
    assert!(stdout_with(&env, &list, &[("FORCE_COLOR", "1")]).contains(ESC));
    assert!(!stdout_with(&env, &list, &[("FORCE_COLOR", "0")]).contains(ESC));
    let both = [("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")];
    assert!(!stdout_with(&env, &list, &both).contains(ESC), "NO_COLOR wins over auto");
    let never = ["--color", "never", "list"];
    assert!(!stdout_with(&env, &never, &[("CLICOLOR_FORCE", "1")]).contains(ESC));
    assert!(stdout_with(&env, &["--color", "always", "list"], &[("NO_COLOR", "1")]).contains(ESC));
}

#[test]
fn quiet_prints_nothing_on_success_and_keeps_the_exit_code() {
    let env = Env::with_project();
    env.mem(["-q", "remember", "facts/a", "The staging cluster runs in eu-west-1."])
        .assert()
        .success()
        .stdout("");
    env.mem(["remember", "facts/b", "The CI cache lives in S3.", "--quiet"])
        .assert()
        .success()
        .stdout("");
    env.mem(["recall", "-q", "staging", "--no-track"]).assert().success().stdout("");
    env.mem(["recall", "-q", "zebra", "--no-track"]).assert().code(1).stdout("").stderr("");
    // --json is what it is asked for, quiet or not.
    env.mem(["-q", "list", "--json"]).assert().success().stdout(contains("\"memories\""));
    // Errors still say so.
    env.mem(["-q", "inspect", "facts/nope"]).assert().code(2).stderr(contains("facts/nope"));
}

#[test]
fn a_dash_reads_stdin_for_a_query_and_an_export() {
    let env = Env::with_fixture("demo");
    let piped = env
        .mem(["recall", "-", "--no-track", "--json"])
        .write_stdin("staging cluster\n")
        .output()
        .unwrap();
    let given = env.mem(["recall", "staging", "cluster", "--no-track", "--json"]).output().unwrap();
    assert!(piped.status.success());
    assert_eq!(piped.stdout, given.stdout);
    env.mem(["recall", "-"])
        .write_stdin("  \n")
        .assert()
        .code(2)
        .stderr(contains("stdin is empty"));
    let export = env.stdout(["export"]);
    let other = Env::with_project();
    other.mem(["import", "-"]).write_stdin(export).assert().success().stdout(contains("created"));
    assert!(other.project().join("rules/deploy-pnpm.md").is_file());
}

#[test]
fn show_and_search_are_names_of_inspect_and_recall() {
    let env = Env::with_fixture("demo");
    assert_eq!(
        env.stdout(["show", "rules/deploy-pnpm"]),
        env.stdout(["inspect", "rules/deploy-pnpm"])
    );
    assert_eq!(
        env.stdout(["search", "pnpm", "--no-track"]),
        env.stdout(["recall", "pnpm", "--no-track"])
    );
    let help = env.stdout(["--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("[alias: search]") && help.contains("[alias: show]"), "{help}");
}

#[test]
fn global_options_have_their_own_help_block() {
    let env = Env::new();
    let help = env.stdout(["list", "--help"]);
    let (own, global) = help.split_once("Global options:").expect("a Global options block");
    for flag in ["--json", "--project <DIR>", "--color <WHEN>", "--quiet"] {
        assert!(global.contains(flag) && !own.contains(flag), "{flag}\n{help}");
    }
    assert!(own.contains("--sort"), "{help}");
}

#[test]
fn man_prints_a_page_per_command() {
    let env = Env::new();
    let page = env.stdout(["man", "recall"]);
    assert!(page.contains(".TH mem-recall 1"), "{page}");
    assert!(page.contains("\\fBmem recall\\fR"), "{page}");
    assert!(
        env.stdout(["man", "search"]).contains(".TH mem-recall 1"),
        "an alias names the page too"
    );
    assert!(env.stdout(["man"]).contains(".TH mem 1"));
    env.mem(["man", "nope"])
        .assert()
        .code(2)
        .stderr(contains("the commands are: recall, remember"));
}

#[test]
fn a_kind_or_category_that_names_nothing_is_bad_input() {
    let env = Env::with_fixture("demo");
    for cmd in [&["list"][..], &["recall", "pnpm"], &["export"], &["stats"], &["clean"]] {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(["--kind", "nonsense"]);
        env.mem(&args).assert().code(2).stderr(contains("no kind `nonsense`")).stderr(contains(
            "the kinds are: decision, fact, pitfall, preference, reference, rule",
        ));
    }
    env.mem(["list", "--category", "nope"])
        .assert()
        .code(2)
        .stderr(contains("the categories are:"));
    // A kind of the person's own is a kind once a memory has it.
    env.write("facts/howto.md", "---\nkind: howto\n---\nRun the deploy with make ship.\n");
    env.mem(["list", "--kind", "howto"]).assert().success().stdout(contains("facts/howto.md"));
}

#[test]
fn a_usage_error_in_json_carries_the_whole_message() {
    let env = Env::new();
    let error = |args: &[&str]| {
        let out = env.mem(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let e = error(&["--json", "list", "--sort", "bogus"]);
    let message = e["error"].as_str().unwrap();
    assert!(message.contains("'bogus'") && message.contains("--sort"), "{e}");
    assert!(message.contains("possible values: recent, name, hits, recalled"), "{e}");
    assert!(!message.contains("For more information"), "{e}");
    let e = error(&["--json", "remember"]);
    assert!(e["error"].as_str().unwrap().contains("<PATH>"), "{e}");
    let e = error(&["--json", "lsit"]);
    assert!(e["hint"].as_str().unwrap().contains("'list'"), "{e}");
}

#[test]
fn completion_offers_the_memories_and_categories_on_disk() {
    let env = Env::with_fixture("demo");
    let complete = |words: &[&str]| {
        let mut args = vec!["--", "mem"];
        args.extend(words);
        let out = env.process(&args).env("COMPLETE", "fish").output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let out = complete(&["edit", "rules/dep"]);
    assert_eq!(out, "rules/deploy-pnpm\t部署脚本只用 pnpm\n");
    let out = complete(&["forget", "facts/"]);
    assert!(out.lines().count() >= 3 && out.lines().all(|l| l.starts_with("facts/")), "{out}");
    assert!(complete(&["list", "--category", "pit"]).starts_with("pitfalls\n"));
    // A memory made a moment ago completes at once.
    env.mem(["remember", "facts/zz-new", "A fact made just now for completion."])
        .assert()
        .success();
    assert!(complete(&["inspect", "facts/zz"]).starts_with("facts/zz-new\t"));
    // The script registers mem as its own completer, and the shell reads it.
    let script = env.stdout(["completions", "bash"]);
    assert!(script.contains("COMPLETE=\"bash\"") || script.contains("COMPLETE=bash"), "{script}");
    let checked = std::process::Command::new("bash").args(["-n", "-c", &script]).output().unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
}

#[test]
fn a_title_cannot_reach_the_terminal_through_completion() {
    let env = Env::with_project();
    env.write(
        "facts/evil.md",
        "---\ntitle: \"ok\\u001b]0;owned\\u0007\\nsecond line\"\n---\nBody.\n",
    );
    let out =
        env.process(["--", "mem", "show", "facts/ev"]).env("COMPLETE", "fish").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("facts/evil\t"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert_eq!(text.lines().count(), 1, "{text:?}");
}
