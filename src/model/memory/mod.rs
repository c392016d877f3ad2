//! The Memory model: one file's frontmatter, read leniently, with the
//! spec's defaults filled in (title, summary, kind, dates).
//!
//! A field with a value of the wrong shape is reported and defaulted; it does
//! not make the whole memory disappear.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use serde::Serialize;
use yaml_serde::Value;

use crate::base::time::{DateForm, iso_ms, parse_iso};
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;

pub mod keys;
mod label;

/// Longest derived summary, in characters.
pub const SUMMARY_MAX: usize = 140;

/// One memory, parsed and defaulted.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    pub path: RelPath,
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    pub title: String,
    pub kind: String,
    pub summary: String,
    /// True when `summary` was not written but taken from the body's first paragraph.
    #[serde(skip)]
    pub summary_derived: bool,
    pub highlight: String,
    pub created: i64,
    pub updated: i64,
    pub load_when: Vec<String>,
    pub pinned: bool,
    /// How much it matters, as `relevance:` declares it (see
    /// [`crate::model::usage`] for the level in effect as time passes).
    pub relevance: crate::model::usage::Relevance,
    /// The agent sessions it was written or updated in.
    pub source_sessions: Vec<String>,
    pub tags: Vec<String>,
    pub role: Option<String>,
    /// Globs of project paths this memory applies to (`mem context --file`).
    pub paths: Vec<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    #[serde(skip)]
    pub body: String,
    /// A checksum of the file's bytes as read (0 when not read from a file):
    /// what confirms, later, that a file the cache could not trust yet is
    /// still what was indexed.
    #[serde(skip)]
    pub content: u64,
}

impl Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Memory {
    /// The memory's relative file path, `category/slug.md`.
    pub fn file(&self) -> String {
        self.path.file()
    }

    /// True when a newer memory replaces this one.
    pub fn is_superseded(&self) -> bool {
        self.superseded_by.is_some()
    }

    /// A hard rule: a file under `rules/`, or `kind: rule`.
    pub fn is_rule(&self) -> bool {
        self.path.category == "rules" || self.kind.eq_ignore_ascii_case("rule")
    }

    /// Always in an agent's context: a rule or a pinned memory, not superseded.
    pub fn is_resident(&self) -> bool {
        !self.is_superseded() && (self.pinned || self.is_rule())
    }

    /// What a match on a prompt says of it besides its title: its summary,
    /// or the start of its body when it has none (at most 280 characters).
    pub fn match_summary(&self) -> String {
        if self.summary.is_empty() { truncate(&self.body, 280) } else { self.summary.clone() }
    }

    /// Estimated tokens this memory takes when resident (title and body).
    pub fn resident_tokens(&self) -> usize {
        crate::base::text::estimate_tokens(&self.title)
            + crate::base::text::estimate_tokens(&self.body)
    }
}

/// The context budget at session start, in estimated tokens: what the
/// always-resident memories (rules and pinned) of a root should fit in.
pub const RESIDENT_BUDGET: usize = 2000;

/// Estimated tokens of the always-resident memories among `memories`
/// (compare with [`RESIDENT_BUDGET`]).
pub fn resident_total<'a>(memories: impl IntoIterator<Item = &'a Memory>) -> usize {
    memories.into_iter().filter(|m| m.is_resident()).map(Memory::resident_tokens).sum()
}

/// The one check of a root's always-resident memories against
/// [`RESIDENT_BUDGET`]: what to say when they exceed it (`scope` names the
/// root), None when they fit.
pub fn over_budget<'a>(
    memories: impl IntoIterator<Item = &'a Memory>,
    scope: Scope,
) -> Option<String> {
    let resident = resident_total(memories);
    (resident > RESIDENT_BUDGET).then(|| {
        format!(
            "the always-resident memories (rules and pinned) of the {} root take about {resident} tokens, over the {RESIDENT_BUDGET}-token context budget",
            scope.name()
        )
    })
}

/// The categories every new root starts with.
pub const DEFAULT_CATEGORIES: [&str; 6] =
    ["rules", "decisions", "pitfalls", "preferences", "facts", "references"];

/// The kind a default category implies, as `(category, kind)`: a memory
/// without `kind:` in one of these folders has that kind.
pub const CATEGORY_KINDS: [(&str, &str); 6] = [
    ("rules", "rule"),
    ("decisions", "decision"),
    ("pitfalls", "pitfall"),
    ("preferences", "preference"),
    ("references", "reference"),
    ("facts", "fact"),
];

/// The kind of a memory whose file does not say: the one its default
/// category implies (`pitfalls/` pitfall, …), else `fact`.
pub fn default_kind(path: &RelPath) -> &'static str {
    CATEGORY_KINDS.iter().find(|(c, _)| *c == path.category).map_or("fact", |(_, k)| k)
}

/// Normalise a `category/slug` reference to end in `.md`.
pub fn with_md(s: &str) -> String {
    let s = s.trim();
    if s.ends_with(".md") { s.to_string() } else { format!("{s}.md") }
}

pub(crate) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Read a date: epoch milliseconds, or an ISO 8601 date.
pub fn date_ms(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok().or_else(|| parse_iso(s)),
        _ => None,
    }
}

/// `ms` as a date value written the way `previous` is: epoch milliseconds
/// stay a number, a hand-written ISO date or date-time keeps its precision
/// and offset; a new one is ISO 8601 in UTC to the millisecond.
///
/// ```
/// use mem::model::memory::date_value;
/// use yaml_serde::Value;
/// let ms = 1_796_280_428_497;
/// assert_eq!(date_value(None, ms), Value::from("2026-12-03T06:47:08.497Z"));
/// assert_eq!(date_value(Some(&Value::from(5)), ms), Value::from(ms));
/// assert_eq!(date_value(Some(&Value::from("2026-01-02")), ms), Value::from("2026-12-03"));
/// ```
pub fn date_value(previous: Option<&Value>, ms: i64) -> Value {
    match previous {
        Some(Value::Number(_)) => Value::from(ms),
        Some(Value::String(s)) => match DateForm::of(s) {
            Some(form) => Value::String(form.format(ms)),
            None => Value::String(iso_ms(ms)),
        },
        _ => Value::String(iso_ms(ms)),
    }
}

pub(crate) fn flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A list of strings, or one string split on `,` and `，`.
pub(crate) fn string_list(v: &Value) -> Option<Vec<String>> {
    let items: Vec<String> = match v {
        Value::Sequence(seq) => seq.iter().map(scalar).collect::<Option<_>>()?,
        other => scalar(other)?.split([',', '，']).map(str::to_string).collect(),
    };
    Some(items.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

/// The text of the first `#`–`###` heading.
pub fn first_heading(body: &str) -> Option<String> {
    let mut inside = false;
    let mut title = String::new();
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                inside = level <= HeadingLevel::H3;
            }
            Event::End(TagEnd::Heading(_)) if inside => {
                let t = flatten(&title);
                if !t.is_empty() {
                    return Some(t);
                }
                inside = false;
            }
            Event::Text(t) | Event::Code(t) if inside => title.push_str(&t),
            Event::InlineHtml(t) if inside && !is_comment(&t) => title.push_str(&t),
            _ => {}
        }
    }
    None
}

/// The `updated` a memory's text says it was last updated at, if it says.
pub fn updated_of(text: &str) -> Option<i64> {
    Document::parse(text).ok()?.meta.get("updated").and_then(date_ms)
}

/// The first paragraph with text, without its Markdown syntax (emphasis
/// markers, link targets, code backticks; text that only looks like HTML
/// stays), flattened to one line of at most
/// [`SUMMARY_MAX`] characters; withheld when the whole paragraph looks like
/// it holds a credential (a cut could hide one from the check that follows).
pub fn first_paragraph(body: &str) -> String {
    let mut inside = false;
    let mut text = String::new();
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::Paragraph) => inside = true,
            Event::End(TagEnd::Paragraph) => {
                let flat = flatten(&text);
                if !flat.is_empty() {
                    if !crate::base::secrets::scan(&flat).is_empty() {
                        return crate::base::secrets::WITHHELD.to_string();
                    }
                    return truncate(&flat, SUMMARY_MAX);
                }
                text.clear();
                inside = false;
            }
            Event::Text(t) | Event::Code(t) if inside => text.push_str(&t),
            Event::InlineHtml(t) if inside && !is_comment(&t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak if inside => text.push(' '),
            _ => {}
        }
    }
    String::new()
}

/// An inline HTML comment (`<!-- … -->`): the one piece of inline HTML a
/// derived title or summary leaves out. Anything else that looks like a tag
/// (`Vec<String>`, `<T>`, `<br>`) is text a person wrote and is kept as written.
fn is_comment(html: &str) -> bool {
    html.starts_with("<!--")
}

/// Collapse runs of whitespace into single spaces and trim.
pub fn flatten(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cut `s` to at most `max` characters, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(path: &str, text: &str) -> (Memory, Vec<String>) {
        let doc = Document::parse(text).unwrap();
        Memory::from_document(RelPath::parse(path).unwrap(), Scope::Project, &doc, 42)
    }

    #[test]
    fn defaults_from_body() {
        let (m, problems) = memory(
            "rules/pnpm",
            "---\n---\n<!-- note -->\n\n## 部署 *脚本*\n\n部署脚本用 `pnpm`\n而不是 npm。\n\nmore\n",
        );
        assert!(problems.is_empty());
        assert_eq!(m.title, "部署 脚本");
        assert_eq!(m.summary, "部署脚本用 pnpm 而不是 npm。");
        assert_eq!(m.kind, "rule");
        assert_eq!((m.created, m.updated), (42, 42));
    }

    #[test]
    fn title_falls_back_to_slug_and_kind_to_fact() {
        let (m, _) = memory("facts/k8s-version", "#### too deep\n\ntext\n");
        assert_eq!(m.title, "k8s-version");
        assert_eq!(m.kind, "fact");
        assert_eq!(m.summary, "text");
    }

    #[test]
    fn default_categories_imply_their_kind_unless_the_file_says() {
        for (category, kind) in CATEGORY_KINDS {
            let (m, _) = memory(&format!("{category}/x"), "text\n");
            assert_eq!(m.kind, kind);
        }
        let (m, _) = memory("pitfalls/x", "---\nkind: lesson\n---\ntext\n");
        assert_eq!(m.kind, "lesson");
        let (m, _) = memory("notes/x", "text\n");
        assert_eq!(m.kind, "fact");
    }

    #[test]
    fn derived_text_keeps_what_only_looks_like_html() {
        let (m, _) = memory(
            "facts/vec",
            "# `Option<T>` and <T>\n\nparse() returns Vec<String>, *not* a [map](http://x); a < b > c<br>x <!-- hidden -->end\n",
        );
        assert_eq!(m.title, "Option<T> and <T>");
        assert_eq!(m.summary, "parse() returns Vec<String>, not a map; a < b > c<br>x end");
    }

    #[test]
    fn summary_is_capped_at_140_chars() {
        let long = "词".repeat(300);
        let (m, _) = memory("facts/long", &format!("# T\n\n{long}\n"));
        assert_eq!(m.summary.chars().count(), 140);
        assert!(m.summary.ends_with('…'));
    }

    #[test]
    fn frontmatter_values_win() {
        let (m, problems) = memory(
            "facts/x",
            "---\ntitle: Given\nsummary: S\ncreated: 2024-01-02\nupdated: 1791512156858\n\
             load_when: 部署，deploy , ci\ntags: [a, b]\npinned: true\nsupersedes: facts/old\n---\n# H\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(m.title, "Given");
        assert_eq!(m.created, 1_704_153_600_000);
        assert_eq!(m.updated, 1_791_512_156_858);
        assert_eq!(m.load_when, ["部署", "deploy", "ci"]);
        assert_eq!(m.tags, ["a", "b"]);
        assert!(m.pinned);
        assert_eq!(m.supersedes.as_deref(), Some("facts/old.md"));
    }

    #[test]
    fn wrong_shapes_are_reported_and_defaulted() {
        let (m, problems) =
            memory("facts/x", "---\ncreated: soon\npinned: maybe\nsummary: {a: 1}\n---\nbody\n");
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(m.created, 42);
        assert!(!m.pinned);
        assert_eq!(m.summary, "body");
    }
}
