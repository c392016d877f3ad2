//! Session provenance: `source_sessions` grows (once per session, in order,
//! nothing else of the file touched) when a memory is written in a session
//! (`--session`, `$MEM_SESSION`, `memory_remember`'s `session_id` or a
//! client's `_meta.sessionID`), and `mem prompt consolidate` lists the
//! recent sessions no memory cites yet.

use serde_json::{Value, json};

use crate::env::Env;
use crate::rpc;

const DAY: i64 = 86_400_000;

/// `mem ARGS` run `days` later; its stdout.
fn stdout_at(env: &Env, args: &[&str], days: i64) -> String {
    let out = env.mem_at(args, days * DAY).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_session_is_cited_once_and_in_order_and_nothing_else_moves() {
    let env = Env::with_project();
    let hand = "---\n# owned by the platform team\ntags: [ops, 'deploy']   \nsummary: \"Deploys go through Argo\"\nkind: fact\nzeta: 1 # kept\n---\n# Deploys\n\nArgo syncs the cluster.\n";
    env.write("facts/deploys.md", hand);
    env.mem(["compile"]).assert().success();
    env.mem(["remember", "facts/deploys", "--session", "ses_a"]).assert().success();
    let once = env.read("facts/deploys.md");
    // Only the new keys (and dates) are added; every other line as written.
    for line in hand.lines().take(6) {
        assert!(once.contains(line), "{line:?} changed:\n{once}");
    }
    assert!(once.contains("source_sessions:\n- ses_a\n"), "{once}");
    assert!(once.ends_with("---\n# Deploys\n\nArgo syncs the cluster.\n"), "{once}");
    // Again in the same session: nothing to change.
    let again = env.json(["remember", "facts/deploys", "--session", "ses_a"]);
    assert_eq!(again["action"], "unchanged");
    // Another session, from the environment: appended after the first.
    let out =
        env.stdout_with(["remember", "facts/deploys", "--tag", "ops"], &[("MEM_SESSION", "ses_b")]);
    assert!(out.contains("updated"), "{out}");
    let text = env.read("facts/deploys.md");
    assert!(text.contains("source_sessions:\n- ses_a\n- ses_b\n"), "{text}");
    let shown = env.json(["inspect", "facts/deploys"]);
    assert_eq!(shown["memory"]["source_sessions"], json!(["ses_a", "ses_b"]));
    // A flow list a person wrote stays a flow list.
    env.write("facts/flow.md", "---\nsource_sessions: [ses_x]\n---\nFlow lists stay flow lists.\n");
    env.mem(["remember", "facts/flow", "--session", "ses_y"]).assert().success();
    assert!(env.read("facts/flow.md").contains("source_sessions: [ses_x, ses_y]\n"));
}

#[test]
fn a_session_id_that_cannot_name_a_session_is_refused() {
    let env = Env::with_project();
    let out = env.mem(["remember", "facts/x", "text", "--session", "a b/c"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--session `a b/c` is not a session id"), "{err}");
    assert!(err.contains("letters, digits"), "{err}");
    let out = env
        .mem(["remember", "facts/x", "text"])
        .env("MEM_SESSION", "x".repeat(200))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MEM_SESSION"));
    assert!(!env.project().join("facts/x.md").exists(), "nothing written");
    // A relevance is written as one of its three words.
    env.mem(["remember", "facts/y", "Widgets ship on Mondays.", "--relevance", "high"])
        .assert()
        .success();
    assert!(env.read("facts/y.md").contains("\nrelevance: high\n"));
}

/// `mem mcp` answering `calls` (tools/call params) after the handshake; the
/// replies to them, in order.
fn mcp(env: &Env, calls: &[Value]) -> Vec<Value> {
    let input = rpc::session(calls.iter().zip(2..).map(|(params, id)| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    }));
    let out = env.mem(["mcp"]).write_stdin(input).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let replies = rpc::replies(&out.stdout);
    (2..2 + calls.len() as u64).map(|id| rpc::reply(&replies, id).clone()).collect()
}

#[test]
fn memory_remember_cites_the_session_a_client_passes() {
    let env = Env::with_project();
    let replies = mcp(
        &env,
        &[
            json!({"name": "memory_remember", "arguments": {"path": "facts/mcp", "body": "Widgets are packed in Lyon.", "session_id": "ses_tool", "relevance": "high"}}),
            json!({"name": "memory_remember", "arguments": {"path": "facts/mcp", "summary": "Packed in Lyon"}, "_meta": {"sessionID": "ses_meta"}}),
            json!({"name": "memory_remember", "arguments": {"path": "facts/mcp", "relevance": "urgent"}}),
        ],
    );
    assert_eq!(replies[0]["result"]["isError"], false, "{}", replies[0]);
    assert_eq!(replies[1]["result"]["isError"], false, "{}", replies[1]);
    let text = env.read("facts/mcp.md");
    assert!(text.contains("relevance: high\n"), "{text}");
    assert!(text.contains("source_sessions:\n- ses_tool\n- ses_meta\n"), "{text}");
    assert_eq!(replies[2]["result"]["isError"], true, "{}", replies[2]);
    let said = replies[2]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("high, medium or low"), "{said}");
}

#[test]
fn consolidation_lists_the_recent_sessions_no_memory_cites() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "Widgets ship from Lyon."]).assert().success();
    for (session, day) in [("ses_old", 0), ("ses_one", 1), ("ses_two", 2)] {
        let start = json!({"session_id": session, "source": "startup"}).to_string();
        env.mem_at(["context", "--hook"], day * DAY).write_stdin(start).assert().success();
    }
    let uncited = |days: i64| -> Vec<String> {
        let out = env.mem_at(["prompt", "consolidate", "--json"], days * DAY).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["uncited_sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(uncited(3), ["ses_two", "ses_one", "ses_old"], "most recent first");
    // A memory written in a session covers it.
    env.mem_at(["remember", "facts/b", "Widgets are blue.", "--session", "ses_one"], 3 * DAY)
        .assert()
        .success();
    assert_eq!(uncited(3), ["ses_two", "ses_old"]);
    let prompt = stdout_at(&env, &["prompt", "consolidate"], 3);
    assert!(prompt.contains("## Sessions no memory cites yet"), "{prompt}");
    assert!(prompt.contains("- `ses_two` (last seen 1 day ago)"), "{prompt}");
    assert!(prompt.contains("--session <id>"), "{prompt}");
    // Sessions not seen for a week are no longer recent.
    assert_eq!(uncited(8), ["ses_two"]);
    assert!(!stdout_at(&env, &["prompt", "consolidate"], 30).contains("## Sessions no memory"));
}
