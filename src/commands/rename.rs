//! `mem rename`: move a memory to another path in its root. The file moves
//! as it is (byte for byte, never over another), the memories that
//! supersede it or that it supersedes point at the new path, trust follows
//! a trusted file, its saved versions and hit counts go with it, and the
//! indexes are recompiled.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::ops::compile::refresh;
use crate::ops::naming;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{history_dir, move_file, stage_atomic};

/// Move a memory to another path.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem rename facts/node facts/node-version\n  mem rename facts/deploy-notes pitfalls/deploy-notes\n  mem mv facts/a facts/b --dry-run"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub from: String,
    /// Its new path, as CATEGORY/SLUG (in the same root)
    pub to: String,
    /// Show what would move and which memories would be relinked; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Create the new path's category even though its name is close to one
    /// that exists (refused otherwise, as a likely typo)
    #[arg(long)]
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
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
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
    to.check_portable()?;
    let target = to.under(&root.dir);
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
    let mut notes: Vec<String> =
        crate::ops::naming::new_category(ctx, root, &to, args.new_category)?.into_iter().collect();
    let bytes = crate::store::files::text(&root.dir, &source)?.unwrap_or_default();
    let (was, now) = (naming::is_rule(&from, &bytes), naming::is_rule(&to, &bytes));
    notes.extend(naming::rule_change(&to, was, now));
    let (old, new) = (from.file(), to.file());
    // The index knows every memory's links: only those naming the old path
    // are read.
    // A dry run reads the files (as `clean` does): the index would write
    // its cache.
    let memories = if args.dry_run {
        let (files, _) = crate::store::scan::walk(root);
        crate::store::scan::load_files(root.scope, &files).memories
    } else {
        crate::index::scan_root(root).memories
    };
    let linking: Vec<_> = memories
        .into_iter()
        .filter(|m| {
            [&m.supersedes, &m.superseded_by].iter().any(|l| l.as_deref() == Some(old.as_str()))
        })
        .collect();
    if args.dry_run {
        let relinked = linking.iter().map(|m| m.file()).collect();
        let (compiled, warnings) = (vec![], vec![]);
        let root = root.scope;
        return Ok(Report {
            dry_run: true,
            root,
            from: old,
            to: new,
            file: target,
            relinked,
            compiled,
            notes,
            warnings,
        });
    }
    // Everything that needs room on the disk is written first, beside its
    // place: the moved file with its `id:` (the relative path) following it,
    // each memory that links to it with the link following, and what each
    // of those was, to put back should the recompile fail. If one cannot be
    // written, nothing has changed. What follows only renames.
    let global = &ctx.roots.global.dir;
    let moved = repointed(&bytes, &["id"], &old, &new)
        .map(|text| -> Result<_> {
            let forth = stage_atomic(&root.dir, &target, text.as_bytes())?;
            let back = stage_atomic(&root.dir, &source, bytes.as_bytes())?;
            Ok((text, forth, back))
        })
        .transpose()?;
    let mut links = Vec::new();
    for m in &linking {
        let path = m.path.under(&root.dir);
        let Some(text) = crate::store::files::text(&root.dir, &path)? else { continue };
        let Some(after) = repointed(&text, &["supersedes", "superseded_by"], &old, &new) else {
            continue;
        };
        let forth = stage_atomic(&root.dir, &path, after.as_bytes())?;
        let back = stage_atomic(&root.dir, &path, text.as_bytes())?;
        links.push((m.path.clone(), text, after, forth, back));
    }

    let undo_move = match moved {
        Some((text, forth, back)) => {
            forth.commit()?;
            crate::store::write::remove_file(&root.dir, &source)?;
            crate::store::trust::renamed(global, root, &from, &to, bytes.as_bytes());
            crate::store::trust::wrote(global, root, &to, Some(bytes.as_bytes()), text.as_bytes());
            Some(back)
        }
        None => {
            move_file(&root.dir, &source, &target)?;
            crate::store::trust::renamed(global, root, &from, &to, bytes.as_bytes());
            None
        }
    };
    let mut relinked = Vec::new();
    let mut undo_links = Vec::new();
    for (rel, text, after, forth, back) in links {
        forth.commit()?;
        crate::store::trust::wrote(global, root, &rel, Some(text.as_bytes()), after.as_bytes());
        relinked.push(rel.file());
        undo_links.push((rel, text, after, back));
    }
    let mut warnings = keep_history(&root.dir, &from, &to);
    let (compiled, refreshed) = match refresh(root) {
        Ok(done) => done,
        Err(e) => {
            // The indexes must follow, or the rename is undone (by renames).
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
            let _ = keep_history(&root.dir, &to, &from);
            let back = match undo_move {
                Some(back) => back
                    .commit()
                    .and_then(|()| crate::store::write::remove_file(&root.dir, &target)),
                None => move_file(&root.dir, &target, &source),
            };
            if back.is_ok() {
                crate::store::trust::renamed(global, root, &to, &from, bytes.as_bytes());
                let _ = refresh(root);
            }
            let left =
                if back.is_ok() { "it was left where it was" } else { "it is at the new path" };
            return Err(Error::input(format!("cannot rename {from}: {}; {left}", e.message)).hint(
                "fix what the message names (a full disk: free some space), then rename it again",
            ));
        }
    };
    warnings.extend(refreshed);
    // Hit counts follow the memory; they are derived data: a failure is said.
    if crate::store::state::load(&root.dir).0.hits.contains_key(&old) {
        match crate::store::state::update(&root.dir, ctx.now_ms, |state| {
            if let Some(hits) = state.hits.remove(&old) {
                state.hits.insert(new.clone(), hits);
            }
        }) {
            Ok(more) => warnings.extend(more),
            Err(e) => warnings.push(format!("the hit counts stay under {old}: {}", e.message)),
        }
    }
    Ok(Report {
        dry_run: false,
        root: root.scope,
        from: old,
        to: new,
        file: target,
        relinked,
        compiled,
        notes,
        warnings,
    })
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
