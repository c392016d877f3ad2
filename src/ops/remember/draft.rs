//! The memory a `mem remember` writes: the body it was given, a new file's
//! frontmatter, or an update of only the keys it was given.

use std::io::Read;

use yaml_serde::Value;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::memory::{date_ms, date_value};
use crate::model::relpath::RelPath;
use crate::model::roots::Root;
use crate::settings::Context;

use super::options::Options;

pub(super) fn read_body(arg: Option<&str>) -> Result<Option<String>> {
    let mut body = match arg {
        None => return Ok(None),
        Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Error::input(format!("cannot read the body from stdin: {e}")))?;
            String::from_utf8(buf)
                .map_err(|_| Error::input("the body on stdin is not valid UTF-8"))?
        }
        Some(text) => text.to_string(),
    };
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    Ok(Some(body))
}

/// The file's text and parsed form, or None when it does not exist.
pub(super) fn read_existing(
    root: &Root,
    file: &std::path::Path,
) -> Result<Option<(String, Document)>> {
    let Some(text) = crate::store::files::text(&root.dir, file)? else { return Ok(None) };
    let doc = Document::parse(&text).map_err(|e| {
        Error::input(format!("{}:{}: {}", file.display(), e.line, e.message))
            .about(file)
            .hint("fix the frontmatter by hand; mem does not rewrite a file it cannot read")
    })?;
    Ok(Some((text, doc)))
}

/// The document of a new memory.
pub(super) fn draft_create(
    ctx: &Context,
    rel: &RelPath,
    args: &Options,
    body: Option<String>,
    session: Option<&str>,
) -> Result<Document> {
    let body = body.filter(|b| !b.trim().is_empty());
    if body.is_none() {
        let fields =
            [&args.title, &args.summary, &args.highlight, &args.kind, &args.role, &args.supersedes];
        let flags = fields.iter().any(|f| f.is_some())
            || args.relevance.is_some()
            || !args.load_when.is_empty()
            || !args.tags.is_empty()
            || args.pin
            || args.unpin;
        // Flags alone update a memory; with no memory there, they would
        // make an empty one nobody asked for.
        return Err(match flags {
            true => Error::input(format!("{rel}: no such memory to update")).hint(
                match crate::ops::naming::nearest_memories(ctx, rel, args.as_agent) {
                    Some(ask) => format!("{ask} To create {rel}, give its text as BODY (or `-`)"),
                    None => "give its text as BODY (or `-` to read stdin) to create it; `mem list` shows what exists".to_string(),
                },
            ),
            false => Error::input(format!("nothing to remember for {rel}"))
                .hint("give the text as BODY, or `-` to read stdin"),
        });
    }
    let mut doc = Document::new(body.unwrap_or_default());
    doc.set("id", rel.file());
    apply_lines(&mut doc, args);
    doc.set("created", date_value(None, ctx.now_ms));
    doc.set("updated", date_value(None, ctx.now_ms));
    apply_lists(&mut doc, args);
    apply_session(&mut doc, session);
    Ok(doc)
}

/// The updated document, or None when nothing would change.
pub(super) fn draft_update(
    ctx: &Context,
    before: &Document,
    args: &Options,
    body: Option<String>,
    file: &std::path::Path,
    session: Option<&str>,
) -> Option<Document> {
    let mut doc = before.clone();
    if let Some(body) = body {
        doc.body = body;
    }
    apply_lines(&mut doc, args);
    apply_lists(&mut doc, args);
    apply_session(&mut doc, session);
    if &doc == before {
        return None;
    }
    let previous = previous_updated(before, file);
    // Written as the file already writes it: epoch ms stay epoch ms, an
    // ISO date keeps its precision and offset.
    let form = before.meta.get("updated").or_else(|| before.meta.get("created"));
    if !doc.meta.contains_key("created") {
        doc.set("created", date_value(form, previous));
    }
    doc.set("updated", date_value(form, ctx.now_ms.max(previous)));
    Some(doc)
}

/// The `updated` time of a version, falling back to the file's mtime.
pub(super) fn previous_updated(doc: &Document, file: &std::path::Path) -> i64 {
    let mtime = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .map(crate::base::time::epoch_ms)
        .unwrap_or(0);
    doc.meta.get("updated").and_then(date_ms).unwrap_or(mtime)
}

/// Set the one-line keys the flags name (these come before the dates).
pub(super) fn apply_lines(doc: &mut Document, args: &Options) {
    let text_flags = [
        ("title", &args.title),
        ("kind", &args.kind),
        ("summary", &args.summary),
        ("highlight", &args.highlight),
    ];
    for (key, value) in text_flags {
        if let Some(v) = value {
            doc.set(key, v.trim());
        }
    }
    if let Some(level) = args.relevance {
        doc.set("relevance", level.name());
    }
}

/// Add `session` to `source_sessions`, once, after the ids already there
/// (a value that is not a list is left as it is: lint names it).
pub(super) fn apply_session(doc: &mut Document, session: Option<&str>) {
    let Some(id) = session else { return };
    let mut ids = match doc.meta.get("source_sessions").filter(|v| !v.is_null()) {
        None => Vec::new(),
        Some(v) => match crate::model::memory::string_list(v) {
            Some(ids) => ids,
            None => return,
        },
    };
    if !ids.iter().any(|s| s == id) {
        ids.push(id.to_string());
        doc.set("source_sessions", list(&ids));
    }
}

/// The session a write is made in: `--session`, else `$MEM_SESSION`
/// (empty: none); one that cannot name a session is refused.
pub(super) fn session(args: &Options) -> Result<Option<String>> {
    let (id, from) = match &args.session {
        Some(id) => (id.trim().to_string(), "--session".to_string()),
        None => match std::env::var("MEM_SESSION") {
            Ok(id) if !id.trim().is_empty() => (id.trim().to_string(), "MEM_SESSION".to_string()),
            _ => return Ok(None),
        },
    };
    if crate::store::session::valid_id(&id) {
        return Ok(Some(id));
    }
    let shown = crate::base::text::terminal_safe(&crate::model::memory::truncate(&id, 40), false)
        .into_owned();
    Err(Error::input(format!("{from} `{shown}` is not a session id"))
        .hint(format!("a session id is {}", crate::store::session::ID_RULE)))
}

/// Set the list and link keys the flags name (these come after the dates).
pub(super) fn apply_lists(doc: &mut Document, args: &Options) {
    if !args.load_when.is_empty() {
        doc.set("load_when", list(&args.load_when));
    }
    if args.pin {
        doc.set("pinned", true);
    } else if args.unpin {
        doc.remove("pinned");
    }
    if !args.tags.is_empty() {
        doc.set("tags", list(&args.tags));
    }
    if let Some(role) = &args.role {
        doc.set("role", role.trim());
    }
    if let Some(old) = &args.supersedes
        && let Ok(old) = RelPath::parse(old)
    {
        doc.set("supersedes", old.file());
    }
}

pub(super) fn list(items: &[String]) -> Value {
    let items = items.iter().map(|s| s.trim()).filter(|s| !s.is_empty());
    Value::Sequence(items.map(|s| Value::String(s.to_string())).collect())
}
