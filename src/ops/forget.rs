//! Forget and restore: move a memory to the root's `.trash/` and back. Nothing is deleted; the newest trashed copy is the one restored.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::compile::refresh;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{move_file, trash, trash_dir};

/// What to forget.
#[derive(Debug, Clone)]
pub struct Options {
    /// The memory, as `category/slug`.
    pub path: String,
    /// Say what would move; change nothing.
    pub dry_run: bool,
    /// Asked for by an agent (`mem mcp`): a "did you mean" names only the
    /// memories its role sees.
    pub as_agent: bool,
}

/// What to bring back.
#[derive(Debug, Clone)]
pub struct RestoreOptions {
    /// The memories, as `category/slug`: each is checked before any is moved.
    pub paths: Vec<String>,
    /// Every memory in the trash of the selected roots, its newest copy.
    pub all: bool,
    /// Say what would come back; change nothing.
    pub dry_run: bool,
}

/// What `mem restore` brought back.
#[derive(Debug, Serialize)]
pub struct Restored {
    pub restored: Vec<Report>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// A move between the live tree and the trash.
#[derive(Debug, Serialize)]
pub struct Report {
    pub action: &'static str,
    pub path: String,
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    /// Where the file was (`from_file` in JSON).
    #[serde(rename = "from_file")]
    pub from: PathBuf,
    /// Where the file is now (`file` in JSON, as everywhere).
    #[serde(rename = "file")]
    pub to: PathBuf,
    /// Generated files rewritten by the recompile that follows the move.
    pub compiled: Vec<String>,
    pub warnings: Vec<String>,
}

/// Move the visible copy of the memory to `.trash/<category>/<slug>.<ms>.md`.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let Some((root, from)) = ctx.locate(&rel)? else {
        return Err(crate::ops::naming::no_such_memory(ctx, &rel, args.as_agent));
    };
    if args.dry_run {
        let to = crate::store::write::trash_file(&root.dir, &rel, ctx.now_ms);
        let (action, path, scope) = ("would forget", rel.file(), root.scope);
        return Ok(Report { action, path, scope, from, to, compiled: vec![], warnings: vec![] });
    }
    let _lock = crate::ops::writing::writing(root)?;
    let to = trash(&root.dir, &rel, ctx.now_ms)?;
    // The indexes must follow, or the move is undone: a forget that fails
    // (a full disk) leaves the memory where it was and the indexes as they were.
    let (compiled, notes) = match refresh(root) {
        Ok(done) => done,
        Err(e) => {
            let back = move_file(&root.dir, &to, &from);
            if back.is_ok() {
                // Generated files written before the failure, as they were.
                let _ = refresh(root);
            }
            let left = if back.is_ok() { "it was left where it was" } else { "it is in the trash" };
            return Err(Error::input(format!("cannot forget {rel}: {}; {left}", e.message))
                .with_cause(&e)
                .hint("free some disk space, then forget it again"));
        }
    };
    let mut warnings = Vec::new();
    if root.scope == Scope::Project && rel.under(&ctx.roots.global.dir).is_file() {
        warnings.push(format!("the global {rel} is visible again"));
    }
    warnings.extend(notes);
    Ok(Report {
        action: "forgot",
        path: rel.file(),
        scope: root.scope,
        from,
        to,
        compiled,
        warnings,
    })
}

/// Move the newest trashed copy back, refusing to replace a live file.
pub fn restore(ctx: &Context, args: &RestoreOptions) -> Result<Restored> {
    // Every path is checked first: one that cannot be restored moves none.
    let mut rels = Vec::new();
    let mut kept = Vec::new();
    let paths: Vec<String> = if args.all {
        let listed = crate::ops::trash::run(ctx, &crate::ops::trash::Options::default())?;
        listed.trashed.into_iter().map(|t| t.path).collect()
    } else {
        args.paths.clone()
    };
    for path in &paths {
        let rel = RelPath::parse(path)?;
        if !rels.contains(&rel) {
            match check_restorable(ctx, &rel) {
                Err(e) if args.all => kept.push(format!("{}; it stays in the trash", e.message)),
                Err(e) => return Err(e),
                Ok(_) => rels.push(rel),
            }
        }
    }
    if args.all && rels.is_empty() && kept.is_empty() {
        return Err(Error::not_found("the trash is empty").hint("`mem forget` puts memories there"));
    }
    let restored: Vec<Report> = if args.dry_run {
        let would = |rel: &RelPath| {
            let (root, from) = check_restorable(ctx, rel)?;
            let (action, path, scope, to) =
                ("would restore", rel.file(), root.scope, rel.under(&root.dir));
            Ok(Report { action, path, scope, from, to, compiled: vec![], warnings: vec![] })
        };
        rels.iter().map(would).collect::<Result<_>>()?
    } else {
        rels.iter().map(|rel| restore_one(ctx, rel)).collect::<Result<_>>()?
    };
    let mut warnings: Vec<String> = kept;
    warnings.extend(restored.iter().flat_map(|r| r.warnings.clone()));
    warnings.dedup();
    Ok(Restored { restored, warnings })
}

/// The root and trashed copy `rel` would come back from; an error naming
/// the path when there is none, or when a live file is in the way.
fn check_restorable<'a>(ctx: &'a Context, rel: &RelPath) -> Result<(&'a Root, PathBuf)> {
    let found = ctx
        .read_roots()?
        .into_iter()
        .find_map(|root| newest_trashed(&trash_dir(&root.dir, rel), &rel.slug).map(|f| (root, f)));
    let Some((root, from)) = found else {
        let ask = crate::ops::naming::nearest_trashed(ctx, rel);
        return Err(Error::input(format!("{rel}: nothing in the trash to restore"))
            .hint(ask.unwrap_or_else(|| "`mem trash` lists what can be restored".to_string())));
    };
    if rel.under(&root.dir).symlink_metadata().is_ok() {
        return Err(Error::input(format!("{rel} exists; restoring would overwrite it")).hint(
            format!("forget or rename the live file first; the trashed copy is {}", from.display()),
        ));
    }
    Ok((root, from))
}

fn restore_one(ctx: &Context, rel: &RelPath) -> Result<Report> {
    let (root, _) = check_restorable(ctx, rel)?;
    let _lock = crate::ops::writing::writing(root)?;
    // Checked again under the lock: another process may have moved either.
    let (root, from) = check_restorable(ctx, rel)?;
    let to = rel.under(&root.dir);
    move_file(&root.dir, &from, &to)?;
    let (compiled, warnings) = refresh(root)?;
    Ok(Report {
        action: "restored",
        path: rel.file(),
        scope: root.scope,
        from,
        to,
        compiled,
        warnings,
    })
}

/// The trashed `<slug>.<ms>.md` with the largest `ms`.
fn newest_trashed(dir: &Path, slug: &str) -> Option<PathBuf> {
    let copies = crate::store::write::trashed_in(dir).into_iter().filter(|t| t.slug == slug);
    copies.max_by_key(|t| (t.at_ms, t.path.clone())).map(|t| t.path)
}

impl crate::output::Report for Restored {
    fn human(&self, style: &Style) -> String {
        self.restored.iter().map(|r| r.human(style)).collect()
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = format!("{} {} {}\n", self.action, self.scope.name(), style.path(&self.path));
        if self.action.ends_with("forget") {
            out.push_str(&format!("  would move to {}\n", self.to.display()));
        } else if self.action == "forgot" {
            out.push_str(&format!("  moved to {}\n", self.to.display()));
            out.push_str(&format!("  undo: mem restore {}\n", self.path.trim_end_matches(".md")));
        } else {
            out.push_str(&format!("  from {}\n", self.from.display()));
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
