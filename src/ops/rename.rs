//! Rename: move a memory to another path in its root. The file moves
//! as it is (byte for byte, never over another), the memories that
//! supersede it or that it supersedes point at the new path, trust follows
//! a trusted file, its saved versions and hit counts go with it, and the
//! indexes are recompiled.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::compile::refresh;
use crate::ops::naming;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{Staged, history_dir, move_file, stage_atomic};

/// What to do (the options of [`run`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// The memory, as CATEGORY/SLUG
    pub from: String,
    /// Its new path, as CATEGORY/SLUG (in the same root)
    pub to: String,
    /// Show what would move and which memories would be relinked; change nothing
    pub dry_run: bool,
    /// Create the new path's category even though its name is close to one
    /// that exists (refused otherwise, as a likely typo)
    pub new_category: bool,
}

/// What moved.
#[derive(Debug, Serialize)]
pub struct Report {
    pub dry_run: bool,
    pub root: Scope,
    /// The memory's path before (`from_path` in JSON).
    #[serde(rename = "from_path")]
    pub from: String,
    /// Its path now (`path` in JSON, as everywhere).
    #[serde(rename = "path")]
    pub to: String,
    /// Its file now.
    pub file: std::path::PathBuf,
    /// Memories whose `supersedes` or `superseded_by` now name the new path.
    pub relinked: Vec<String>,
    pub compiled: Vec<String>,
    /// What the move changed besides the path: a category it made, a memory
    /// that became or stopped being a hard rule.
    pub notes: Vec<String>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Rename.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let (from, to) = (RelPath::parse(&args.from)?, RelPath::parse(&args.to)?);
    if from == to {
        return Err(
            Error::input(format!("{from} is already at that path")).hint("name another path")
        );
    }
    let Some((root, _)) = ctx.locate(&from)? else {
        return Err(naming::no_such_memory(ctx, &from, false));
    };
    let _lock = if args.dry_run { None } else { Some(crate::ops::writing::writing(root)?) };
    let Some((root, source)) = ctx.locate(&from)? else {
        return Err(Error::input(format!("{from}: no such memory")).hint("it was moved meanwhile"));
    };
    let target = to.under(&root.dir);
    refuse_target(&to, &target)?;
    let mut notes: Vec<String> =
        crate::ops::naming::new_category(ctx, root, &to, args.new_category)?.into_iter().collect();
    let bytes = crate::store::files::text(&root.dir, &source)?.unwrap_or_default();
    let (was, now) = (naming::is_rule(&from, &bytes), naming::is_rule(&to, &bytes));
    notes.extend(naming::rule_change(&to, was, now));
    let (old, new) = (from.file(), to.file());
    let linking = linking(root, &old, args.dry_run);
    let mut report = Report {
        dry_run: args.dry_run,
        root: root.scope,
        from: old.clone(),
        to: new.clone(),
        file: target.clone(),
        relinked: Vec::new(),
        compiled: Vec::new(),
        notes,
        warnings: Vec::new(),
    };
    if args.dry_run {
        report.relinked = linking.iter().map(|m| m.file()).collect();
        return Ok(report);
    }
    let global = &ctx.roots.global.dir;
    let moving = Moving { global, root, from: &from, to: &to, source, target, bytes };
    // Everything that needs room on the disk is written first, beside its
    // place: the moved file with its `id:` (the relative path) following it,
    // each memory that links to it with the link following, and what each
    // of those was, to put back should the recompile fail. If one cannot be
    // written, nothing has changed. What follows only renames.
    let moved = repointed(&moving.bytes, &["id"], &old, &new)
        .map(|text| -> Result<_> {
            let forth = stage_atomic(&root.dir, &moving.target, text.as_bytes())?;
            let back = stage_atomic(&root.dir, &moving.source, moving.bytes.as_bytes())?;
            Ok((text, forth, back))
        })
        .transpose()?;
    let links = stage_links(root, &linking, &old, &new)?;
    let undo_move = moving.commit_move(moved)?;
    let mut undo_links = Vec::new();
    for (rel, text, after, forth, back) in links {
        forth.commit()?;
        crate::store::trust::wrote(global, root, &rel, Some(text.as_bytes()), after.as_bytes());
        report.relinked.push(rel.file());
        undo_links.push((rel, text, after, back));
    }
    report.warnings = keep_history(&root.dir, &from, &to);
    let (compiled, refreshed) = match refresh(root) {
        Ok(done) => done,
        Err(e) => {
            // The indexes must follow, or the rename is undone (by renames).
            let left = match moving.undo(undo_move, undo_links) {
                true => "it was left where it was",
                false => "it is at the new path",
            };
            return Err(Error::input(format!("cannot rename {from}: {}; {left}", e.message))
                .with_cause(&e)
                .hint(
                "fix what the message names (a full disk: free some space), then rename it again",
            ));
        }
    };
    report.compiled = compiled;
    report.warnings.extend(refreshed);
    report.warnings.extend(move_hits(ctx, root, &old, &new));
    Ok(report)
}

/// A new name on another only in case, or a file already there, is refused.
fn refuse_target(to: &RelPath, target: &std::path::Path) -> Result<()> {
    to.check_portable()?;
    let dir = target.with_file_name("");
    if let Some(twin) = crate::model::relpath::case_twins(&dir, &to.slug).first() {
        return Err(Error::input(format!(
            "{to}: {}/{twin} differs only in case; on Windows and macOS they are one file",
            to.category
        ))
        .hint("pick another name"));
    }
    if target.symlink_metadata().is_ok() {
        return Err(Error::input(format!("{to} exists; renaming would overwrite it"))
            .hint("pick another name, or forget that memory first"));
    }
    Ok(())
}

/// The memories of `root` that link to `old` (`supersedes`,
/// `superseded_by`). The index knows every memory's links: only those
/// naming the old path are read; a dry run reads the files (as `clean`
/// does), as the index would write its cache.
fn linking(root: &Root, old: &str, dry_run: bool) -> Vec<Memory> {
    let memories = if dry_run {
        let (files, _) = crate::store::scan::walk(root);
        crate::store::scan::load_files(root.scope, &files).memories
    } else {
        crate::cache::scan_root(root).memories
    };
    memories
        .into_iter()
        .filter(|m| [&m.supersedes, &m.superseded_by].iter().any(|l| l.as_deref() == Some(old)))
        .collect()
}

/// A memory whose link follows the rename: its path, text before and
/// after, and both staged (forth, and back should the rename be undone).
type Link = (RelPath, String, String, Staged, Staged);

/// Each linking memory with its link following, staged beside it.
fn stage_links(root: &Root, linking: &[Memory], old: &str, new: &str) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for m in linking {
        let path = m.path.under(&root.dir);
        let Some(text) = crate::store::files::text(&root.dir, &path)? else { continue };
        let Some(after) = repointed(&text, &["supersedes", "superseded_by"], old, new) else {
            continue;
        };
        let forth = stage_atomic(&root.dir, &path, after.as_bytes())?;
        let back = stage_atomic(&root.dir, &path, text.as_bytes())?;
        links.push((m.path.clone(), text, after, forth, back));
    }
    Ok(links)
}

/// The memory being renamed, and where it goes.
struct Moving<'a> {
    global: &'a std::path::Path,
    root: &'a Root,
    from: &'a RelPath,
    to: &'a RelPath,
    source: PathBuf,
    target: PathBuf,
    /// Its text.
    bytes: String,
}

impl Moving<'_> {
    /// Move the file: its staged new text (with `id:` following) put in
    /// place, or the file renamed as it is. Returns what puts it back.
    fn commit_move(&self, moved: Option<(String, Staged, Staged)>) -> Result<Option<Staged>> {
        let (global, root, bytes) = (self.global, self.root, self.bytes.as_bytes());
        match moved {
            Some((text, forth, back)) => {
                forth.commit()?;
                crate::store::write::remove_file(&root.dir, &self.source)?;
                crate::store::trust::renamed(global, root, self.from, self.to, bytes);
                crate::store::trust::wrote(global, root, self.to, Some(bytes), text.as_bytes());
                Ok(Some(back))
            }
            None => {
                move_file(&root.dir, &self.source, &self.target)?;
                crate::store::trust::renamed(global, root, self.from, self.to, bytes);
                Ok(None)
            }
        }
    }

    /// Put everything back after a failed recompile; whether the memory is
    /// back at its old path.
    fn undo(
        &self,
        undo_move: Option<Staged>,
        undo_links: Vec<(RelPath, String, String, Staged)>,
    ) -> bool {
        let (global, root) = (self.global, self.root);
        for (rel, text, after, back) in undo_links {
            if back.commit().is_ok() {
                crate::store::trust::wrote(
                    global,
                    root,
                    &rel,
                    Some(after.as_bytes()),
                    text.as_bytes(),
                );
            }
        }
        let _ = keep_history(&root.dir, self.to, self.from);
        let back = match undo_move {
            Some(back) => back
                .commit()
                .and_then(|()| crate::store::write::remove_file(&root.dir, &self.target)),
            None => move_file(&root.dir, &self.target, &self.source),
        };
        if back.is_ok() {
            crate::store::trust::renamed(global, root, self.to, self.from, self.bytes.as_bytes());
            let _ = refresh(root);
        }
        back.is_ok()
    }
}

/// Hit counts follow the memory; they are derived data: a failure is said.
fn move_hits(ctx: &Context, root: &Root, old: &str, new: &str) -> Vec<String> {
    if !crate::store::state::load(&root.dir).0.hits.contains_key(old) {
        return Vec::new();
    }
    let moved = crate::store::state::update(&root.dir, ctx.now_ms, |state| {
        if let Some(hits) = state.hits.remove(old) {
            state.hits.insert(new.to_string(), hits);
        }
    });
    match moved {
        Ok(more) => more,
        Err(e) => vec![format!("the hit counts stay under {old}: {}", e.message)],
    }
}

/// `text` with each of `keys` that names the path `old` set to `new`, the
/// other lines as they are; `None` when none does (or it does not parse).
fn repointed(text: &str, keys: &[&str], old: &str, new: &str) -> Option<String> {
    let before = Document::parse(text).ok()?;
    let names_old = |key: &str| {
        before.meta.get(key).and_then(|v| v.as_str()).map(crate::model::memory::with_md)
            == Some(old.to_string())
    };
    let changed: Vec<&&str> = keys.iter().filter(|k| names_old(k)).collect();
    if changed.is_empty() {
        return None;
    }
    let mut after = before.clone();
    for key in changed {
        after.set(key, new);
    }
    Some(crate::model::frontmatter::edit::render_over(text, &before, &after))
}

/// The saved versions of `from` (`.history/<category>/<slug>/`) become
/// those of `to`: the folder moves, or, when `to` has versions already,
/// each version file that has no namesake there. Returns notes on what
/// could not move (the memory itself has moved by then).
fn keep_history(root: &std::path::Path, from: &RelPath, to: &RelPath) -> Vec<String> {
    let (old, new) = (history_dir(root, from), history_dir(root, to));
    // A real folder only, never followed through a link.
    if !old.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let fail = |e: Error| {
        vec![format!("the saved versions of {from} stay in {}: {}", old.display(), e.message)]
    };
    if new.symlink_metadata().is_err() {
        return move_file(root, &old, &new).err().map_or_else(Vec::new, fail);
    }
    let Ok(entries) = std::fs::read_dir(&old) else { return Vec::new() };
    let mut notes = Vec::new();
    for entry in entries.flatten() {
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        let target = new.join(entry.file_name());
        if regular
            && target.symlink_metadata().is_err()
            && let Err(e) = move_file(root, &entry.path(), &target)
        {
            notes.extend(fail(e));
            break;
        }
    }
    notes
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let verb = if self.dry_run { "would rename" } else { "renamed" };
        let mut out = format!(
            "{verb} {} {} -> {}\n",
            self.root.name(),
            style.path(&self.from),
            style.path(&self.to)
        );
        for r in &self.relinked {
            let verb = if self.dry_run { "would relink" } else { "relinked" };
            out.push_str(&format!("  {verb} {}\n", style.path(r)));
        }
        if !self.compiled.is_empty() {
            out.push_str(&format!("  recompiled: {}\n", self.compiled.join(", ")));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
