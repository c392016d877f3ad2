//! Human text or `--json`, and colour only where it helps.
//!
//! Commands build a report; this layer decides how it looks. Colour is used
//! only on a terminal and never with `NO_COLOR`. A closed pipe
//! (`mem list | head`) ends the program quietly.

use std::io::{self, Write};

use serde::Serialize;

use crate::base::text::terminal_safe;
use crate::settings::Context;

/// The columns human output may use: `$COLUMNS` when set, else the
/// terminal's width; None when standard output is not a terminal (a pipe
/// or a file gets each field on one line, never cut).
pub fn width() -> Option<usize> {
    use std::io::IsTerminal;
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
        return (n > 0).then_some(n);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        rustix::termios::tcgetwinsize(std::io::stdout())
            .ok()
            .map(|w| usize::from(w.ws_col))
            .filter(|&n| n > 0)
            .or(Some(80))
    }
    #[cfg(not(unix))]
    {
        Some(80)
    }
}

/// What a command hands to the output layer.
pub trait Report: Serialize {
    /// The text shown to a person.
    fn human(&self, style: &Style) -> String;

    /// Warnings printed on stderr (and kept in the JSON).
    fn warnings(&self) -> &[String] {
        &[]
    }

    /// A one-line note for stderr, such as why nothing was found.
    fn notice(&self) -> Option<String> {
        None
    }

    /// The exit code once printed: 0, or 1 for "nothing found".
    fn exit_code(&self) -> i32 {
        0
    }

    /// The `--json` text, when the report writes its own (default: the
    /// report serialized, pretty).
    fn json_text(&self) -> Option<String> {
        None
    }
}

/// Terminal styling, switched off when colour is not wanted.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }

    /// Emphasis for names and titles.
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }

    /// De-emphasis for secondary details.
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }

    /// Memory paths.
    pub fn path(&self, s: &str) -> String {
        self.paint("36", s)
    }

    /// Matched terms.
    pub fn mark(&self, s: &str) -> String {
        self.paint("1;31", s)
    }

    /// Warnings.
    pub fn warn(&self, s: &str) -> String {
        self.paint("33", s)
    }
}

/// The version of the `--json` vocabulary (`docs/json.md`).
pub const JSON_VERSION: u32 = 1;

/// Keys that hold an epoch-milliseconds time: each gets a sibling
/// `<key>_iso` (ISO 8601, UTC) in `--json` output, except inside a
/// memory's `frontmatter` (its data, as written).
const TIME_KEYS: [&str; 7] =
    ["created", "updated", "last", "last_used", "last_seen", "trashed_at", "trusted_at"];

/// `value` as every `--json` answer is written: an object starts with
/// `"schema": "mem-<command>/1"`, ends with `"warnings"` (the lines said on
/// stderr), and every epoch-ms time has its ISO 8601 sibling.
pub fn envelope(command: &str, value: serde_json::Value, warnings: &[String]) -> serde_json::Value {
    use serde_json::Value;
    let mut value = with_iso(value);
    if let Value::Object(map) = &mut value {
        let mut out = serde_json::Map::new();
        // A report with its own schema (`mem export`'s document) keeps it.
        let schema = match map.shift_remove("schema") {
            Some(own) => own,
            None => Value::from(format!("mem-{command}/{JSON_VERSION}")),
        };
        out.insert("schema".into(), schema);
        let own_warnings = map.shift_remove("warnings");
        out.append(map);
        let mut all: Vec<Value> = match own_warnings {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        };
        for w in warnings {
            if !all.iter().any(|x| x.as_str() == Some(w)) {
                all.push(Value::from(w.as_str()));
            }
        }
        out.insert("warnings".into(), Value::Array(all));
        value = Value::Object(out);
    }
    value
}

fn with_iso(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, v) in map {
                let iso = match (&v, TIME_KEYS.contains(&key.as_str())) {
                    (Value::Number(n), true) => n
                        .as_i64()
                        .map(|ms| (format!("{key}_iso"), crate::base::time::iso_second(ms))),
                    _ => None,
                };
                // A memory's frontmatter is its data, shown as written.
                let v = if key == "frontmatter" { v } else { with_iso(v) };
                out.insert(key, v);
                if let Some((k, text)) = iso {
                    out.insert(k, Value::from(text));
                }
            }
            Value::Object(out)
        }
        Value::Array(list) => Value::Array(list.into_iter().map(with_iso).collect()),
        other => other,
    }
}

/// A pair written as a JSON object with the given names: a tuple in Rust,
/// named fields for scripts.
pub struct Named<'a, A, B>(pub &'a (A, B), pub [&'static str; 2]);

impl<A: serde::Serialize, B: serde::Serialize> serde::Serialize for Named<'_, A, B> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry(self.1[0], &self.0.0)?;
        map.serialize_entry(self.1[1], &self.0.1)?;
        map.end()
    }
}

/// `pairs` as a list of objects named `names` (for `#[serde(serialize_with)]`).
pub fn named_pairs<S: serde::Serializer, A: serde::Serialize, B: serde::Serialize>(
    pairs: &[(A, B)],
    names: [&'static str; 2],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(pairs.iter().map(|p| Named(p, names)))
}

/// Print a report as the context asks; returns the exit code.
pub fn emit<R: Report>(ctx: &Context, report: &R) -> i32 {
    emit_whole(ctx, report).0
}

/// [`emit`], also saying whether the output was written whole (not cut by
/// a closed pipe or a full disk).
pub fn emit_whole<R: Report>(ctx: &Context, report: &R) -> (i32, bool) {
    let style = Style { color: ctx.color };
    let text = if ctx.json {
        report.json_text().unwrap_or_else(|| {
            let value = serde_json::to_value(report).unwrap_or_default();
            let value = envelope(ctx.command, value, report.warnings());
            let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
            s.push('\n');
            s
        })
    } else if ctx.quiet {
        String::new()
    } else {
        terminal_safe(&report.human(&style), style.color).into_owned()
    };
    for w in report.warnings() {
        eprintln!("{} {}", style.warn("warning:"), terminal_safe(w, false));
    }
    if let Some(notice) = report.notice().filter(|_| !ctx.quiet) {
        eprintln!("mem: {}", terminal_safe(&notice, false));
    }
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => (report.exit_code(), true),
        // A reader that stopped early (`mem list | head`) is not a failure.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => (0, false),
        // A full disk or a closed terminal is: what was asked for was not written.
        Err(e) => {
            eprintln!("mem: cannot write the output: {e}");
            (2, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::text::one_line;

    #[test]
    fn the_envelope_names_the_command_first_warnings_last_and_adds_iso_times() {
        let value = serde_json::json!({
            "warnings": ["own"],
            "memory": {"path": "facts/a.md", "updated": 0, "hits": {"last": 86_400_000}},
            "frontmatter": {"updated": 5},
        });
        let out = envelope("inspect", value, &["own".into(), "said".into()]);
        let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["schema", "memory", "frontmatter", "warnings"]);
        assert_eq!(out["schema"], "mem-inspect/1");
        assert_eq!(out["warnings"], serde_json::json!(["own", "said"]));
        assert_eq!(out["memory"]["updated_iso"], "1970-01-01T00:00:00Z");
        assert_eq!(out["memory"]["hits"]["last_iso"], "1970-01-02T00:00:00Z");
        assert!(out["frontmatter"].get("updated_iso").is_none());
        // A document with its own schema keeps it.
        let own = envelope("export", serde_json::json!({"schema": "mem-export/1"}), &[]);
        assert_eq!(own["schema"], "mem-export/1");
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(terminal_safe("a\x1b]0;pwned\x07b", false), "a\\x1b]0;pwned\\x07b");
        assert_eq!(terminal_safe("x\x1b[2Jy\u{202e}z\u{85}", true), "x\\x1b[2Jy\\u{202e}z\\u{85}");
        assert_eq!(terminal_safe("line\n\tnext\r", false), "line\n\tnext\\x0d");
        assert_eq!(terminal_safe("部署", false), "部署");
        assert_eq!(terminal_safe("pnpm\u{200b}\u{e0041}", false), "pnpm\\u{200b}\\u{e0041}");
        assert_eq!(one_line("a\nb\tc"), "a\\x0ab\\x09c");
        let painted = Style { color: true }.path("facts/a.md");
        assert_eq!(terminal_safe(&painted, true), painted);
        assert_eq!(terminal_safe(&painted, false), "\\x1b[36mfacts/a.md\\x1b[0m");
    }
}
