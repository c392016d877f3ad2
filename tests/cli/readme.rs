//! The README stays true: its first commands, its config snippets (they
//! parse, and the commands in them run), and every `mem` verb it shows.

use std::path::Path;

use crate::env::Env;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The pages whose commands must run as written, in the order they are
/// run: the README, then the documents it links to.
const DOCS: [&str; 7] = [
    "docs/commands.md",
    "docs/git.md",
    "docs/agents.md",
    "docs/files.md",
    "docs/security.md",
    "docs/ranking.md",
    "docs/semantic.md",
];

/// A documented line, run by the shell as written (pipes, redirections and
/// comments included) in the work folder, with `mem` on `path` and nothing
/// else from the environment but the test's home and global root.
fn shell(env: &Env, line: &str, path: &std::ffi::OsStr) -> std::process::Command {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(line)
        .current_dir(env.work())
        .env_clear()
        .env("PATH", path)
        .env("HOME", env.tmp.path().join("home"))
        .env("MEM_GLOBAL_DIR", env.global());
    cmd
}

/// The README and `docs/`, one after the other.
fn documents() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = readme();
    for doc in DOCS {
        all.push('\n');
        all.push_str(&std::fs::read_to_string(root.join(doc)).unwrap());
    }
    all
}

#[test]
fn the_readme_is_a_front_door() {
    let text = readme();
    assert!(text.len() < 15 * 1024, "the README is {} bytes", text.len());
    for section in ["## Install", "## Quickstart", "## Connect an agent", "## How it compares"] {
        assert!(text.contains(section), "{section}");
    }
    assert!(text.contains("cargo install --locked --path ."));
    // Every document it links to is there.
    for link in text.split("](").skip(1).filter_map(|l| l.split(')').next()) {
        if !link.starts_with("http") && !link.starts_with('#') {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(link.split('#').next().unwrap());
            assert!(path.is_file(), "a link to {link}");
        }
    }
}

/// Fenced code blocks: (language, text).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(lang)) => current = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.extend(current.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

#[test]
fn opens_with_a_demo_command_and_the_test_command() {
    let all = blocks(&readme());
    let (lang, first) = &all[0];
    assert_eq!(lang, "sh");
    let lines: Vec<&str> = first.lines().collect();
    assert!(
        lines[0].starts_with("cargo run --release -- --project fixtures/demo recall"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("cargo test --locked"), "{}", lines[1]);
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(ci.contains("cargo test --locked"), ".ci/run runs the README's test command");
}

#[test]
fn the_demo_command_works() {
    let env = Env::with_fixture("demo");
    let first = &blocks(&readme())[0].1;
    let args: Vec<&str> =
        first.lines().next().unwrap().split('#').next().unwrap().split_whitespace().collect();
    let mem_args = &args[args.iter().position(|a| *a == "--").unwrap() + 1..];
    let mem_args: Vec<String> =
        mem_args
            .iter()
            .map(|a| {
                if *a == "fixtures/demo" { env.work().display().to_string() } else { a.to_string() }
            })
            .collect();
    let text = env.stdout(&mem_args);
    assert!(text.contains("rules/deploy-pnpm.md"), "{text}");
}

#[test]
fn every_json_snippet_parses_and_its_commands_run() {
    let env = Env::with_fixture("demo");
    let mut commands = Vec::new();
    let mut json_blocks = 0;
    for (lang, body) in blocks(&documents()) {
        if lang != "json" {
            continue;
        }
        json_blocks += 1;
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}\n{body}"));
        collect_commands(&v, &mut commands);
    }
    assert!(json_blocks >= 4);
    assert!(commands.len() >= 5, "{commands:?}");
    for command in commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        assert_eq!(args[0], "mem", "{args:?}");
        if args[1] == "mcp" {
            env.mem(["mcp", "--help"]).assert().success();
        }
    }
    // Each hook gets what Claude Code sends it, in the order a session runs.
    let settings = blocks(&documents())
        .into_iter()
        .find(|(lang, body)| lang == "json" && body.contains("SessionStart"))
        .map(|(_, body)| serde_json::from_str::<serde_json::Value>(&body).unwrap())
        .expect("the Claude Code hooks are in docs/agents.md");
    let hook = |event: &str| -> Vec<String> {
        let mut argv = Vec::new();
        collect_commands(&settings["hooks"][event], &mut argv);
        argv.into_iter().next().unwrap_or_else(|| panic!("no {event} hook"))
    };
    let run = |argv: &[String], stdin: serde_json::Value| {
        let out = env
            .mem(&argv[1..])
            .env("MEM_TRUST_ALL", "1")
            .write_stdin(stdin.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{argv:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let cwd = env.work().display().to_string();
    let start = run(
        &hook("SessionStart"),
        serde_json::json!({"session_id": "s", "source": "startup", "cwd": cwd, "hook_event_name": "SessionStart"}),
    );
    assert!(start.starts_with("# Memory") && start.contains("rules/deploy-pnpm.md"), "{start}");
    let prompt = serde_json::json!({"session_id": "s", "prompt": "how do we roll back a bad deploy?", "cwd": cwd, "hook_event_name": "UserPromptSubmit"});
    let first = run(&hook("UserPromptSubmit"), prompt.clone());
    assert!(!first.contains("# Memory") && !first.contains("rules/deploy-pnpm.md"), "{first}");
    assert!(first.contains("references/deploy-runbook.md"), "{first}");
    let again = run(&hook("UserPromptSubmit"), prompt);
    assert!(!again.contains("references/deploy-runbook.md"), "no repeats: {again}");
    // The end-of-turn hook: nothing while consolidation is off (the default).
    let stop = serde_json::json!({"session_id": "s", "transcript_path": "/nonexistent.jsonl", "stop_hook_active": false, "cwd": cwd, "hook_event_name": "Stop"});
    for _ in 0..3 {
        assert_eq!(run(&hook("Stop"), stop.clone()), "");
    }
}

/// Hook `command` strings and MCP `command` + `args` entries, as argv.
fn collect_commands(v: &serde_json::Value, out: &mut Vec<Vec<String>>) {
    match v {
        serde_json::Value::Object(map) => {
            match (map.get("command"), map.get("args")) {
                (Some(serde_json::Value::String(c)), Some(serde_json::Value::Array(a))) => {
                    let mut argv = vec![c.clone()];
                    argv.extend(a.iter().filter_map(|x| x.as_str().map(str::to_string)));
                    out.push(argv);
                }
                (Some(serde_json::Value::String(c)), None) => {
                    out.push(c.split_whitespace().map(str::to_string).collect());
                }
                (Some(serde_json::Value::Array(a)), _) => {
                    out.push(a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect());
                }
                _ => {}
            }
            for value in map.values() {
                collect_commands(value, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_commands(i, out)),
        _ => {}
    }
}

#[test]
fn the_toml_snippet_is_well_formed() {
    let mut seen = 0;
    for (lang, body) in blocks(&documents()) {
        if lang != "toml" {
            continue;
        }
        seen += 1;
        for line in body.lines().filter(|l| !l.trim().is_empty()) {
            if line.starts_with('[') {
                assert!(line.ends_with(']'), "{line}");
                continue;
            }
            let (key, value) =
                line.split_once(" = ").unwrap_or_else(|| panic!("not `key = value`: {line}"));
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{key}");
            serde_json::from_str::<serde_json::Value>(value)
                .unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
    assert_eq!(seen, 1);
}

#[test]
fn every_verb_the_readme_shows_exists() {
    let env = Env::new();
    let mut verbs = std::collections::BTreeSet::new();
    for (lang, body) in blocks(&documents()) {
        if lang != "sh" {
            continue;
        }
        for line in body.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"mem") && words.len() > 1 && !words[1].starts_with('-') {
                verbs.insert(words[1].to_string());
            }
        }
    }
    assert!(verbs.len() >= 10, "{verbs:?}");
    for verb in verbs {
        env.mem([verb.as_str(), "--help"]).assert().success();
    }
}

/// Words of a shell line: spaces split, double quotes group, `#` starts a
/// comment.
pub fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '#' if !quoted => break,
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// The quickstart, as a newcomer runs it: in a new git repository, with a
/// home folder of its own.
#[test]
fn the_quickstart_runs_as_written_on_a_new_project() {
    let env = Env::new();
    let git = std::process::Command::new("git")
        .current_dir(env.work())
        .args(["init", "-q"])
        .output()
        .unwrap();
    assert!(git.status.success());
    let text = readme();
    let quickstart = text.split("## Quickstart").nth(1).expect("a Quickstart section");
    let block = blocks(quickstart).into_iter().next().expect("its block").1;
    assert!(block.starts_with("mem init "), "the quickstart starts with mem init:\n{block}");
    let path = crate::env::path_with_mem();
    let mut ran = 0;
    for line in block.lines().filter(|l| l.starts_with("mem ")) {
        let out = shell(&env, line, &path).output().unwrap();
        assert!(
            out.status.success(),
            "quickstart line failed: {line}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 8, "{ran} commands");
    // What it says it did: the memories are there, an agent gets the rule.
    let recalled = env.stdout(["recall", "how", "do", "we", "deploy", "--no-track"]);
    assert!(recalled.starts_with("rules/deploy-pnpm.md"), "{recalled}");
    assert!(env.work().join(".claude/settings.json").is_file());
    let context = env.stdout(["context"]);
    assert!(context.contains("Deploy scripts use pnpm"), "{context}");
}

#[test]
fn every_mem_line_of_every_block_runs_in_order_on_a_copy_of_the_demo() {
    let env = Env::with_fixture("demo");
    let work = env.work();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&work)
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args(args)
            .env("HOME", env.tmp.path().join("home"))
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the demo"]);
    // The user has reviewed the project's memory and trusts it (`mem trust`
    // asks on a terminal; the tour's exports need it).
    env.mem(["trust", "--yes"]).assert().success();
    // `mem` on PATH, as after `cargo install`; the shell runs each line as
    // written, pipes, redirections and comments included.
    let path = crate::env::path_with_mem();
    let mut ran = 0;
    for (lang, body) in blocks(&documents()) {
        if lang != "sh" {
            continue;
        }
        for line in body.lines() {
            let words = shell_words(line);
            let runs_mem = words.first().is_some_and(|w| w == "mem")
                || words.windows(2).any(|w| (w[0] == "|" || w[0] == "&&") && w[1] == "mem");
            if !runs_mem {
                continue;
            }
            let out = shell(&env, line, &path).env("VISUAL", "true").output().unwrap();
            assert!(
                out.status.success(),
                "README line failed: {line}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 35, "{ran} lines");
}

/// The block that shows `mem edit` recovering from a slip runs as written,
/// each line ending with the exit code its comment names (0 otherwise),
/// and leaves the memory with the text typed before the slip was fixed.
#[test]
fn the_edit_recovery_block_runs_as_written() {
    let env = Env::new();
    let block = blocks(&readme())
        .into_iter()
        .find(|(lang, _)| lang == "sh edit")
        .map(|(_, body)| body)
        .expect("the `sh edit` block");
    let path = crate::env::path_with_mem();
    let mut ran = 0;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let comment = line.split_once(" # ").map(|(_, c)| c).unwrap_or_default();
        let want = comment
            .split_once("exit ")
            .and_then(|(_, rest)| rest.chars().next()?.to_digit(10))
            .map_or(0, |d| d as i32);
        let out = shell(&env, line, &path).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(want),
            "README line: {line}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 5, "{ran} lines");
    let text = env.read("decisions/orm.md");
    assert!(text.contains("Drizzle for the ORM layer in March."), "{text}");
    assert!(!env.project().join("decisions/.orm.draft.md").exists());
}
