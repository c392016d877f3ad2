//! `mem remember`: create or update one memory.
//!
//! An update rewrites only the frontmatter keys it was given (unknown keys
//! keep their place), keeps `created`, sets `updated`, and saves the previous
//! text under `.history/` first. A body is replaced only when one is given.

use std::io::Read;
use std::path::PathBuf;

use serde::Serialize;
use yaml_serde::Value;

use crate::commands::compile::refresh;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::frontmatter::Document;
use crate::memory::date_ms;
use crate::output::Style;
use crate::relpath::RelPath;
use crate::roots::{Root, Scope};
use crate::write::{save_history, write_atomic};

const EXAMPLES: &str = "\
Examples:
  mem remember rules/deploy-pnpm \"部署脚本用 pnpm 而不是 npm\" --load-when 部署 --pin
  mem remember decisions/orm \"We use Drizzle\" --kind decision --supersedes decisions/prisma
  git log -1 --format=%B | mem remember facts/last-release -
  mem remember facts/node-version --summary \"Node 22 everywhere\"   (update one field)";

/// Create or update a memory.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The memory, as <category>/<slug>
    pub path: String,
    /// The Markdown body; `-` reads it from stdin. On update, omit it to keep the body
    pub body: Option<String>,
    /// Display title (default: the body's first heading)
    #[arg(long)]
    pub title: Option<String>,
    /// One-line summary (default: the body's first paragraph)
    #[arg(long)]
    pub summary: Option<String>,
    /// The key point, one line
    #[arg(long)]
    pub highlight: Option<String>,
    /// fact, rule, decision, preference, pitfall, lesson, reference, …
    #[arg(long)]
    pub kind: Option<String>,
    /// A phrase that should pull this memory in (repeatable; replaces the list)
    #[arg(long = "load-when", value_name = "PHRASE")]
    pub load_when: Vec<String>,
    /// A tag (repeatable, or comma-separated; replaces the list)
    #[arg(long = "tag", alias = "tags", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Always show this memory first
    #[arg(long, conflicts_with = "unpin")]
    pub pin: bool,
    /// Stop pinning this memory
    #[arg(long)]
    pub unpin: bool,
    /// Make the memory private to one agent role
    #[arg(long)]
    pub role: Option<String>,
    /// The older memory this one replaces (it gets `superseded_by`)
    #[arg(long, value_name = "CATEGORY/SLUG")]
    pub supersedes: Option<String>,
}

/// What remember did.
#[derive(Debug, Serialize)]
pub struct Report {
    pub action: Action,
    pub path: String,
    pub scope: Scope,
    pub file: PathBuf,
    /// Where the previous version was saved, on update.
    pub history: Option<PathBuf>,
    /// The memory this one supersedes, now marked `superseded_by`.
    pub superseded: Option<String>,
    /// Generated files rewritten by the recompile that follows a write.
    pub compiled: Vec<String>,
    pub warnings: Vec<String>,
}

/// Created, updated, or nothing to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Updated,
    Unchanged,
}

/// Create or update the memory.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let root = ctx.write_root()?;
    let file = rel.under(&root.dir);
    let body = read_body(args.body.as_deref())?;
    let old = resolve_supersedes(ctx, args, &rel)?;
    let mut warnings = Vec::new();
    let previous = read_existing(&file)?;
    let (action, history) = match previous {
        Some((text, doc)) => update(ctx, root, &rel, args, body, text, doc)?,
        None => {
            create(ctx, root, &rel, args, body)?;
            (Action::Created, None)
        }
    };
    if action == Action::Created && ctx.roots.global.dir != root.dir {
        let global = rel.under(&ctx.roots.global.dir);
        if global.is_file() {
            warnings.push(format!("this project memory now shadows the global {rel}"));
        }
    }
    let superseded = match old {
        Some((old_root, old_rel)) => Some(mark_superseded(old_root, &old_rel, &rel)?),
        None => None,
    };
    let mut compiled = Vec::new();
    if action != Action::Unchanged {
        let (changed, notes) = refresh(root)?;
        compiled = changed;
        warnings.extend(notes);
        if let Some(old) = &superseded
            && let Some((old_root, _)) = ctx.locate(&RelPath::parse(old)?)?
            && old_root.dir != root.dir
        {
            let (changed, notes) = refresh(old_root)?;
            compiled.extend(changed);
            warnings.extend(notes);
        }
    }
    Ok(Report {
        action,
        path: rel.file(),
        scope: root.scope,
        file,
        history,
        superseded,
        compiled,
        warnings,
    })
}

fn read_body(arg: Option<&str>) -> Result<Option<String>> {
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
fn read_existing(file: &std::path::Path) -> Result<Option<(String, Document)>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(file, e)),
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::input(format!("{} is not valid UTF-8; it was left as it is", file.display()))
    })?;
    let doc = Document::parse(&text).map_err(|e| {
        Error::input(format!("{}:{}: {}", file.display(), e.line, e.message))
            .hint("fix the frontmatter by hand; mem does not rewrite a file it cannot read")
    })?;
    Ok(Some((text, doc)))
}

fn create(
    ctx: &Context,
    root: &Root,
    rel: &RelPath,
    args: &Args,
    body: Option<String>,
) -> Result<()> {
    let body = body.filter(|b| !b.trim().is_empty());
    if body.is_none() && args.summary.is_none() {
        return Err(Error::input(format!("nothing to remember for {rel}"))
            .hint("give the text as BODY, `-` to read stdin, or at least --summary"));
    }
    let mut doc = Document::new(body.unwrap_or_default());
    doc.set("id", rel.file());
    apply_lines(&mut doc, args);
    doc.set("created", ctx.now_ms);
    doc.set("updated", ctx.now_ms);
    apply_lists(&mut doc, args);
    write_atomic(&root.dir, &rel.under(&root.dir), doc.render().as_bytes())
}

fn update(
    ctx: &Context,
    root: &Root,
    rel: &RelPath,
    args: &Args,
    body: Option<String>,
    text: String,
    mut doc: Document,
) -> Result<(Action, Option<PathBuf>)> {
    let before = doc.clone();
    if let Some(body) = body {
        doc.body = body;
    }
    apply_lines(&mut doc, args);
    apply_lists(&mut doc, args);
    if doc == before {
        return Ok((Action::Unchanged, None));
    }
    let file = rel.under(&root.dir);
    let previous_updated = previous_updated(&before, &file);
    let history = save_history(&root.dir, rel, previous_updated, text.as_bytes())?;
    if !doc.meta.contains_key("created") {
        doc.set("created", previous_updated);
    }
    doc.set("updated", ctx.now_ms.max(previous_updated));
    write_atomic(&root.dir, &file, doc.render().as_bytes())?;
    Ok((Action::Updated, Some(history)))
}

/// The `updated` time of a version, falling back to the file's mtime.
fn previous_updated(doc: &Document, file: &std::path::Path) -> i64 {
    let mtime =
        std::fs::metadata(file).and_then(|m| m.modified()).map(crate::time::epoch_ms).unwrap_or(0);
    doc.meta.get("updated").and_then(date_ms).unwrap_or(mtime)
}

/// Set the one-line keys the flags name (these come before the dates).
fn apply_lines(doc: &mut Document, args: &Args) {
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
}

/// Set the list and link keys the flags name (these come after the dates).
fn apply_lists(doc: &mut Document, args: &Args) {
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

fn list(items: &[String]) -> Value {
    let items = items.iter().map(|s| s.trim()).filter(|s| !s.is_empty());
    Value::Sequence(items.map(|s| Value::String(s.to_string())).collect())
}

/// Check `--supersedes` names another live memory; returns its root and path.
fn resolve_supersedes<'a>(
    ctx: &'a Context,
    args: &Args,
    rel: &RelPath,
) -> Result<Option<(&'a Root, RelPath)>> {
    let Some(arg) = &args.supersedes else { return Ok(None) };
    let old = RelPath::parse(arg)?;
    if &old == rel {
        return Err(Error::input(format!("{rel} cannot supersede itself"))
            .hint("name the older memory this one replaces"));
    }
    match ctx.locate(&old)? {
        Some((root, _)) => Ok(Some((root, old))),
        None => Err(Error::input(format!("--supersedes {old}: no such memory"))
            .hint("check the path with `mem list`")),
    }
}

/// Set `superseded_by` on the old memory, saving its previous text first.
fn mark_superseded(root: &Root, old: &RelPath, new: &RelPath) -> Result<String> {
    let file = old.under(&root.dir);
    let Some((text, mut doc)) = read_existing(&file)? else {
        return Err(Error::not_found(format!("{old} disappeared while it was being updated")));
    };
    if doc.get_str("superseded_by") != Some(new.file().as_str()) {
        let updated = previous_updated(&doc, &file);
        save_history(&root.dir, old, updated, text.as_bytes())?;
        doc.set("superseded_by", new.file());
        write_atomic(&root.dir, &file, doc.render().as_bytes())?;
    }
    Ok(old.file())
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let verb = match self.action {
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Unchanged => "unchanged",
        };
        let mut out = format!("{verb} {} {}\n", self.scope.name(), style.path(&self.path));
        out.push_str(&format!("  file: {}\n", self.file.display()));
        if let Some(h) = &self.history {
            out.push_str(&format!("  previous version saved: {}\n", h.display()));
        }
        if let Some(old) = &self.superseded {
            out.push_str(&format!("  supersedes {old} (kept on disk, no longer ranked)\n"));
        }
        if !self.compiled.is_empty() {
            out.push_str(&format!("  recompiled: {}\n", self.compiled.join(", ")));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
