//! `mem rename`: move a memory to another path in its root. The file moves
//! as it is (byte for byte, never over another), the memories that
//! supersede it or that it supersedes point at the new path, trust follows
//! a trusted file, its saved versions and hit counts go with it, and the
//! indexes are recompiled.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::commands::compile::refresh;
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{history_dir, lock_root, move_file};

/// Move a memory to another path.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem rename facts/node facts/node-version\n  mem rename facts/deploy-notes pitfalls/deploy-notes\n  mem mv facts/a facts/b --dry-run"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    pub from: String,
    /// Its new path, as CATEGORY/SLUG (in the same root)
    pub to: String,
    /// Show what would move and which memories would be relinked; change nothing
    #[arg(long)]
    pub dry_run: bool,
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
        return Err(
            Error::input(format!("{from}: no such memory")).hint("check the path with `mem list`")
        );
    };
    let _lock = if args.dry_run { None } else { Some(lock_root(&root.dir)?) };
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
            warnings,
        });
    }
    let bytes = crate::store::files::text(&root.dir, &source)?.unwrap_or_default();
    move_file(&root.dir, &source, &target)?;
    crate::store::trust::renamed(&ctx.roots.global.dir, root, &from, &to, bytes.as_bytes());
    // `id:` is the relative path: it follows, the rest of the file as it was.
    repoint(ctx, root, &to, &bytes, &["id"], &old, &new)?;
    // Links to the old path follow it, each written as any update is.
    let mut relinked = Vec::new();
    for m in linking {
        let Some(text) = crate::store::files::text(&root.dir, &m.path.under(&root.dir))? else {
            continue;
        };
        if repoint(ctx, root, &m.path, &text, &["supersedes", "superseded_by"], &old, &new)? {
            relinked.push(m.file());
        }
    }
    let mut warnings = keep_history(&root.dir, &from, &to);
    // Hit counts follow the memory.
    warnings.extend(crate::store::state::update(&root.dir, ctx.now_ms, |state| {
        if let Some(hits) = state.hits.remove(&old) {
            state.hits.insert(new.clone(), hits);
        }
    })?);
    let (compiled, notes) = refresh(root)?;
    warnings.extend(notes);
    Ok(Report {
        dry_run: false,
        root: root.scope,
        from: old,
        to: new,
        file: target,
        relinked,
        compiled,
        warnings,
    })
}

/// Set each of `keys` of `rel` (whose text is `text`) that names the path
/// `old` to `new`; true when one did. A file that does not parse is left
/// as it is.
fn repoint(
    ctx: &Context,
    root: &crate::model::roots::Root,
    rel: &RelPath,
    text: &str,
    keys: &[&str],
    old: &str,
    new: &str,
) -> Result<bool> {
    let Ok(before) = Document::parse(text) else { return Ok(false) };
    let mut after = before.clone();
    let names_old = |key: &str| {
        before.meta.get(key).and_then(|v| v.as_str()).map(crate::model::memory::with_md)
            == Some(old.to_string())
    };
    let changed: Vec<&&str> = keys.iter().filter(|k| names_old(k)).collect();
    if changed.is_empty() {
        return Ok(false);
    }
    for key in changed {
        after.set(key, new);
    }
    crate::store::trust::rewrite(&ctx.roots.global.dir, root, rel, text, &before, &after)?;
    Ok(true)
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
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
