//! What a listing calls a memory: its title when it has one, else the
//! first clause of its summary, never its slug a second time beside its
//! path; and whether the summary has anything left to say after that.

use super::Memory;

impl Memory {
    /// The memory has a title of its own (a `title` key or a heading), not
    /// its slug standing in for one.
    pub fn has_title(&self) -> bool {
        !self.title.trim().is_empty() && self.title != self.path.slug
    }

    /// The name a listing shows: the title, else the summary's first
    /// clause, else the slug.
    pub fn label(&self) -> String {
        if self.has_title() {
            return self.title.clone();
        }
        match first_clause(&self.summary) {
            "" => self.path.slug.clone(),
            clause => clause.to_string(),
        }
    }

    /// What the summary says beyond the label: all of it under a title of
    /// its own (unless it repeats the title), the rest of it after the
    /// first clause that stands in for a title; `None` when nothing is left.
    pub fn summary_beyond_label(&self) -> Option<&str> {
        let summary = self.summary.trim();
        let rest = if self.has_title() {
            (summary != self.title.trim()).then_some(summary)
        } else {
            summary
                .strip_prefix(first_clause(summary))
                .map(|r| r.trim_start_matches([';', '；']).trim())
        };
        rest.filter(|r| !r.is_empty())
    }
}

/// `text` up to the end of its first clause: a `.`, `;`, `!` or `?`
/// followed by a space (so `v1.2` and `a.b()` stay whole), or a CJK
/// full stop, semicolon, exclamation or question mark.
pub fn first_clause(text: &str) -> &str {
    let text = text.trim();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '。' | '；' | '！' | '？' => true,
            '.' | ';' | '!' | '?' => chars.peek().is_none_or(|&(_, n)| n.is_whitespace()),
            _ => false,
        };
        if end {
            let keep = if matches!(c, ';' | '；') { i } else { i + c.len_utf8() };
            return text[..keep].trim_end();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::first_clause;
    use crate::model::frontmatter::Document;
    use crate::model::memory::Memory;
    use crate::model::relpath::RelPath;
    use crate::model::roots::Scope;

    fn memory(text: &str) -> Memory {
        let doc = Document::parse(text).unwrap();
        Memory::from_document(RelPath::parse("facts/node").unwrap(), Scope::Project, &doc, 0).0
    }

    #[test]
    fn a_memory_without_a_title_is_named_by_its_first_clause_never_its_slug() {
        let m = memory("Node 22 everywhere. CI too.\n");
        assert_eq!(
            (m.label().as_str(), m.summary_beyond_label()),
            ("Node 22 everywhere.", Some("CI too."))
        );
        let m = memory("Node 22 everywhere\n");
        assert_eq!((m.label().as_str(), m.summary_beyond_label()), ("Node 22 everywhere", None));
        let m = memory("# Node\n\nNode 22 everywhere.\n");
        assert_eq!(
            (m.label().as_str(), m.summary_beyond_label()),
            ("Node", Some("Node 22 everywhere."))
        );
        let m = memory("---\ntitle: Same\nsummary: Same\n---\n");
        assert_eq!((m.label().as_str(), m.summary_beyond_label()), ("Same", None));
        let m = memory("---\nkind: fact\n---\n");
        assert_eq!(m.label(), "node");
    }

    #[test]
    fn the_first_clause_ends_at_a_sentence_or_clause_mark() {
        assert_eq!(first_clause("Node 22 everywhere. CI too."), "Node 22 everywhere.");
        assert_eq!(first_clause("Use v1.2 of a.b() here; not v1.1"), "Use v1.2 of a.b() here");
        assert_eq!(first_clause("部署脚本用 pnpm。npm 会装出不同版本"), "部署脚本用 pnpm。");
        assert_eq!(first_clause("Ports: 8080 and 8443"), "Ports: 8080 and 8443");
        assert_eq!(first_clause("no mark at all"), "no mark at all");
        assert_eq!(first_clause(""), "");
    }
}
