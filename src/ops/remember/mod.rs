//! Remember: create or update one memory.
//!
//! An update rewrites only the frontmatter keys it was given (unknown keys
//! keep their place), keeps `created`, sets `updated`, and saves the previous
//! text under `.history/` first. A body is replaced only when one is given.

mod checks;
mod draft;
mod options;

use draft::{draft_create, draft_update, previous_updated, read_body, read_existing, session};
pub use options::Options;

use checks::{
    after_write, manifest, near_duplicates, refuse_secrets, refuse_unreadable, resident_warning,
    root_memories,
};
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::cache::{self};
use crate::guard::quality;
use crate::model::frontmatter::Document;
use crate::model::memory::{Memory, truncate};
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::compile::{refresh, refresh_listed};
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{save_history, write_atomic};

/// What remember did.
#[derive(Debug, Serialize)]
pub struct Report {
    pub action: Action,
    pub path: String,
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    pub file: PathBuf,
    /// Where the previous version was saved, on update (`history_file` in
    /// JSON: `history` is a list of versions elsewhere).
    #[serde(rename = "history_file")]
    pub history: Option<PathBuf>,
    /// The memory this one supersedes, now marked `superseded_by`.
    pub superseded: Option<String>,
    /// Generated files rewritten by the recompile that follows a write.
    pub compiled: Vec<String>,
    /// The category after the write, (file, summary) per memory: the one
    /// written and the most recently updated others.
    /// As `{"path", "summary"}`.
    #[serde(serialize_with = "path_summary")]
    pub manifest: Vec<(String, String)>,
    /// Memories of the category not in `manifest`.
    pub manifest_more: usize,
    /// What the write changed besides the memory: a category it made, a
    /// memory that became or stopped being a hard rule.
    pub notes: Vec<String>,
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
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    // What the reply may name: everything, or for an agent what its role sees.
    let may_name =
        |m: &Memory| !args.as_agent || crate::ops::visibility::visible_to(m, ctx.role.as_ref());
    let rel = RelPath::parse(&args.path)?;
    let session = session(args)?;
    let root = ctx.write_root()?;
    let file = rel.under(&root.dir);
    let body = read_body(args.body.as_deref())?;
    let old = resolve_supersedes(ctx, args, &rel)?;
    // Held from the read to the last write: a memory created or changed
    // meanwhile is read here, and this write applies on top of it.
    let locked: Vec<&Root> = std::iter::once(root).chain(old.as_ref().map(|(r, _)| *r)).collect();
    let _locks = crate::ops::writing::writing_all(&locked)?;
    let previous = read_existing(root, &file)?;
    if previous.is_none() {
        refuse_new_name(&rel, root)?;
    }
    let given_text = body.is_some() || args.summary.is_some();
    let draft = match &previous {
        Some((_, doc)) => draft_update(ctx, doc, args, body, &file, session.as_deref()),
        None => Some(draft_create(ctx, &rel, args, body, session.as_deref())?),
    };
    let mut notes = Vec::new();
    if previous.is_none() {
        notes.extend(crate::ops::naming::new_category(ctx, root, &rel, args.new_category)?);
    }
    // What is there before the write: the index of every root (to find
    // near-duplicates by ranking, not by reading every file) and the
    // written root's memories as their frontmatter says.
    let roots = ctx.read_roots()?;
    let lib = cache::index_all(&roots);
    let mark = match &old {
        Some((old_root, old_rel)) => Some(prepare_supersede(old_root, old_rel, &rel)?),
        None => None,
    };
    let before = root_memories(&lib, root);
    let mut warnings = Vec::new();
    let mut history = None;
    let action = match &draft {
        None => Action::Unchanged,
        Some(doc) => {
            let text = rendered(previous.as_ref(), doc);
            refuse_unreadable(&rel, &text)?;
            refuse_secrets(&rel, &text, args.allow_secret)?;
            let memory = Memory::from_document(rel.clone(), root.scope, doc, ctx.now_ms).0;
            if given_text {
                warnings.extend(quality_warnings(&memory));
            }
            warnings.extend(near_duplicates(&lib, &roots, &memory, ctx.now_ms, &may_name));
            if let Some((old_text, old_doc)) = &previous {
                let was = crate::ops::naming::is_rule(&rel, old_text);
                notes.extend(crate::ops::naming::rule_change(&rel, was, memory.is_rule()));
                let at = previous_updated(old_doc, &file);
                history = Some(save_history(&root.dir, &rel, at, old_text.as_bytes())?);
            }
            write_atomic(&root.dir, &file, text.as_bytes())?;
            let old = previous.as_ref().map(|(t, _)| t.as_bytes());
            crate::store::trust::wrote(&ctx.roots.global.dir, root, &rel, old, text.as_bytes());
            if previous.is_some() { Action::Updated } else { Action::Created }
        }
    };
    if action == Action::Created {
        warnings.extend(shadows_global(ctx, root, &rel));
    }
    let superseded = match mark {
        Some(mark) => Some(mark.commit(ctx)?),
        None => None,
    };
    let (mut compiled, mut listed) = (Vec::new(), None);
    if action != Action::Unchanged {
        (compiled, listed) = recompile(ctx, root, superseded.as_deref(), &mut warnings)
            .map_err(|e| e.after(&format!("{rel} is saved"), "run `mem compile`"))?;
    }
    let after = after_write(before, root.scope, &rel, draft.as_ref(), ctx.now_ms);
    let (manifest, manifest_more) = manifest(&after, &rel, &may_name);
    warnings.extend(resident_warning(&after, root.scope));
    // For the person at the keyboard: an agent is never told the names of
    // files the user has not trusted.
    if !args.as_agent {
        warnings.extend(crate::ops::visibility::held_back_warning(ctx, listed.as_deref(), true));
    }
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
        notes,
        warnings,
    })
}

/// The file's new text: only the lines of the keys that changed, the rest
/// as the person wrote it; a new memory rendered whole.
fn rendered(previous: Option<&(String, Document)>, doc: &Document) -> String {
    match previous {
        Some((old_text, old_doc)) => {
            crate::model::frontmatter::edit::render_over(old_text, old_doc, doc)
        }
        None => doc.render(),
    }
}

/// A new project memory at the path of a global one hides it: said.
fn shadows_global(ctx: &Context, root: &Root, rel: &RelPath) -> Option<String> {
    let global = rel.under(&ctx.roots.global.dir);
    (ctx.roots.global.dir != root.dir && global.is_file())
        .then(|| format!("this project memory now shadows the global {rel}"))
}

/// A new memory's name must check out everywhere, and not differ from
/// another only in case.
fn refuse_new_name(rel: &RelPath, root: &Root) -> Result<()> {
    rel.check_portable()?;
    let twins =
        crate::model::relpath::case_twins(&rel.under(&root.dir).with_file_name(""), &rel.slug);
    if let Some(twin) = twins.first() {
        return Err(Error::input(format!(
            "{rel}: {}/{twin} differs only in case; on Windows and macOS they are one file",
            rel.category
        ))
        .hint(format!("update {}/{twin} instead, or pick another name", rel.category)));
    }
    Ok(())
}

/// What the quality check says of the text given. A summary derived from
/// the body is the body's own text: counted once, not twice.
fn quality_warnings(memory: &Memory) -> Vec<String> {
    let text = match memory.summary_derived {
        true => memory.body.clone(),
        false => format!("{}\n{}", memory.summary, memory.body),
    };
    quality::check(&text)
}

/// Recompile the written root, and the root of the memory it superseded
/// when that is another; returns what was written and, for the project
/// root, its files as the recompile listed them.
fn recompile(
    ctx: &Context,
    root: &Root,
    superseded: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<(Vec<String>, Option<Vec<crate::store::scan::Listing>>)> {
    let (mut compiled, notes, listings) = refresh_listed(root)?;
    let listed = (root.scope == Scope::Project).then_some(listings);
    warnings.extend(notes);
    if let Some(old) = superseded
        && let Some((old_root, _)) = ctx.locate(&RelPath::parse(old)?)?
        && old_root.dir != root.dir
    {
        let (changed, notes) = refresh(old_root)?;
        compiled.extend(changed);
        warnings.extend(notes);
    }
    Ok((compiled, listed))
}

/// Check `--supersedes` names another live memory; returns its root and path.
fn resolve_supersedes<'a>(
    ctx: &'a Context,
    args: &Options,
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

/// `superseded_by` on the old memory, written beside it (its previous text
/// saved first) and put in place by [`Supersede::commit`]: prepared before
/// the new memory is written, so a full disk stops both or neither.
struct Supersede<'a> {
    root: &'a Root,
    old: RelPath,
    /// Its text and the new one, and the new one staged; `None` when it
    /// already names the new memory.
    change: Option<(String, String, crate::store::write::Staged)>,
}

fn prepare_supersede<'a>(root: &'a Root, old: &RelPath, new: &RelPath) -> Result<Supersede<'a>> {
    let file = old.under(&root.dir);
    let Some((text, mut doc)) = read_existing(root, &file)? else {
        return Err(Error::not_found(format!("{old} disappeared while it was being updated")));
    };
    let mut change = None;
    if doc.get_str("superseded_by") != Some(new.file().as_str()) {
        let before = doc.clone();
        doc.set("superseded_by", new.file());
        let rendered = crate::model::frontmatter::edit::render_over(&text, &before, &doc);
        let staged = crate::store::write::stage_atomic(&root.dir, &file, rendered.as_bytes())?;
        save_history(&root.dir, old, previous_updated(&before, &file), text.as_bytes())?;
        change = Some((text, rendered, staged));
    }
    Ok(Supersede { root, old: old.clone(), change })
}

impl Supersede<'_> {
    /// Put the mark in place (a rename); the old memory's path.
    fn commit(self, ctx: &Context) -> Result<String> {
        if let Some((text, rendered, staged)) = self.change {
            staged.commit()?;
            let global = &ctx.roots.global.dir;
            crate::store::trust::wrote(
                global,
                self.root,
                &self.old,
                Some(text.as_bytes()),
                rendered.as_bytes(),
            );
        }
        Ok(self.old.file())
    }
}

fn path_summary<S: serde::Serializer>(
    list: &[(String, String)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::output::named_pairs(list, ["path", "summary"], s)
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
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
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
