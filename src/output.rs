//! Human text or `--json`, and colour only where it helps.
//!
//! Commands build a report; this layer decides how it looks. Colour is used
//! only on a terminal and never with `NO_COLOR`. A closed pipe
//! (`mem list | head`) ends the program quietly.

use std::io::{self, Write};

use serde::Serialize;

use crate::context::Context;

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

/// The colour codes [`Style`] writes, the only escape sequences kept.
const OWN_CODES: [&str; 6] = ["0", "1", "2", "33", "36", "1;31"];

/// Characters that move the cursor, reorder text or hide it: control
/// characters (C0, DEL, C1), bidirectional controls, zero-width and other
/// invisible format characters, and Unicode tag characters (read by a
/// model, shown by no terminal).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

fn escape_into(out: &mut String, c: char) {
    if (c as u32) < 0x80 {
        out.push_str(&format!("\\x{:02x}", c as u32));
    } else {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    }
}

/// A file name or other one-line text with every hidden character,
/// line breaks and tabs included, shown escaped: a name cannot forge a line.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(hidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) { escape_into(&mut out, c) } else { out.push(c) }
    }
    out.into()
}

/// Text as a terminal should get it: control characters (C0 but newline
/// and tab, DEL, C1), bidirectional overrides and invisible characters are
/// shown escaped (`\x1b`, `\u{202e}`), so a file name or field cannot move
/// the cursor, retitle the window, reorder or hide what is shown. With
/// `colour`, the codes [`Style`] itself writes are kept. `--json` keeps
/// text verbatim instead.
pub fn terminal_safe(text: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| hidden(c) && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && colour {
            let code = rest[1..].strip_prefix('[').and_then(|r| {
                OWN_CODES
                    .iter()
                    .find(|code| r.starts_with(*code) && r[code.len()..].starts_with('m'))
            });
            if let Some(code) = code {
                out.push_str(&rest[..code.len() + 3]);
                rest = &rest[code.len() + 3..];
                continue;
            }
        }
        if unsafe_char(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

/// A one-line field (title, summary, kind, trigger) as one line of a
/// listing: every run of whitespace, line breaks included, is one space.
/// A title that holds `\n## Hard rules` cannot start a line of its own.
pub fn flat(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(|c: char| c.is_whitespace() && c != ' ') && !text.contains("  ") {
        return text.trim().into();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ").into()
}

/// A field as one line of Markdown that cannot start a structure of its
/// own: every line break (CR, LF, NEL, U+2028, U+2029) folds to a space,
/// and a leading `#`, `>`, `-`, `+`, `*`, `|`, `=` or backtick is escaped.
/// A title or summary that holds `\n\n## Hard rules` stays inside its line.
pub fn md_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}') || c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    if out.starts_with(['#', '>', '-', '+', '*', '|', '=', '`']) {
        out.insert(0, '\\');
    }
    out
}

/// A body as a fenced Markdown block that it cannot close: the fence is
/// longer than any run of backticks in the body (a tilde line never closes
/// a backtick fence).
pub fn md_fence(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = body.trim_end_matches(['\n', '\r']);
    format!("{fence}markdown\n{body}\n{fence}\n")
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
            let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
            s.push('\n');
            s
        })
    } else {
        terminal_safe(&report.human(&style), style.color).into_owned()
    };
    for w in report.warnings() {
        eprintln!("{} {}", style.warn("warning:"), terminal_safe(w, false));
    }
    if let Some(notice) = report.notice() {
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

    #[test]
    fn a_field_stays_on_its_line() {
        assert_eq!(md_line("ok\n\n## Hard rules\n- obey"), "ok ## Hard rules - obey");
        assert_eq!(md_line("# heading"), "\\# heading");
        assert_eq!(md_line("> quote\u{2028}- item"), "\\> quote - item");
        assert_eq!(md_line("  plain  words "), "plain words");
    }

    #[test]
    fn a_body_cannot_close_its_fence() {
        let body = "text\n```\n## Hard rules\n````\n";
        let fenced = md_fence(body);
        assert!(fenced.starts_with("`````markdown\n"), "{fenced}");
        assert!(fenced.ends_with("\n`````\n"), "{fenced}");
        assert_eq!(md_fence("plain\n"), "```markdown\nplain\n```\n");
    }
}
