//! Labelled generated regions inside hand-written Markdown:
//!
//! ```text
//! <!-- auto:begin routing -->
//! …generated…
//! <!-- auto:end -->
//! ```
//!
//! Only the lines between a begin marker and its end marker are ever
//! replaced; the label is part of the match, so two regions cannot swap. A
//! missing end, a nested begin, a stray end or a duplicated label is an error
//! naming the line, and the file is then left as it is.

use std::fmt;

/// A region's position: the begin and end marker lines (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub label: String,
    pub begin: usize,
    pub end: usize,
}

/// Why the markers of a file cannot be trusted; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for MarkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

enum Marker<'a> {
    Begin(&'a str),
    End,
}

fn marker(line: &str) -> Option<Marker<'_>> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let rest = inner.strip_prefix("auto:")?;
    if rest == "end" {
        return Some(Marker::End);
    }
    let label = rest.strip_prefix("begin")?.trim();
    Some(Marker::Begin(label))
}

/// Find every region of `text`, checking the markers pair up.
pub fn find(text: &str) -> Result<Vec<Region>, MarkerError> {
    let mut regions: Vec<Region> = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let err = |message: String| Err(MarkerError { line: i + 1, message });
        match (marker(line), &open) {
            (None, _) => {}
            (Some(Marker::Begin(label)), None) => {
                if label.is_empty() {
                    return err(
                        "`auto:begin` needs a label, e.g. `<!-- auto:begin routing -->`".into()
                    );
                }
                if let Some(r) = regions.iter().find(|r| r.label == label) {
                    return err(format!(
                        "region `{label}` appears twice (first on line {})",
                        r.begin + 1
                    ));
                }
                open = Some((label.to_string(), i));
            }
            (Some(Marker::Begin(label)), Some((outer, at))) => {
                return err(format!(
                    "region `{label}` starts inside region `{outer}` (line {}), which has no `auto:end` yet",
                    at + 1
                ));
            }
            (Some(Marker::End), None) => {
                return err("`auto:end` without an `auto:begin` above it".into());
            }
            (Some(Marker::End), Some((label, begin))) => {
                regions.push(Region { label: label.clone(), begin: *begin, end: i });
                open = None;
            }
        }
    }
    match open {
        Some((label, begin)) => Err(MarkerError {
            line: begin + 1,
            message: format!("region `{label}` has no `<!-- auto:end -->`"),
        }),
        None => Ok(regions),
    }
}

/// Replace the bodies of the labelled regions in `text`. `body(label)`
/// returns the new lines for a region, or None to leave it as it is. The
/// file's line ending (LF or CRLF) is kept.
pub fn replace(
    text: &str,
    regions: &[Region],
    mut body: impl FnMut(&str) -> Option<Vec<String>>,
) -> String {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for region in regions {
        let Some(new) = body(&region.label) else { continue };
        for line in &lines[at..=region.begin] {
            out.push_str(line);
        }
        if !out.ends_with('\n') {
            out.push_str(newline);
        }
        for line in new {
            out.push_str(&line);
            out.push_str(newline);
        }
        at = region.end;
    }
    for line in &lines[at..] {
        out.push_str(line);
    }
    out
}

/// The lines between a region's markers.
pub fn body<'a>(text: &'a str, region: &Region) -> Vec<&'a str> {
    text.lines().skip(region.begin + 1).take(region.end - region.begin - 1).collect()
}

/// The text with every region emptied: what was written by hand (for the
/// three-way merge of the rest, and for trusting `ROOT.md`'s prose).
pub fn outside(text: &str) -> Option<String> {
    let found = find(text).ok()?;
    Some(replace(text, &found, |_| Some(Vec::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "intro\n<!-- auto:begin a -->\nold a\n<!-- auto:end -->\nmiddle\n<!--auto:begin b-->\n<!-- auto:end -->\nend\n";

    #[test]
    fn finds_labelled_regions() {
        let r = find(TEXT).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].label.as_str(), r[0].begin, r[0].end), ("a", 1, 3));
        assert_eq!((r[1].label.as_str(), r[1].begin, r[1].end), ("b", 5, 6));
        assert_eq!(body(TEXT, &r[0]), ["old a"]);
    }

    #[test]
    fn replaces_only_inside_the_markers() {
        let r = find(TEXT).unwrap();
        let out = replace(TEXT, &r, |label| Some(vec![format!("new {label}"), "x".into()]));
        assert_eq!(
            out,
            "intro\n<!-- auto:begin a -->\nnew a\nx\n<!-- auto:end -->\nmiddle\n<!--auto:begin b-->\nnew b\nx\n<!-- auto:end -->\nend\n"
        );
        let only_b = replace(TEXT, &r, |label| (label == "b").then(Vec::new));
        assert_eq!(only_b, TEXT);
    }

    #[test]
    fn keeps_crlf() {
        let text = TEXT.replace('\n', "\r\n");
        let r = find(&text).unwrap();
        let out = replace(&text, &r, |_| Some(vec!["row".into()]));
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
        assert!(out.contains("<!-- auto:begin a -->\r\nrow\r\n<!-- auto:end -->\r\n"));
    }

    #[test]
    fn broken_markers_name_the_line() {
        let cases = [
            ("<!-- auto:begin a -->\nx\n", 1, "no `<!-- auto:end -->`"),
            (
                "<!-- auto:begin a -->\n<!-- auto:begin b -->\n<!-- auto:end -->\n",
                2,
                "inside region `a`",
            ),
            ("x\n<!-- auto:end -->\n", 2, "without an `auto:begin`"),
            (
                "<!-- auto:begin a -->\n<!-- auto:end -->\n<!-- auto:begin a -->\n<!-- auto:end -->\n",
                3,
                "twice",
            ),
            ("<!-- auto:begin -->\n<!-- auto:end -->\n", 1, "needs a label"),
        ];
        for (text, line, words) in cases {
            let e = find(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}");
            assert!(e.message.contains(words), "{e}");
        }
    }

    #[test]
    fn end_marker_on_the_last_line_without_newline() {
        let text = "<!-- auto:begin a -->\nold\n<!-- auto:end -->";
        let r = find(text).unwrap();
        assert_eq!(
            replace(text, &r, |_| Some(vec!["new".into()])),
            "<!-- auto:begin a -->\nnew\n<!-- auto:end -->"
        );
    }
}
