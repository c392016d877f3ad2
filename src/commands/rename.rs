//! `mem rename`: move a memory to another path in its root. The file moves
//! as it is (byte for byte, never over another), the memories that
//! supersede it or that it supersedes point at the new path, trust follows
//! a trusted file, and the indexes are recompiled.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::commands::compile::refresh;
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{lock_root, move_file, write_atomic};

/// Move a memory to another path.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem rename facts/node facts/node-version\n  mem rename facts/deploy-notes pitfalls/deploy-notes"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG
    pub from: String,
    /// Its new path, as CATEGORY/SLUG (in the same root)
    pub to: String,
}

/// What moved.
#[derive(Debug, Serialize)]
pub struct Report {
    pub root: Scope,
    pub from: String,
    pub to: String,
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
    let _lock = lock_root(&root.dir)?;
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
    let bytes = crate::store::files::text(&root.dir, &source)?.unwrap_or_default();
    move_file(&root.dir, &source, &target)?;
    crate::store::trust::renamed(&ctx.roots.global.dir, root, &from, &to, bytes.as_bytes());

    // Links to the old path follow it, each written as any update is.
    let mut relinked = Vec::new();
    let (old, new) = (from.file(), to.file());
    // The index knows every memory's links: only those naming the old path
    // are read.
    let linking = crate::index::scan_root(root).memories.into_iter().filter(|m| {
        [&m.supersedes, &m.superseded_by].iter().any(|l| l.as_deref() == Some(old.as_str()))
    });
    for m in linking {
        let (rel, path) = (m.path.clone(), m.path.under(&root.dir));
        let Some(text) = crate::store::files::text(&root.dir, &path)? else { continue };
        let Ok(before) = Document::parse(&text) else { continue };
        let mut after = before.clone();
        let mut changed = false;
        for key in ["supersedes", "superseded_by"] {
            let points_here = before
                .meta
                .get(key)
                .and_then(|v| v.as_str())
                .is_some_and(|v| crate::model::memory::with_md(v) == old);
            if points_here {
                after.set(key, new.as_str());
                changed = true;
            }
        }
        if changed {
            let rendered = crate::model::frontmatter::edit::render_over(&text, &before, &after);
            write_atomic(&root.dir, &path, rendered.as_bytes())?;
            crate::store::trust::wrote(
                &ctx.roots.global.dir,
                root,
                &rel,
                Some(text.as_bytes()),
                rendered.as_bytes(),
            );
            relinked.push(rel.file());
        }
    }
    let (compiled, warnings) = refresh(root)?;
    Ok(Report { root: root.scope, from: old, to: new, relinked, compiled, warnings })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = format!(
            "renamed {} {} -> {}\n",
            self.root.name(),
            style.path(&self.from),
            style.path(&self.to)
        );
        for r in &self.relinked {
            out.push_str(&format!("  relinked {}\n", style.path(r)));
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
