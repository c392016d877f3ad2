//! `mem remember`: create or update one memory.
//!
//! An update rewrites only the frontmatter keys it was given (unknown keys
//! keep their place), keeps `created`, sets `updated`, and saves the previous
//! text under `.history/` first. A body is replaced only when one is given.

use std::io::Read;
use std::path::PathBuf;

use serde::Serialize;
use yaml_serde::Value;

use crate::base::error::{Error, Result};
use crate::base::secrets;
use crate::commands::compile::refresh;
use crate::context::Context;
use crate::frontmatter::Document;
use crate::guard::{DUPLICATE_THRESHOLD, bigrams, jaccard, quality};
use crate::index::{self, Library};
use crate::memory::{Memory, date_ms, truncate};
use crate::output::Style;
use crate::rank::score::{Memories, Params, Request, rank};
use crate::relpath::RelPath;
use crate::roots::{Root, Scope};
use crate::scan;
use crate::write::{save_history, write_atomic};

/// The default context budget, in estimated tokens.
pub const DEFAULT_BUDGET: usize = 2000;

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
    /// The memory, as CATEGORY/SLUG
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
    /// Save even though the text looks like it holds a credential
    #[arg(long)]
    pub allow_secret: bool,
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
    /// The category after the write, (file, summary) per memory: the one
    /// written and the most recently updated others.
    pub manifest: Vec<(String, String)>,
    /// Memories of the category not in `manifest`.
    pub manifest_more: usize,
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
    // Held from the read to the last write: a memory created or changed
    // meanwhile is read here, and this write applies on top of it.
    let locked: Vec<&Root> = std::iter::once(root).chain(old.as_ref().map(|(r, _)| *r)).collect();
    let _locks = crate::write::lock_roots(&locked)?;
    let previous = read_existing(root, &file)?;
    if previous.is_none() {
        rel.check_portable()?;
        let twins = crate::relpath::case_twins(&rel.under(&root.dir).with_file_name(""), &rel.slug);
        if let Some(twin) = twins.first() {
            return Err(Error::input(format!(
                "{rel}: {}/{twin} differs only in case; on Windows and macOS they are one file",
                rel.category
            ))
            .hint(format!("update {}/{twin} instead, or pick another name", rel.category)));
        }
    }
    let given_text = body.is_some() || args.summary.is_some();
    let draft = match &previous {
        Some((_, doc)) => draft_update(ctx, doc, args, body, &file),
        None => Some(draft_create(ctx, &rel, args, body)?),
    };
    // What is there before the write: the index of every root (to find
    // near-duplicates by ranking, not by reading every file) and the
    // written root's memories as their frontmatter says.
    let roots = ctx.read_roots()?;
    let lib = index::index_all(&roots);
    let before = root_memories(&lib, root);
    let mut warnings = Vec::new();
    let mut history = None;
    let action = match &draft {
        None => Action::Unchanged,
        Some(doc) => {
            // Only the lines of the keys that changed: the rest of the file
            // stays as the person wrote it.
            let text = match &previous {
                Some((old_text, old_doc)) => {
                    crate::frontmatter::edit::render_over(old_text, old_doc, doc)
                }
                None => doc.render(),
            };
            refuse_unreadable(&rel, &text)?;
            refuse_secrets(&rel, &text, args.allow_secret)?;
            let memory = Memory::from_document(rel.clone(), root.scope, doc, ctx.now_ms).0;
            if given_text {
                warnings.extend(quality::check(&format!("{}\n{}", memory.summary, memory.body)));
            }
            warnings.extend(near_duplicates(&lib, &roots, &memory, ctx.now_ms));
            if let Some((old_text, old_doc)) = &previous {
                let at = previous_updated(old_doc, &file);
                history = Some(save_history(&root.dir, &rel, at, old_text.as_bytes())?);
            }
            write_atomic(&root.dir, &file, text.as_bytes())?;
            let old = previous.as_ref().map(|(t, _)| t.as_bytes());
            crate::trust::wrote(&ctx.roots.global.dir, root, &rel, old, text.as_bytes());
            if previous.is_some() { Action::Updated } else { Action::Created }
        }
    };
    if action == Action::Created && ctx.roots.global.dir != root.dir {
        let global = rel.under(&ctx.roots.global.dir);
        if global.is_file() {
            warnings.push(format!("this project memory now shadows the global {rel}"));
        }
    }
    let superseded = match old {
        Some((old_root, old_rel)) => Some(mark_superseded(ctx, old_root, &old_rel, &rel)?),
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
    let after = after_write(before, root.scope, &rel, draft.as_ref(), ctx.now_ms);
    let (manifest, manifest_more) = manifest(&after, &rel);
    warnings.extend(resident_warning(&after, root.scope));
    Ok(Report {
        action,
        path: rel.file(),
        scope: root.scope,
        file,
        history,
        superseded,
        compiled,
        manifest,
        manifest_more,
        warnings,
    })
}

/// Refuse a memory that no command could read back.
fn refuse_unreadable(rel: &RelPath, text: &str) -> Result<()> {
    if text.len() as u64 > scan::MAX_FILE_BYTES {
        return Err(Error::input(format!(
            "{rel}: the memory would be {} KiB, over the 1 MiB limit every command reads",
            text.len().div_ceil(1024)
        ))
        .hint("keep a memory short; link to a document in the repository for the details"));
    }
    Document::parse(text).map(drop).map_err(|e| {
        Error::input(format!("{rel}: {}", e.message)).hint("shorten the fields given as flags")
    })
}

/// Refuse text that looks like it holds a credential.
fn refuse_secrets(rel: &RelPath, text: &str, allowed: bool) -> Result<()> {
    let Some(found) = secrets::scan(text).into_iter().next() else { return Ok(()) };
    if allowed {
        return Ok(());
    }
    Err(Error::input(format!(
        "{rel}:{}: this looks like {}; mem does not save credentials (project memory is committed to git)",
        found.line, found.what
    ))
    .hint("remove it and say where the secret lives instead, or pass --allow-secret if it is not one"))
}

/// How many of the memories that rank best for a new memory's text are
/// compared with it: a near-duplicate shares most of its words, so it ranks
/// near the top.
const DUPLICATE_CANDIDATES: usize = 50;

/// Live memories of either root whose text is nearly the same as `memory`'s:
/// the best-ranked ones for its text, read and compared.
fn near_duplicates(lib: &Library, roots: &[&Root], memory: &Memory, now_ms: i64) -> Vec<String> {
    let text = memory_text(memory);
    let filter = |_, m: &Memory| m.path != memory.path && !m.is_superseded();
    let request = Request {
        query: &text,
        limit: DUPLICATE_CANDIDATES,
        now_ms,
        signals: &[],
        filter: &filter,
        explain: false,
    };
    let hits = rank(&lib.corpus, &lib.docs, &Params::default(), &request);
    if lib.corpus.is_damaged() || lib.docs.is_damaged() {
        // The hint is only a hint: the next run rebuilds the index.
        index::distrust(roots);
    }
    let mine = bigrams(&text);
    hits.iter()
        .filter_map(|hit| {
            let m = lib.docs.memory(hit.doc)?;
            let root = roots.iter().find(|r| r.scope == m.scope)?;
            let (full, _) = scan::load(m.scope, m.path.clone(), &m.path.under(&root.dir)).ok()?;
            let score = jaccard(&mine, &bigrams(&memory_text(&full)));
            (score >= DUPLICATE_THRESHOLD).then(|| {
                format!(
                    "nearly the same as {} {} (similarity {score:.2}): update that one, or pass --supersedes {}",
                    m.scope.name(),
                    m.file(),
                    m.file().trim_end_matches(".md")
                )
            })
        })
        .collect()
}

/// Every memory of `root` as its frontmatter says, through the index; the
/// always-resident ones (rules and pinned) with their bodies, which the
/// context budget counts.
fn root_memories(lib: &Library, root: &Root) -> Vec<Memory> {
    let mut memories =
        lib.docs.root_memories(root.scope).unwrap_or_else(|| index::scan_root(root).memories);
    for m in memories.iter_mut().filter(|m| m.is_resident()) {
        if let Ok((full, _)) = scan::load(m.scope, m.path.clone(), &m.path.under(&root.dir)) {
            m.body = full.body;
        }
    }
    memories
}

fn memory_text(m: &Memory) -> String {
    format!("{}\n{}\n{}", m.title, m.summary, m.body)
}

/// The written category after the write: (file, summary) per memory.
/// The written category after the write: (file, summary) of the memory just
/// written and the most recently updated others, at most [`MANIFEST`] rows
/// in path order, and how many more there are.
fn manifest(after: &[Memory], rel: &RelPath) -> (Vec<(String, String)>, usize) {
    let mut mine: Vec<&Memory> = after.iter().filter(|m| m.path.category == rel.category).collect();
    mine.sort_by_key(|m| (m.path != *rel, std::cmp::Reverse(m.updated), m.file()));
    let more = mine.len().saturating_sub(MANIFEST);
    let mut rows: Vec<(String, String)> =
        mine.into_iter().take(MANIFEST).map(|m| (m.file(), m.summary.clone())).collect();
    rows.sort();
    (rows, more)
}

/// Rows of the category shown after a write; a category of thousands is a
/// count, not a listing.
const MANIFEST: usize = 30;

/// A warning when the always-resident memories (rules and pinned) of the
/// written root exceed the default context budget.
fn resident_warning(after: &[Memory], scope: Scope) -> Option<String> {
    let resident: usize =
        after.iter().filter(|m| m.is_resident()).map(Memory::resident_tokens).sum();
    (resident > DEFAULT_BUDGET).then(|| {
        format!(
            "the always-resident memories (rules and pinned) of the {} root take about {resident} tokens, over the {DEFAULT_BUDGET}-token context budget: shorten them, move detail elsewhere, or unpin",
            scope.name()
        )
    })
}

/// The memories of the written root (`before` the write) as they are after it.
fn after_write(
    before: Vec<Memory>,
    scope: Scope,
    rel: &RelPath,
    draft: Option<&Document>,
    now: i64,
) -> Vec<Memory> {
    match draft {
        Some(doc) => {
            let mut out: Vec<Memory> = before.into_iter().filter(|m| &m.path != rel).collect();
            out.push(Memory::from_document(rel.clone(), scope, doc, now).0);
            out
        }
        None => before,
    }
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
fn read_existing(root: &Root, file: &std::path::Path) -> Result<Option<(String, Document)>> {
    let Some(text) = crate::files::text(&root.dir, file)? else { return Ok(None) };
    let doc = Document::parse(&text).map_err(|e| {
        Error::input(format!("{}:{}: {}", file.display(), e.line, e.message))
            .hint("fix the frontmatter by hand; mem does not rewrite a file it cannot read")
    })?;
    Ok(Some((text, doc)))
}

/// The document of a new memory.
fn draft_create(
    ctx: &Context,
    rel: &RelPath,
    args: &Args,
    body: Option<String>,
) -> Result<Document> {
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
    Ok(doc)
}

/// The updated document, or None when nothing would change.
fn draft_update(
    ctx: &Context,
    before: &Document,
    args: &Args,
    body: Option<String>,
    file: &std::path::Path,
) -> Option<Document> {
    let mut doc = before.clone();
    if let Some(body) = body {
        doc.body = body;
    }
    apply_lines(&mut doc, args);
    apply_lists(&mut doc, args);
    if &doc == before {
        return None;
    }
    let previous = previous_updated(before, file);
    if !doc.meta.contains_key("created") {
        doc.set("created", previous);
    }
    doc.set("updated", ctx.now_ms.max(previous));
    Some(doc)
}

/// The `updated` time of a version, falling back to the file's mtime.
fn previous_updated(doc: &Document, file: &std::path::Path) -> i64 {
    let mtime = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .map(crate::base::time::epoch_ms)
        .unwrap_or(0);
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
fn mark_superseded(ctx: &Context, root: &Root, old: &RelPath, new: &RelPath) -> Result<String> {
    let file = old.under(&root.dir);
    let Some((text, mut doc)) = read_existing(root, &file)? else {
        return Err(Error::not_found(format!("{old} disappeared while it was being updated")));
    };
    if doc.get_str("superseded_by") != Some(new.file().as_str()) {
        let updated = previous_updated(&doc, &file);
        save_history(&root.dir, old, updated, text.as_bytes())?;
        let before = doc.clone();
        doc.set("superseded_by", new.file());
        let rendered = crate::frontmatter::edit::render_over(&text, &before, &doc);
        write_atomic(&root.dir, &file, rendered.as_bytes())?;
        crate::trust::wrote(
            &ctx.roots.global.dir,
            root,
            old,
            Some(text.as_bytes()),
            rendered.as_bytes(),
        );
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
        if let Some(category) = self.path.split('/').next() {
            out.push_str(&format!("  {category}/ now holds:\n"));
            for (file, summary) in &self.manifest {
                let mark = if *file == self.path { "*" } else { " " };
                out.push_str(&format!(
                    "   {mark} {}  {}\n",
                    style.path(file),
                    truncate(&crate::base::text::flat(summary), 70)
                ));
            }
            if self.manifest_more > 0 {
                out.push_str(&format!(
                    "     … and {} more (`mem list --category {category}`)\n",
                    self.manifest_more
                ));
            }
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
