//! Write a changed [`Document`] back over the text it was read from,
//! touching only the lines of the keys that changed: comments, key order,
//! flow or block style, quoting, blank lines, CRLF and a BOM all stay as the
//! person wrote them. Anything this cannot do exactly falls back to a full
//! render, and the result is always checked to read back as `after`.

use yaml_serde::{Mapping, Value};

use super::{BOM, Document, fence_len, split_closing};

/// `after` written over `original` (the text `before` was parsed from).
pub fn render_over(original: &str, before: &Document, after: &Document) -> String {
    match edit(original, before, after) {
        Some(text) if reads_as(&text, after) => text,
        _ => after.render(),
    }
}

fn reads_as(text: &str, doc: &Document) -> bool {
    Document::parse(text).is_ok_and(|d| d.meta == doc.meta && d.body == doc.body)
}

fn edit(original: &str, before: &Document, after: &Document) -> Option<String> {
    if !before.fenced || after.bom != before.bom || after.newline != before.newline {
        return None;
    }
    let text = original.strip_prefix(BOM).unwrap_or(original);
    let bom = &original[..original.len() - text.len()];
    let opening = fence_len(text)?;
    let (yaml, body) = split_closing(&text[opening..])?;
    let closing_at = opening + yaml.len();
    let closing = &text[closing_at..text.len() - body.len()];
    let nl = before.newline;

    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let blocks = blocks(&lines)?;
    let mut out_lines: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match blocks.iter().find(|b| b.start == i) {
            Some(block) => {
                let key = Value::String(block.key.clone());
                let old = before.meta.get(&key);
                match after.meta.get(&key) {
                    None => {}
                    Some(new) if Some(new) == old => {
                        out_lines
                            .extend(lines[block.start..block.end].iter().map(|l| l.to_string()));
                    }
                    Some(new) => {
                        let flow =
                            lines[block.start].contains(": [") || lines[block.start].contains(":[");
                        out_lines.push(line(&block.key, new, flow, nl)?);
                    }
                }
                i = block.end;
            }
            None => {
                out_lines.push(lines[i].to_string());
                i += 1;
            }
        }
    }
    // Keys new to the file, at the end, in the order they were set.
    for (k, v) in &after.meta {
        let key = k.as_str()?;
        if !blocks.iter().any(|b| b.key == key) {
            if out_lines.last().is_some_and(|l| !l.ends_with('\n')) {
                out_lines.last_mut()?.push_str(nl);
            }
            out_lines.push(line(key, v, false, nl)?);
        }
    }
    // Every key of `before` must have been found: otherwise the lines were
    // not understood, and a full render is safer.
    if before.meta.keys().any(|k| k.as_str().is_none_or(|k| !blocks.iter().any(|b| b.key == k))) {
        return None;
    }
    let body = if after.body == before.body { body } else { after.body.as_str() };
    Some(format!("{bom}{}{}{closing}{body}", &text[..opening], out_lines.concat()))
}

/// One top-level key and the lines that hold it: `start..end`.
struct Block {
    key: String,
    start: usize,
    end: usize,
}

/// The top-level keys of frontmatter `lines`, each with its value's lines
/// (indented lines, `- ` items, and blank lines inside them). A comment or
/// blank line at the left margin after a value belongs to no key.
fn blocks(lines: &[&str]) -> Option<Vec<Block>> {
    let mut out: Vec<Block> = Vec::new();
    let continues =
        |l: &str| l.starts_with([' ', '\t']) || l.starts_with("- ") || l.trim_end() == "-";
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() || l.starts_with('#') || continues(l) {
            continue;
        }
        let key = top_key(l)?;
        let mut end = i + 1;
        while end < lines.len() {
            let next = lines[end];
            // A blank line belongs to the value when the value goes on after it.
            let blank_inside = next.trim().is_empty()
                && lines[end..].iter().find(|l| !l.trim().is_empty()).is_some_and(|l| continues(l));
            if !continues(next) && !blank_inside {
                break;
            }
            end += 1;
        }
        out.push(Block { key, start: i, end });
    }
    Some(out)
}

/// The key of a `key: value` line at the left margin (plain or quoted).
fn top_key(line: &str) -> Option<String> {
    let line = line.trim_end_matches(['\r', '\n']);
    let (key, rest) = if let Some(q) = line.strip_prefix('"') {
        let end = q.find('"')?;
        (q[..end].to_string(), &q[end + 1..])
    } else if let Some(q) = line.strip_prefix('\'') {
        let end = q.find('\'')?;
        (q[..end].to_string(), &q[end + 1..])
    } else {
        let end = line.find(':')?;
        (line[..end].trim_end().to_string(), &line[end..])
    };
    let rest = rest.trim_start();
    (rest.starts_with(':') && (rest.len() == 1 || rest[1..].starts_with([' ', '\t'])))
        .then_some(key)
}

/// `key: value` as YAML lines, flow style for a list when `flow`.
fn line(key: &str, value: &Value, flow: bool, nl: &str) -> Option<String> {
    if flow && let Value::Sequence(items) = value {
        let items: Option<Vec<String>> = items
            .iter()
            .map(|v| match v {
                Value::Sequence(_) | Value::Mapping(_) => None,
                v => yaml_serde::to_string(v).ok().map(|s| s.trim_end().to_string()),
            })
            .collect();
        let items = items?;
        if items.iter().all(|i| !i.contains(['\n', ',', '[', ']', '{', '}'])) {
            let key = yaml_serde::to_string(&Value::String(key.to_string())).ok()?;
            return Some(format!("{}: [{}]{nl}", key.trim_end(), items.join(", ")));
        }
    }
    let mut one = Mapping::new();
    one.insert(Value::String(key.to_string()), value.clone());
    let text = yaml_serde::to_string(&one).ok()?;
    Some(text.replace('\n', nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(text: &str, change: impl FnOnce(&mut Document)) -> String {
        let before = Document::parse(text).unwrap();
        let mut after = before.clone();
        change(&mut after);
        render_over(text, &before, &after)
    }

    #[test]
    fn only_the_lines_of_changed_keys_change() {
        let text = "---\r\n# who owns this\r\nkind: fact   \r\ntags: [db, ops]\r\nsummary: 'old one'\r\nload_when:\r\n  - a\r\n\r\n  - b\r\nzeta: 1 # trailing\r\n---\r\nbody\r\n";
        let out = update(text, |d| d.set("summary", "new one"));
        assert_eq!(out, text.replace("summary: 'old one'", "summary: new one"));
        let out = update(text, |d| {
            d.set("tags", Value::Sequence(vec!["db".into(), "infra".into()]));
        });
        assert_eq!(out, text.replace("tags: [db, ops]", "tags: [db, infra]"));
        let out = update(text, |d| d.set("updated", 5));
        assert_eq!(out, text.replace("---\r\nbody", "updated: 5\r\n---\r\nbody"));
        let out = update(text, |d| d.remove("load_when"));
        assert_eq!(out, text.replace("load_when:\r\n  - a\r\n\r\n  - b\r\n", ""));
    }

    #[test]
    fn a_bom_and_the_body_are_kept() {
        let text = "\u{feff}---\nkind: fact\n---\n# T\n\nbody\n";
        let out = update(text, |d| d.set("kind", "decision"));
        assert_eq!(out, "\u{feff}---\nkind: decision\n---\n# T\n\nbody\n");
        let out = update(text, |d| d.body = "new body\n".into());
        assert_eq!(out, "\u{feff}---\nkind: fact\n---\nnew body\n");
    }
}
