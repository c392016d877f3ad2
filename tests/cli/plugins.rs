//! The agent-host integrations, run as the hosts run them: the OpenCode
//! plugin's hooks under node, the Claude Code plugin's hook commands and MCP
//! server exactly as its manifest declares them, and both real hosts end to
//! end (`tests/hosts/e2e.py`). `.ci/run` installs what they need; without
//! it they are skipped and say what to install (see `tools`).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::env::{Env, path_with_mem};
use crate::tools::npm_packages;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_opencode_plugin_typechecks_and_its_hooks_work_under_node() {
    let dir = repo().join("integrations/opencode");
    if !npm_packages(&dir, "ci", "the OpenCode plugin's toolchain") {
        return;
    }
    let tsc = Command::new("node")
        .arg(dir.join("node_modules/typescript/bin/tsc"))
        .args(["-p", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(tsc.status.success(), "tsc: {}", String::from_utf8_lossy(&tsc.stdout));
    let out = Command::new("node")
        .args(["--test", "test/"])
        .current_dir(&dir)
        .env("MEM_BIN", assert_cmd::cargo::cargo_bin("mem"))
        .env("MEM_FIXTURE", repo().join("fixtures/demo"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# pass 8") && stdout.contains("# fail 0"), "{stdout}");
}

/// Each hook command of the Claude Code plugin, run through the shell
/// exactly as the manifest declares it, with the JSON Claude Code sends.
#[test]
fn the_claude_code_plugin_hooks_run_as_declared() {
    let env = Env::with_fixture("demo");
    env.mem(["trust", "--yes"]).assert().success();
    let plugin = repo().join("integrations/claude-code");
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(plugin.join(".claude-plugin/plugin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["name"], "mem");
    let hooks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap())
            .unwrap();
    let work = env.work().display().to_string();
    let event = |name: &str, extra: serde_json::Value| {
        let mut v = serde_json::json!({
            "session_id": "0f3c2a", "transcript_path": "/tmp/t.jsonl", "cwd": work,
            "hook_event_name": name,
        });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    let run = |command: &str, input: String| {
        let mut child = Command::new("sh")
            .args(["-c", command])
            .current_dir(env.work())
            .env_clear()
            .env("PATH", path_with_mem())
            .env("HOME", env.tmp.path().join("home"))
            .env("MEM_GLOBAL_DIR", env.global())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let mut ran = Vec::new();
    for (name, groups) in hooks["hooks"].as_object().unwrap() {
        for group in groups.as_array().unwrap() {
            for hook in group["hooks"].as_array().unwrap() {
                let command = hook["command"].as_str().unwrap();
                match name.as_str() {
                    "SessionStart" => {
                        let matcher = group["matcher"].as_str().unwrap();
                        for source in ["startup", "resume", "clear", "compact"] {
                            assert!(matcher.split('|').any(|m| m == source), "{matcher}: {source}");
                            let out =
                                run(command, event(name, serde_json::json!({"source": source})));
                            assert!(out.contains("部署脚本用 pnpm"), "{source}: {out}");
                        }
                    }
                    "UserPromptSubmit" => {
                        let input =
                            serde_json::json!({"prompt": "where does the staging cluster run?"});
                        let out = run(command, event(name, input));
                        assert!(out.contains("facts/staging-cluster.md"), "{out}");
                        // The same prompt again in that session: not repeated.
                        let again = run(
                            command,
                            event(
                                name,
                                serde_json::json!({"prompt": "where does the staging cluster run?"}),
                            ),
                        );
                        assert!(!again.contains("facts/staging-cluster.md"), "{again}");
                    }
                    "Stop" => {
                        // Consolidation is off until turned on: nothing, whatever the turn.
                        for _ in 0..3 {
                            let input = serde_json::json!({"stop_hook_active": false});
                            assert_eq!(run(command, event(name, input)), "");
                        }
                    }
                    other => panic!("a hook for {other} the test does not know"),
                }
                ran.push(name.clone());
            }
        }
    }
    assert_eq!(ran, ["SessionStart", "UserPromptSubmit", "Stop"]);
}

#[test]
fn the_claude_code_plugin_mcp_server_starts_as_declared() {
    let env = Env::with_fixture("demo");
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("integrations/claude-code/.mcp.json")).unwrap(),
    )
    .unwrap();
    let server = &config["mcpServers"]["mem"];
    let args: Vec<&str> =
        server["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let [init, ready] = crate::rpc::handshake("claude-code");
    let input = format!("{init}\n{ready}\n{}\n", crate::rpc::request(2, "tools/list"));
    let mut child = Command::new(server["command"].as_str().unwrap())
        .args(&args)
        .current_dir(env.work())
        .env("PATH", path_with_mem())
        .env("HOME", env.tmp.path().join("home"))
        .env("MEM_GLOBAL_DIR", env.global())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("\"memory_context\"") && stdout.contains("\"memory_recall\""),
        "{stdout}"
    );
}

#[test]
fn the_real_agent_hosts_get_the_memory_end_to_end() {
    let hosts =
        npm_packages(&repo().join("tests/hosts"), "install", "the agent hosts (claude, opencode)");
    if !hosts {
        return;
    }
    let out = Command::new("python3")
        .arg(repo().join("tests/hosts/e2e.py"))
        .arg(assert_cmd::cargo::cargo_bin("mem"))
        .arg(repo())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "e2e.py failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: the agent hosts passed"), "{stdout}");
}
