//! `mem mcp` driven by a real MCP client: the official Python SDK runs
//! `tests/mcp/client.py` against the binary in a copy of the demo project.

use std::path::Path;
use std::process::Command;

use crate::env::{Env, NOW};
use crate::rpc;

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
    let [init, ready] = rpc::handshake("t");
    let input = format!("{init}\n{ready}\nthis is not json\n{}\n", rpc::request(2, "tools/list"));
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

#[test]
fn a_request_line_over_16_mib_gets_an_error_and_the_server_goes_on() {
    let env = Env::with_fixture("demo");
    let [init, ready] = rpc::handshake("t");
    let big = "x".repeat(17 << 20);
    // The id after the huge params, as a client may order its keys.
    let with_id = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"memory_recall","arguments":{{"query":"{big}"}}}},"id":"big-2"}}"#
    );
    let (list, ping) = (rpc::request(3, "tools/list"), rpc::request(4, "ping"));
    let input = format!("{init}\n{ready}\n{with_id}\n{list}\n{big}\n{ping}\n");
    let out = env
        .mem(["mcp"])
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let replies: Vec<serde_json::Value> =
        stdout.lines().map(|line| serde_json::from_str(line).expect(line)).collect();
    let ids: Vec<&serde_json::Value> = replies.iter().map(|v| &v["id"]).collect();
    assert_eq!(ids.len(), 5, "{ids:?}");
    let big_reply =
        replies.iter().find(|v| v["id"] == "big-2").expect("no reply to the big request");
    let message = big_reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("16 MiB"), "{big_reply}");
    assert_eq!(big_reply["error"]["code"], -32600);
    // A line with no id to read: an error all the same, for id null.
    let null = replies.iter().find(|v| v.get("id") == Some(&serde_json::Value::Null));
    let null = null.expect("no reply with \"id\": null for the line with no id");
    assert_eq!(null["error"]["code"], -32600, "{null}");
    // And the requests after each are served.
    let tools = replies.iter().find(|v| v["id"] == 3).expect("tools/list after it");
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    assert!(replies.iter().any(|v| v["id"] == 4 && v["result"].is_object()), "{stdout}");
}
