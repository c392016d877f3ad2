//! The recent turns of an agent's session, read defensively: from the
//! host's transcript (Claude Code's JSONL, one entry a line) or from the
//! messages a plugin hands over inline (OpenCode). Whatever the file holds
//! — missing, a FIFO, a link, gigabytes, lines that are not JSON, entries of
//! any shape — the read is bounded and never fails: the worst case is no
//! turns. The text is the session's, not the user's instructions to mem:
//! it is quoted to the agent fenced, as data.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// The most of a transcript read: its end.
pub const TAIL_BYTES: u64 = 512 << 10;
/// The most messages quoted.
pub const MAX_TURNS: usize = 12;
/// The most characters of one message quoted.
pub const TURN_CHARS: usize = 800;
/// The most characters quoted in all.
pub const TOTAL_CHARS: usize = 6000;

/// One message of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: &'static str,
    pub text: String,
}

/// The last turns of the transcript at `path`, oldest first; a file that
/// cannot be read gives none, and says why.
pub fn from_file(path: &Path) -> (Vec<Turn>, Option<String>) {
    match tail(path) {
        Ok(text) => (last_turns(text.lines().filter_map(entry)), None),
        Err(why) => (Vec::new(), Some(format!("transcript {}: {why}", path.display()))),
    }
}

/// The last turns of messages handed over inline: `[{"role", "text"}]`.
pub fn from_messages(messages: &Value) -> Vec<Turn> {
    let Some(list) = messages.as_array() else { return Vec::new() };
    let start = list.len().saturating_sub(4 * MAX_TURNS);
    last_turns(list[start..].iter().filter_map(|m| {
        let role = role(m.get("role")?.as_str()?)?;
        let text = m.get("text").map_or_else(|| content(m.get("content")?), text_of);
        Some(Turn { role, text: text? })
    }))
}

/// The end of the file, at most [`TAIL_BYTES`], from its first whole line.
fn tail(path: &Path) -> Result<String, String> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (mut file, size) =
        crate::store::files::open(parent, path, crate::store::files::Links::Inside)
            .map_err(|e| e.to_string())?;
    let start = size.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(match (start, text.find('\n')) {
        (0, _) => text,
        (_, Some(i)) => text[i + 1..].to_string(),
        (_, None) => String::new(),
    })
}

/// One JSONL entry as a turn: a user's prompt or an assistant's text, not
/// tool calls, tool results or the host's own notes.
fn entry(line: &str) -> Option<Turn> {
    let v: Value = serde_json::from_str(line.trim()).ok()?;
    if v.get("isMeta").and_then(Value::as_bool) == Some(true)
        || v.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let message = v.get("message")?;
    let role = role(message.get("role").or(v.get("type"))?.as_str()?)?;
    Some(Turn { role, text: content(message.get("content")?)? })
}

fn role(name: &str) -> Option<&'static str> {
    match name {
        "user" => Some("user"),
        "assistant" => Some("assistant"),
        _ => None,
    }
}

/// A message's text: a string, or the `text` blocks of a list.
fn content(value: &Value) -> Option<String> {
    if let Some(s) = value.as_str() {
        return text_of(&Value::String(s.to_string()));
    }
    let blocks: Vec<&str> = value
        .as_array()?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text")?.as_str())
        .collect();
    text_of(&Value::String(blocks.join("\n")))
}

fn text_of(value: &Value) -> Option<String> {
    let text = value.as_str()?.trim();
    // Hidden characters (escapes, bidi overrides, tag characters) are
    // quoted visibly, as `\x1b` or `\u{202e}`: data to read, not to obey.
    let text = crate::base::text::terminal_safe(text, false);
    (!text.is_empty()).then(|| crate::model::memory::truncate(&text, TURN_CHARS))
}

/// The last [`MAX_TURNS`] turns within [`TOTAL_CHARS`], oldest first.
fn last_turns(turns: impl Iterator<Item = Turn>) -> Vec<Turn> {
    let all: Vec<Turn> = turns.collect();
    let mut kept = Vec::new();
    let mut chars = 0;
    for turn in all.into_iter().rev().take(MAX_TURNS) {
        chars += turn.text.chars().count();
        if chars > TOTAL_CHARS && !kept.is_empty() {
            break;
        }
        kept.push(turn);
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_answers_not_tools_or_notes() {
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"where does staging run?"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"On k3s."},{"type":"tool_use","name":"Bash","input":{}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#,
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"caveat"}}"#,
            "not json at all",
            r#"{"type":"summary","summary":"x"}"#,
        ];
        let turns = last_turns(lines.iter().filter_map(|l| entry(l)));
        assert_eq!(
            turns,
            [
                Turn { role: "user", text: "where does staging run?".into() },
                Turn { role: "assistant", text: "On k3s.".into() }
            ]
        );
    }

    #[test]
    fn bounded_whatever_the_input() {
        let long = "x".repeat(10_000);
        let many: Vec<Turn> = (0..100).map(|_| Turn { role: "user", text: long.clone() }).collect();
        let turns = last_turns(
            many.into_iter()
                .map(|t| Turn { text: crate::model::memory::truncate(&t.text, TURN_CHARS), ..t }),
        );
        let total: usize = turns.iter().map(|t| t.text.chars().count()).sum();
        assert!(turns.len() <= MAX_TURNS && total <= TOTAL_CHARS, "{} {total}", turns.len());
        let inline =
            serde_json::json!([{"role": "user", "text": "hi"}, {"role": "tool", "text": "x"}, 7]);
        assert_eq!(from_messages(&inline), [Turn { role: "user", text: "hi".into() }]);
        assert!(from_messages(&serde_json::json!({"role": "user"})).is_empty());
    }

    #[test]
    fn a_missing_or_odd_transcript_gives_no_turns() {
        let dir = tempfile::tempdir().unwrap();
        let (turns, why) = from_file(&dir.path().join("gone.jsonl"));
        assert!(turns.is_empty() && why.is_some());
        let (turns, why) = from_file(dir.path());
        assert!(turns.is_empty() && why.is_some(), "a folder");
    }
}
