//! What an agent host hands `mem context` on standard input: a hook's JSON
//! (`prompt`, `session_id`, `source`, `cwd`, as Claude Code and others send
//! it) or, for `--query -`, plain text.

use std::path::PathBuf;

use crate::base::error::{Error, Result};
use crate::store::session::Source;

/// The most of a prompt that is used to look for matches.
const MAX_QUERY_CHARS: usize = 4096;

/// A hook's input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HookInput {
    /// The user's prompt (or the plain text given).
    pub prompt: Option<String>,
    pub session_id: Option<String>,
    pub source: Option<Source>,
    /// The folder the agent works in.
    pub cwd: Option<PathBuf>,
}

/// Parse standard input's text: a JSON object with the hook's fields, or,
/// when `text_ok`, plain text taken as the prompt.
pub fn parse(text: &str, text_ok: bool) -> Result<HookInput> {
    let looks_json = text.trim_start().starts_with('{');
    let json = serde_json::from_str::<serde_json::Value>(text).ok().filter(|v| v.is_object());
    if looks_json && json.is_none() {
        // Never taken for a prompt: its session id and folder would be lost.
        return Err(Error::input("the hook's JSON on stdin does not parse").hint(
            "an agent host sends one JSON object, e.g. {\"session_id\": \"…\", \"prompt\": \"…\"}",
        ));
    }
    let Some(v) = json else {
        if text_ok {
            let prompt = text.trim().chars().take(MAX_QUERY_CHARS).collect();
            return Ok(HookInput { prompt: Some(prompt), ..HookInput::default() });
        }
        return Err(Error::input("--hook expects the agent host's hook JSON on stdin").hint(
            "e.g. {\"session_id\": \"…\", \"source\": \"startup\"}; drop --hook to run it by hand",
        ));
    };
    let field =
        |key: &str| v.get(key).and_then(|x| x.as_str()).map(str::trim).filter(|s| !s.is_empty());
    Ok(HookInput {
        prompt: field("prompt").map(|p| p.chars().take(MAX_QUERY_CHARS).collect()),
        session_id: field("session_id").map(str::to_string),
        source: field("source").map(Source::parse),
        cwd: field("cwd").map(PathBuf::from),
    })
}

/// Read and parse standard input (see [`parse`]).
pub fn read(text_ok: bool) -> Result<HookInput> {
    if !text_ok && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(Error::input(
            "--hook reads the agent host's hook JSON from stdin, not a terminal",
        )
        .hint("run `mem context` by hand without --hook"));
    }
    let bytes = crate::base::stdin::read_hook_stdin()?;
    let text = String::from_utf8(bytes).map_err(|_| Error::input("stdin is not valid UTF-8"))?;
    parse(&text, text_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_json_and_plain_text() {
        let hook = parse(
            r#"{"session_id":"s1","prompt":" fix the deploy ","cwd":"/w","hook_event_name":"UserPromptSubmit"}"#,
            true,
        )
        .unwrap();
        assert_eq!(hook.prompt.as_deref(), Some("fix the deploy"));
        assert_eq!(hook.session_id.as_deref(), Some("s1"));
        assert_eq!(hook.cwd, Some(PathBuf::from("/w")));
        let start = parse(r#"{"session_id":"s1","source":"compact"}"#, false).unwrap();
        assert_eq!(start.source, Some(Source::Compact));
        assert_eq!(parse("timezone bug\n", true).unwrap().prompt.as_deref(), Some("timezone bug"));
        assert!(parse("timezone bug", false).is_err());
        // A JSON string or number is text, not a hook.
        assert_eq!(parse("42", true).unwrap().prompt.as_deref(), Some("42"));
    }
}
