//! What an agent host hands `mem consolidate --hook` on standard input: its
//! end-of-turn hook's JSON (Claude Code's `Stop`: `session_id`,
//! `transcript_path`, `stop_hook_active`, `cwd`; the OpenCode plugin sends
//! the same keys, with the recent `messages` inline instead of a file).

use std::path::PathBuf;

use serde_json::Value;

use crate::base::error::{Error, Result};

/// An end-of-turn hook's input.
#[derive(Debug, Default)]
pub struct StopInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    /// The host is already continuing because of a stop hook.
    pub stop_hook_active: bool,
    /// The folder the agent works in.
    pub cwd: Option<PathBuf>,
    /// Recent messages handed over inline (`[{"role", "text"}]`).
    pub messages: Option<Value>,
}

/// Parse the hook's JSON text.
pub fn parse(text: &str) -> Result<StopInput> {
    let v = serde_json::from_str::<Value>(text).ok().filter(Value::is_object).ok_or_else(|| {
        Error::input("--hook expects the agent host's end-of-turn hook JSON on stdin").hint(
            "e.g. {\"session_id\": \"…\", \"transcript_path\": \"…\", \"stop_hook_active\": false}",
        )
    })?;
    let field =
        |key: &str| v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    Ok(StopInput {
        session_id: field("session_id").map(str::to_string),
        transcript_path: field("transcript_path").map(PathBuf::from),
        stop_hook_active: v.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        cwd: field("cwd").map(PathBuf::from),
        messages: v.get("messages").cloned(),
    })
}

/// Read and parse standard input, at most 16 MiB.
pub fn read() -> Result<StopInput> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(Error::input(
            "--hook reads the agent host's end-of-turn hook JSON from stdin, not a terminal",
        )
        .hint("run `mem consolidate` by hand without --hook to see its setting"));
    }
    let bytes = crate::base::stdin::read_hook_stdin()?;
    parse(&String::from_utf8_lossy(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_hooks_json() {
        let hook = parse(r#"{"session_id":"s1","transcript_path":"/t/s1.jsonl","stop_hook_active":true,"cwd":"/w","hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(hook.session_id.as_deref(), Some("s1"));
        assert_eq!(hook.transcript_path, Some(PathBuf::from("/t/s1.jsonl")));
        assert!(hook.stop_hook_active && hook.messages.is_none());
        assert!(!parse(r#"{"stop_hook_active":"yes"}"#).unwrap().stop_hook_active);
        assert!(parse("plain text").is_err() && parse("[1]").is_err());
    }
}
