//! Text made safe to show: one line, no hidden characters, no Markdown
//! structure of its own. Pure functions on strings, used wherever a file
//! name or a field is printed, quoted in an error or written into Markdown.

/// The colour codes `output::Style` writes, the only escape sequences kept.
pub const OWN_CODES: [&str; 6] = ["0", "1", "2", "33", "36", "1;31"];

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
/// `colour`, the codes of [`OWN_CODES`] are kept. `--json` keeps
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

/// JSON text (as `serde_json` writes it) with every hidden character but
/// line break and tab written as a `\uXXXX` escape: the same value, valid
/// JSON, and nothing [`terminal_safe`] would rewrite (which would make it
/// invalid). Such characters can only stand inside its strings.
pub fn json_visible(json: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| hidden(c) && c != '\n' && c != '\t';
    if !json.chars().any(escaped) {
        return json.into();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
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

/// True for Han, Hiragana, Katakana and Hangul characters.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3005 | 0x3007 // 々 〇
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xF900..=0xFAFF // Han compatibility
        | 0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF // Hangul
        | 0x20000..=0x3134F // Han extensions B–G
    )
}

/// Estimated tokens of `text` for a context budget, by the README's rule:
/// one per CJK character, one per four other characters (spaces and line
/// breaks included: they are printed, and an agent's context holds them).
pub fn estimate_tokens(text: &str) -> usize {
    Tally::default().add(text).tokens()
}

/// [`estimate_tokens`] of pieces of text printed one after another,
/// counted piece by piece: the same number as for the text they make.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    cjk: usize,
    other: usize,
}

impl Tally {
    /// Count `text` too.
    pub fn add(&mut self, text: &str) -> &mut Tally {
        // Most text is ASCII: a character per byte, none of them CJK.
        if text.is_ascii() {
            self.other += text.len();
            return self;
        }
        for c in text.chars() {
            if is_cjk(c) {
                self.cjk += 1;
            } else {
                self.other += 1;
            }
        }
        self
    }

    /// The estimated tokens of everything counted.
    pub fn tokens(&self) -> usize {
        self.cjk + self.other.div_ceil(4)
    }
}

/// A unified diff of `before` and `after` under `name`: `a/name`, `b/name`
/// for a relative path (as git writes them), the path itself when absolute.
pub fn unified_diff(name: &str, before: &str, after: &str) -> String {
    let (a, b) = if name.starts_with('/') {
        (name.to_string(), name.to_string())
    } else {
        (format!("a/{name}"), format!("b/{name}"))
    };
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(2)
        .header(&a, &b)
        .to_string()
}

/// Display columns of a character: CJK and full-width forms take two.
pub fn columns(c: char) -> usize {
    if is_cjk(c) || matches!(c as u32, 0x3000..=0x303F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6) {
        2
    } else {
        1
    }
}

/// Display columns of `text`: CJK and full-width forms take two.
pub fn display_width(text: &str) -> usize {
    text.chars().map(columns).sum()
}

/// The units a line may break between: a run of Latin text (`--max-old-space-size`
/// stays whole), one CJK character, or a run of spaces.
fn units(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let breaks = c.is_whitespace() || is_cjk(c);
        match (breaks, start) {
            (false, None) => start = Some(i),
            (false, Some(_)) => {}
            (true, Some(s)) => {
                out.push(&text[s..i]);
                start = None;
                out.push(&text[i..i + c.len_utf8()]);
            }
            (true, None) => out.push(&text[i..i + c.len_utf8()]),
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// Wrap `text` into at most `max_lines` lines of `width` columns, ending in
/// `…` if cut; with no width (not a terminal), one line, whole.
pub fn wrap(text: &str, width: Option<usize>, max_lines: usize) -> Vec<String> {
    let Some(width) = width else {
        return if text.is_empty() { Vec::new() } else { vec![text.to_string()] };
    };
    let width = width.max(2);
    let mut lines = vec![String::new()];
    let mut used = 0;
    for unit in units(text) {
        let w: usize = unit.chars().map(columns).sum();
        if used + w > width && used > 0 {
            if lines.len() == max_lines {
                cut(lines.last_mut().expect("one line"), width);
                return lines;
            }
            let last = lines.last_mut().expect("one line");
            last.truncate(last.trim_end().len());
            lines.push(String::new());
            used = 0;
            if unit.trim().is_empty() {
                continue;
            }
        }
        lines.last_mut().expect("one line").push_str(unit);
        used += w;
    }
    // A unit wider than a line (a long flag, a URL) stays whole on a line
    // of its own, except on the last line there is room for: cut there.
    if lines.len() == max_lines
        && let Some(last) = lines.last_mut().filter(|l| display_width(l) > width)
    {
        cut(last, width);
    }
    lines.retain(|l| !l.is_empty());
    lines
}

/// `line` cut to end in `…` within `width` columns.
fn cut(line: &mut String, width: usize) {
    line.truncate(line.trim_end().len());
    while display_width(line) + 1 > width {
        line.pop();
    }
    line.truncate(line.trim_end().len());
    line.push('…');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_visible_is_the_same_json_with_nothing_hidden() {
        let value =
            serde_json::json!({"t": "a\u{200b}b\u{7f}\u{85}\u{202e}\u{e0041}\n\u{1b}", "n": 1});
        let json = serde_json::to_string_pretty(&value).unwrap();
        let visible = json_visible(&json);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&visible).unwrap(), value);
        assert_eq!(terminal_safe(&visible, false), visible);
        assert!(visible.contains(r"\u200b") && visible.contains(r"\udb40\udc41"), "{visible}");
        assert!(matches!(json_visible("{\"a\": \"部署\"}"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn wrapped_lines_never_pass_the_width() {
        let texts = [
            "We sign sessions with Ed25519 keys kept in the vault, rotated every 90 days.",
            "部署脚本用 pnpm 而不是 npm。npm 会生成不同的 lockfile 并装出不同版本",
            "see https://example.com/a/very/long/path/that/does/not/fit/on/one/line/at/all",
        ];
        for text in texts {
            for width in 2..40 {
                // Only a unit wider than a line may pass it, and never on
                // the last line.
                let lines = wrap(text, Some(width), 2);
                let last = lines.last().unwrap();
                assert!(display_width(last) <= width, "{width}: {last}");
                for line in wrap(text, Some(width), 1) {
                    assert!(display_width(&line) <= width, "{width}: {line}");
                }
            }
        }
        assert_eq!(wrap("abc def", Some(5), 1), ["abc…"]);
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

    #[test]
    fn tokens_count_cjk_as_one_and_latin_as_a_quarter() {
        assert_eq!(estimate_tokens("部署"), 2);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("部署 pnpm"), 4);
        assert_eq!(estimate_tokens("a b\n"), 1);
        assert_eq!(estimate_tokens(""), 0);
        let pieces = ["部署", " pnpm", "", "a", "bcd", "é"];
        let mut tally = Tally::default();
        for (i, piece) in pieces.iter().enumerate() {
            tally.add(piece);
            assert_eq!(tally.tokens(), estimate_tokens(&pieces[..=i].concat()), "{i}");
        }
    }
}
