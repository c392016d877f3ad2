//! Split a Markdown file into YAML frontmatter and body, and write it back.
//!
//! The splitter is our own so that the rules for hand-written files hold
//! exactly: a UTF-8 BOM and CRLF are accepted, `---` inside the body is body,
//! an unclosed frontmatter is an error (never silently body text), and the
//! body is kept byte for byte. Keys keep their order through a rewrite.

pub mod conflict;
pub mod edit;

use yaml_serde::{Mapping, Value};

const BOM: &str = "\u{feff}";

/// The largest frontmatter that is parsed, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 << 10;

/// The most flow collections (`[`, `{`) a frontmatter may open. Deeply
/// nested flow collections cost the YAML parser superlinear time; counting
/// every opener, quoted or not, bounds the depth whatever the quoting.
pub const MAX_FLOW_OPENERS: usize = 1024;

/// A parsed file: frontmatter keys in file order, and the untouched body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file started with a UTF-8 byte order mark.
    pub bom: bool,
    /// The line ending the frontmatter used (`\n` or `\r\n`).
    pub newline: &'static str,
    /// The file had a `---` fenced frontmatter block.
    pub fenced: bool,
    /// The frontmatter keys, in the order they appear.
    pub meta: Mapping,
    /// Everything after the closing fence, byte for byte.
    pub body: String,
}

/// Why a file's frontmatter could not be read; `line` is 1-based in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl Document {
    /// A document with no frontmatter yet and the given body.
    pub fn new(body: String) -> Document {
        Document { bom: false, newline: "\n", fenced: true, meta: Mapping::new(), body }
    }

    /// Parse a whole file's text.
    pub fn parse(text: &str) -> Result<Document, ParseError> {
        let (bom, text) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        // A merge left unresolved reads as neither side: never as the text.
        if let Some(c) = conflict::find(text) {
            return Err(ParseError {
                line: c.start,
                message: format!(
                    "unresolved git conflict (lines {}-{}): keep the text you want and delete the `<<<<<<<`, `=======` and `>>>>>>>` lines",
                    c.start, c.end
                ),
            });
        }
        let Some(opening) = fence_len(text) else {
            let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
            let body = text.to_string();
            return Ok(Document { bom, newline, fenced: false, meta: Mapping::new(), body });
        };
        let newline = if text[..opening].ends_with("\r\n") { "\r\n" } else { "\n" };
        let (yaml, body) = split_closing(&text[opening..]).ok_or_else(|| ParseError {
            line: 1,
            message: "the frontmatter opened on line 1 is never closed by a `---` line".into(),
        })?;
        let meta = parse_yaml(yaml)?;
        Ok(Document { bom, newline, fenced: true, meta, body: body.to_string() })
    }

    /// Render the document back to text: same BOM, same line endings in the
    /// frontmatter, body unchanged.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.body.len() + 256);
        if self.bom {
            out.push_str(BOM);
        }
        if self.fenced || !self.meta.is_empty() {
            out.push_str("---");
            out.push_str(self.newline);
            if !self.meta.is_empty() {
                let yaml = yaml_serde::to_string(&self.meta).unwrap_or_default();
                out.push_str(&yaml.replace('\n', self.newline));
            }
            out.push_str("---");
            out.push_str(self.newline);
        }
        out.push_str(&self.body);
        out
    }

    /// The string value of `key`, if it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.meta.get(key).and_then(Value::as_str)
    }

    /// Set `key`, keeping its position when it already exists.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.meta.insert(Value::String(key.to_string()), value.into());
    }

    /// Remove `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) {
        self.meta.shift_remove(key);
    }
}

/// Length of the opening `---` line including its newline, if the text opens with one.
fn fence_len(text: &str) -> Option<usize> {
    let line_end = text.find('\n')?;
    (text[..line_end].trim_end() == "---").then_some(line_end + 1)
}

/// Find the closing fence: returns (yaml, body).
fn split_closing(rest: &str) -> Option<(&str, &str)> {
    let mut start = 0;
    while start <= rest.len() {
        let end = rest[start..].find('\n').map(|i| start + i + 1).unwrap_or(rest.len());
        let line = rest[start..end].trim_end();
        if line == "---" || line == "..." {
            return Some((&rest[..start], &rest[end..]));
        }
        if end == rest.len() {
            return None;
        }
        start = end;
    }
    None
}

fn parse_yaml(yaml: &str) -> Result<Mapping, ParseError> {
    if yaml.trim().is_empty() {
        return Ok(Mapping::new());
    }
    // Checked before parsing, so a hostile file costs a scan, not a parse.
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(ParseError {
            line: 1,
            message: format!(
                "the frontmatter is {} KiB, over the {} KiB limit; move long text into the body",
                yaml.len().div_ceil(1024),
                MAX_FRONTMATTER_BYTES >> 10
            ),
        });
    }
    if yaml.bytes().filter(|b| matches!(b, b'[' | b'{')).count() > MAX_FLOW_OPENERS {
        return Err(ParseError {
            line: 1,
            message: format!(
                "the frontmatter opens more than {MAX_FLOW_OPENERS} `[` or `{{` collections; write flat `key: value` lines"
            ),
        });
    }
    match yaml_serde::from_str::<Value>(yaml) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Null) => Ok(Mapping::new()),
        Ok(_) => Err(ParseError {
            line: 2,
            message: "the frontmatter is not a list of `key: value` lines".into(),
        }),
        Err(e) => {
            // +1: the YAML starts on the line after the opening fence.
            let line = e.location().map(|l| l.line() + 1).unwrap_or(2);
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message).to_string();
            Err(ParseError { line, message: format!("invalid YAML in frontmatter: {message}") })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(doc: &Document) -> Vec<&str> {
        doc.meta.keys().filter_map(Value::as_str).collect()
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let doc = Document::parse("# Hi\n\ntext\n").unwrap();
        assert!(!doc.fenced);
        assert_eq!(doc.body, "# Hi\n\ntext\n");
        assert_eq!(doc.render(), "# Hi\n\ntext\n");
    }

    #[test]
    fn empty_frontmatter() {
        let doc = Document::parse("---\n---\nbody\n").unwrap();
        assert!(doc.meta.is_empty());
        assert_eq!(doc.body, "body\n");
        assert_eq!(doc.render(), "---\n---\nbody\n");
    }

    #[test]
    fn bom_and_crlf_round_trip() {
        let text = "\u{feff}---\r\nkind: fact\r\nzeta: 1\r\n---\r\n# T\r\n\r\nbody\r\n";
        let doc = Document::parse(text).unwrap();
        assert!(doc.bom);
        assert_eq!(doc.newline, "\r\n");
        assert_eq!(doc.get_str("kind"), Some("fact"));
        assert_eq!(doc.body, "# T\r\n\r\nbody\r\n");
        assert_eq!(doc.render(), text);
    }

    #[test]
    fn dashes_in_body_stay_body() {
        let text = "---\na: 1\n---\nintro\n---\nmore\n---\n";
        let doc = Document::parse(text).unwrap();
        assert_eq!(doc.body, "intro\n---\nmore\n---\n");
        assert_eq!(doc.render(), text);
    }

    #[test]
    fn unclosed_frontmatter_is_an_error() {
        let err = Document::parse("---\nkind: fact\n# body\n").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn invalid_yaml_names_the_file_line() {
        let err = Document::parse("---\nkind: fact\nsummary: [oops\n---\n").unwrap_err();
        assert!(err.line >= 3, "{err:?}");
        let err = Document::parse("---\na: 1\n  b: 2\n---\n").unwrap_err();
        assert_eq!(err.line, 3, "{err:?}");
    }

    #[test]
    fn unknown_keys_keep_their_order_through_edits() {
        let text = "---\nzeta: z\nkind: fact\nalpha: [1, 2]\ncustom_date: 2024-01-01\n---\nbody";
        let mut doc = Document::parse(text).unwrap();
        doc.set("kind", "decision");
        doc.set("updated", 1_791_512_156_858_i64);
        assert_eq!(keys(&doc), ["zeta", "kind", "alpha", "custom_date", "updated"]);
        let again = Document::parse(&doc.render()).unwrap();
        assert_eq!(keys(&again), keys(&doc));
        assert_eq!(again.body, "body");
        assert!(doc.render().contains("updated: 1791512156858\n"));
    }

    #[test]
    fn hostile_frontmatter_is_refused_before_parsing() {
        let deep = format!("---\nk: {}{}\n---\nbody\n", "[".repeat(20_000), "]".repeat(20_000));
        let err = Document::parse(&deep).unwrap_err();
        assert!(err.message.contains("more than 1024"), "{err:?}");
        let long = format!("---\nsummary: {}\n---\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert!(Document::parse(&long).unwrap_err().message.contains("64 KiB limit"));
        let quoted = "---\nsummary: \"]]]]\" \n---\n";
        assert!(Document::parse(quoted).is_ok());
    }

    #[test]
    fn cjk_is_written_unquoted() {
        let mut doc = Document::new("x\n".into());
        doc.set("summary", "部署脚本用 pnpm");
        assert_eq!(doc.render(), "---\nsummary: 部署脚本用 pnpm\n---\nx\n");
    }
}

#[cfg(test)]
mod date_tests {
    use super::Document;

    #[test]
    fn an_iso_date_is_written_plain_and_reads_back_as_a_string() {
        let mut doc = Document::new("body\n".into());
        doc.set("created", "2026-12-03T06:47:08.497Z");
        doc.set("updated", "2026-12-03");
        let text = doc.render();
        assert_eq!(
            text,
            "---\ncreated: 2026-12-03T06:47:08.497Z\nupdated: 2026-12-03\n---\nbody\n"
        );
        assert_eq!(Document::parse(&text).unwrap(), doc);
    }
}
