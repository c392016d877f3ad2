//! What a client says to `mem mcp`, for tests that write a whole session
//! to its stdin: the handshake, then requests, one JSON-RPC message a line.

use serde_json::{Value, json};

/// `initialize` (id 1) from a client called `client`, and the
/// notification that it is ready.
pub fn handshake(client: &str) -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client, "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// A `tools/call` of `tool` with `arguments`.
pub fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// A request without parameters, such as `tools/list` or `ping`.
pub fn request(id: u64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method})
}

/// The handshake, then `messages`: the whole input of a session.
pub fn session(messages: impl IntoIterator<Item = Value>) -> String {
    handshake("t").into_iter().chain(messages).map(|m| format!("{m}\n")).collect()
}

/// The handshake, then a `tools/call` of each `(tool, arguments)`, ids 2 on.
pub fn calls(tools: &[(&str, Value)]) -> String {
    session(tools.iter().zip(2..).map(|((tool, args), id)| call(id, tool, args.clone())))
}

/// Each line the server wrote, parsed (a line that is not JSON fails).
pub fn replies(stdout: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(stdout);
    text.lines().map(|line| serde_json::from_str(line).expect(line)).collect()
}

/// The reply to request `id`.
pub fn reply(replies: &[Value], id: u64) -> &Value {
    replies.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no reply {id}: {replies:?}"))
}
