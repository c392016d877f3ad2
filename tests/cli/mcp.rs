//! `mem mcp` driven by a real MCP client: the official Python SDK runs
//! `tests/mcp/client.py` against the binary in a copy of the demo project.

use std::path::Path;
use std::process::Command;

use crate::env::{Env, NOW};

#[test]
fn an_mcp_client_recalls_remembers_inspects_and_forgets() {
    if !crate::tools::python_mcp() {
        return;
    }
    let env = Env::with_fixture("demo");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("mem"))
        .arg(env.work())
        .env_clear()
        .env("HOME", env.tmp.path().join("home"))
        .env("MEM_GLOBAL_DIR", env.global())
        .env("MEM_NOW", NOW.to_string())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client.py failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(stdout.contains("ok: mem mcp passed"), "{stdout}");
}

#[test]
fn stdout_carries_only_json_rpc() {
    let env = Env::with_fixture("demo");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let input = format!(
        "{init}\n{}\nthis is not json\n{}\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
    );
    let out = env.mem(["mcp"]).env("MEM_LOG", "debug").write_stdin(input).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<i64> = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect(line))
        .map(|v| v["id"].as_i64().expect("a response"))
        .collect();
    assert_eq!(ids, [1, 2], "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("this is not json"), "the ignored line is not logged: {stderr}");
}
