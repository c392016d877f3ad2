//! `mem setup <host>` writes the host's own files once, merging into what is
//! there and never over what mem did not write; `mem doctor` names each
//! broken state with its fix and says nothing on a healthy project. (The
//! real hosts are driven after `mem setup` in `tests/hosts/e2e.py`.)

use std::fs;
use std::path::Path;

use predicates::str::contains;
use serde_json::{Value, json};

use crate::env::{Env, path_with_mem};

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with(".cache") {
                stack.push(p);
            } else if p.is_file() {
                out.push((p.display().to_string(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn claude_code_gets_hooks_and_the_mcp_server_once() {
    let env = Env::with_project();
    // The person's own settings: kept.
    let settings = env.work().join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = json!({
        "model": "opus",
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}]}
    });
    fs::write(&settings, serde_json::to_string_pretty(&theirs).unwrap()).unwrap();
    // --dry-run: a diff, no write.
    let before = snapshot(&env.work());
    env.mem(["setup", "claude-code", "--dry-run"])
        .assert()
        .success()
        .stdout(contains("would update"))
        .stdout(contains("+            \"command\": \"mem context --hook\","));
    assert_eq!(snapshot(&env.work()), before);
    let out = env.json(["setup", "claude-code"]);
    let actions: Vec<&str> =
        out["files"].as_array().unwrap().iter().map(|f| f["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["updated", "created"]);
    let written = json_file(&settings);
    assert_eq!(written["model"], "opus");
    let start = written["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(start[0]["hooks"][0]["command"], "echo hello");
    assert_eq!(start[1]["hooks"][0]["command"], "mem context --hook");
    assert_eq!(start[1]["matcher"], "startup|resume|clear|compact");
    assert_eq!(
        written["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        "mem context --query -"
    );
    let mcp = json_file(&env.work().join(".mcp.json"));
    assert_eq!(mcp["mcpServers"]["mem"], json!({"command": "mem", "args": ["mcp"]}));
    // A second run changes no byte.
    let after = snapshot(&env.work());
    let again = env.json(["setup", "claude-code"]);
    assert!(again["files"].as_array().unwrap().iter().all(|f| f["action"] == "unchanged"));
    assert_eq!(snapshot(&env.work()), after);
}

#[test]
fn another_entry_of_the_same_name_is_kept_and_bad_json_is_refused() {
    let env = Env::with_project();
    let mcp = env.work().join(".mcp.json");
    let theirs =
        "{\"mcpServers\": {\"mem\": {\"command\": \"/opt/mem/bin/mem\", \"args\": [\"mcp\"]}}}";
    fs::write(&mcp, theirs).unwrap();
    env.mem(["setup", "claude-code"])
        .assert()
        .success()
        .stdout(contains("already has another `mcpServers.mem`; left as it is"));
    assert_eq!(fs::read_to_string(&mcp).unwrap(), theirs);
    fs::write(env.work().join(".claude/settings.json"), "{ \"hooks\": [ oops").unwrap();
    env.mem(["setup", "claude-code"])
        .assert()
        .code(2)
        .stderr(contains(".claude/settings.json:1: not JSON mem can merge into"));
}

#[cfg(unix)]
#[test]
fn a_linked_host_folder_is_refused_and_nothing_lands_outside() {
    let env = Env::with_project();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, env.work().join(".claude")).unwrap();
    env.mem(["setup", "claude-code"]).assert().code(2).stderr(contains("symlink"));
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn opencode_gets_its_plugin_and_mcp_server_and_a_foreign_plugin_is_left_alone() {
    let env = Env::with_project();
    let config = env.work().join("opencode.json");
    fs::write(&config, "{\"model\": \"anthropic/claude\"}").unwrap();
    env.mem(["setup", "opencode"]).assert().success();
    let plugin = fs::read_to_string(env.work().join(".opencode/plugins/mem.ts")).unwrap();
    assert!(plugin.starts_with("// Written by `mem setup opencode`"));
    let shipped = include_str!("../../integrations/opencode/src/index.ts");
    assert!(plugin.ends_with(shipped), "the plugin is the one in integrations/opencode");
    let written = json_file(&config);
    assert_eq!(written["model"], "anthropic/claude");
    assert_eq!(written["mcp"]["mem"]["command"], json!(["mem", "mcp"]));
    let after = snapshot(&env.work());
    env.mem(["setup", "opencode"]).assert().success();
    assert_eq!(snapshot(&env.work()), after);
    // A plugin file mem did not write is never replaced.
    fs::write(env.work().join(".opencode/plugins/mem.ts"), "export const Mine = 1\n").unwrap();
    env.mem(["setup", "opencode"])
        .assert()
        .code(2)
        .stderr(contains("mem.ts exists and was not written by mem"));
    assert_eq!(
        fs::read_to_string(env.work().join(".opencode/plugins/mem.ts")).unwrap(),
        "export const Mine = 1\n"
    );
}

#[test]
fn codex_and_cursor_get_the_exported_rules_and_the_user_level_mcp_server() {
    let env = Env::with_fixture("demo");
    env.mem(["setup", "codex"])
        .assert()
        .code(2)
        .stderr(contains("not trusted"))
        .stderr(contains("mem trust"));
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["setup", "codex"]).assert().success().stdout(contains("AGENTS.md"));
    assert!(fs::read_to_string(env.work().join("AGENTS.md")).unwrap().contains("部署脚本用 pnpm"));
    env.mem(["export", "--format", "agents-md", "--check"]).assert().success();
    env.mem(["setup", "cursor"]).assert().success();
    assert!(env.work().join(".cursor/rules/mem-plan.mdc").is_file());
    assert_eq!(
        json_file(&env.work().join(".cursor/mcp.json"))["mcpServers"]["mem"]["args"],
        json!(["mcp"])
    );
    // --global: the user's own files, in HOME.
    let home = env.tmp.path().join("home");
    fs::create_dir_all(home.join(".codex")).unwrap();
    fs::write(home.join(".codex/config.toml"), "model = \"o3\"\n").unwrap();
    env.mem(["--global", "setup", "codex"]).assert().success();
    env.mem(["--global", "setup", "codex"]).assert().success();
    assert_eq!(
        fs::read_to_string(home.join(".codex/config.toml")).unwrap(),
        "model = \"o3\"\n\n[mcp_servers.mem]\ncommand = \"mem\"\nargs = [\"mcp\"]\n"
    );
    env.mem(["--global", "setup", "claude-code"]).assert().success();
    assert!(home.join(".claude/settings.json").is_file());
    assert!(!env.work().join(".claude").exists());
}

/// `mem doctor` in the work folder, with `mem` on PATH (or not).
fn doctor(env: &Env, with_mem: bool) -> (i32, String) {
    let mut cmd = env.process(["doctor"]);
    let path = if with_mem { path_with_mem() } else { "/usr/bin:/bin".into() };
    cmd.env("PATH", path);
    let out = cmd.output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

fn git(env: &Env, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(env.work())
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .env("HOME", env.tmp.path().join("home"))
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn doctor_names_each_broken_state_and_is_silent_when_all_is_well() {
    let env = Env::with_fixture("demo");
    git(&env, &["init", "-q"]);
    env.mem(["hook", "install"]).assert().success();
    env.mem(["trust", "--yes"]).assert().success();
    env.mem(["setup", "codex"]).assert().success();
    let (code, out) = doctor(&env, true);
    assert_eq!((code, out.as_str()), (0, ""), "a healthy project");
    let out = env.process(["doctor", "--json"]).env("PATH", path_with_mem()).output().unwrap();
    assert!(out.status.success());
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap()["findings"], json!([]));

    // mem not on the PATH the hooks run with.
    let (code, out) = doctor(&env, false);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "binary: the hooks, the plugin and the MCP server run `mem`, which is not on PATH"
        ),
        "{out}"
    );

    // A memory edited by hand after trust: held back, named.
    let rule = env.project().join("rules/deploy-pnpm.md");
    let text = fs::read_to_string(&rule).unwrap();
    fs::write(&rule, text.replace("npm", "yarn")).unwrap();
    let (code, out) = doctor(&env, true);
    assert_eq!(code, 1);
    assert!(out.contains("trust: 1 project file(s) changed outside mem are held back from agents: rules/deploy-pnpm.md"), "{out}");
    assert!(out.contains("fix: mem trust"), "{out}");
    fs::write(&rule, &text).unwrap();

    // AGENTS.md no longer what the memories say.
    env.mem(["remember", "rules/no-friday", "Never deploy on a Friday afternoon."])
        .assert()
        .success();
    let (_, out) = doctor(&env, true);
    assert!(out.contains("export: AGENTS.md no longer say(s) what the memories say"), "{out}");
    assert!(out.contains("fix: mem export --format agents-md"), "{out}");
    env.mem(["export", "--format", "agents-md"]).assert().success();

    // The hook gone.
    fs::remove_file(env.work().join(".git/hooks/pre-commit")).unwrap();
    let (code, out) = doctor(&env, true);
    assert_eq!(code, 1);
    assert!(out.contains("hook: no pre-commit hook"), "{out}");
    env.mem(["hook", "install"]).assert().success();
    assert_eq!(doctor(&env, true), (0, String::new()));
}

#[test]
fn doctor_on_a_new_project_says_what_is_left_to_do() {
    let env = Env::with_project();
    let (code, out) = doctor(&env, true);
    assert_eq!(code, 1);
    assert!(out.contains("plan: ROOT.md still holds only the template"), "{out}");
    fs::write(env.project().join("decisions/.orm.draft.md"), "---\nkind: [\n---\n").unwrap();
    let (_, out) = doctor(&env, true);
    assert!(out.contains("draft: an edit of decisions/orm.md could not be saved"), "{out}");
}
