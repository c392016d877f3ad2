//! Import: memories from a `mem export` document back into a root.
//! A memory that is already there as the export has it is left alone;
//! another root's memories come only when `--global` or `--project-only`
//! names the root.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::compile::refresh;
use crate::output::Style;
use crate::settings::Context;
use crate::store::state::{self};
use crate::store::write::{save_history, write_atomic};

use crate::ops::exchange::{Export, Exported, SCHEMA, to_json};

/// What to import, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the export came from, as messages name it (`-`: stdin).
    pub file: PathBuf,
    /// The export document, as `mem export` writes it.
    pub text: String,
    /// Say what would happen; write nothing.
    pub dry_run: bool,
    /// Replace live files that differ (their previous text goes to .history/).
    pub yes: bool,
    /// Import even memories whose text looks like it holds a credential.
    pub allow_secret: bool,
}

/// What import did (or would do) to each memory.
#[derive(Debug, Serialize)]
pub struct Report {
    pub root: Scope,
    /// The root's folder.
    pub dir: PathBuf,
    pub dry_run: bool,
    /// path → created, updated, unchanged
    pub actions: BTreeMap<String, &'static str>,
    /// Memories of the export left out: another root's (`root path`).
    pub skipped: Vec<String>,
    pub compiled: Vec<String>,
}

/// Import.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let export = parse_export(args)?;
    // `--global` or `--project-only` names the root, and brings the
    // other root's memories too.
    let named = ctx.selection != crate::settings::Selection::Both;
    let root = target(ctx)?;
    let _lock = if args.dry_run { None } else { Some(crate::ops::writing::writing(root)?) };
    let mut plan: Vec<Step> = Vec::new();
    let mut conflicts = Vec::new();
    let mut secrets = Vec::new();
    // An export holds both roots. Another root's memories are imported only
    // when `--global` or `--project-only` names this root, and never over this root's own memory
    // at the same path (the one the export shadowed): nothing is lost.
    let mut skipped = Vec::new();
    let own = |m: &&Exported| m.root == root.scope;
    let chosen: Vec<&Exported> = export
        .memories
        .iter()
        .filter(|m| {
            let shadowed = export.memories.iter().any(|o| own(&o) && o.path == m.path);
            let take = own(m) || (named && !shadowed);
            if !take {
                skipped.push(format!("{} {}", m.root.name(), m.path));
            }
            take
        })
        .collect();
    for m in chosen {
        let step = planned(args, root, m, &plan)?;
        if step.2 == "differs" {
            conflicts.push(step.0.file());
        }
        if !args.allow_secret {
            secrets.extend(
                crate::base::secrets::scan(&step.1)
                    .into_iter()
                    .map(|f| format!("{}:{}: {}", step.0.file(), f.line, f.what)),
            );
        }
        plan.push(step);
    }
    if !secrets.is_empty() {
        return Err(Error::input(format!(
            "{}: nothing was imported; what looks like a credential: {}",
            args.file.display(),
            secrets.join("; ")
        ))
        .about(&args.file)
        .hint("remove them from the export, or pass --allow-secret if they are not credentials"));
    }
    // A dry run shows them (`differs`); a real one refuses them all.
    if !conflicts.is_empty() && !args.dry_run {
        return Err(Error::input(format!(
            "{} live file(s) differ from the export: {}",
            conflicts.len(),
            conflicts.join(", ")
        ))
        .hint(
            "pass --yes to replace them (their text is kept in .history/), or import elsewhere",
        ));
    }
    let actions = plan.iter().map(|(rel, _, action, _)| (rel.file(), *action)).collect();
    let compiled = if args.dry_run { Vec::new() } else { apply(ctx, root, &plan)? };
    Ok(Report {
        root: root.scope,
        dir: root.dir.clone(),
        dry_run: args.dry_run,
        actions,
        skipped,
        compiled,
    })
}

/// One memory to import: where, its new text, what happens to it
/// (`created`, `updated`, `unchanged`, or `differs` without `--yes`), and
/// its hits.
type Step = (RelPath, String, &'static str, Option<crate::store::state::Hits>);

/// The export document, checked for its schema.
fn parse_export(args: &Options) -> Result<Export> {
    let text = &args.text;
    let export: Export = serde_json::from_str(text).map_err(|e| {
        Error::input(format!("{}: not a mem export: {e}", args.file.display()))
            .about(&args.file)
            .hint("create one with `mem export`")
    })?;
    if export.schema != SCHEMA {
        return Err(Error::input(format!(
            "{}: schema `{}` is not {SCHEMA}",
            args.file.display(),
            export.schema
        ))
        .about(&args.file)
        .hint("export it again with this version of mem"));
    }
    Ok(export)
}

/// What importing `m` into `root` does, after the steps already `planned`.
fn planned(args: &Options, root: &Root, m: &Exported, plan: &[Step]) -> Result<Step> {
    let rel = RelPath::parse(&m.path).and_then(|rel| rel.check_portable().map(|()| rel)).map_err(
        |e| Error::input(format!("{}: {}", args.file.display(), e.message)).about(&args.file),
    )?;
    let doc = Document { meta: to_yaml(&m.frontmatter)?, ..Document::new(m.body.clone()) };
    let file = rel.under(&root.dir);
    let existing = crate::store::files::text(&root.dir, &file)?;
    // The same memory, however its file is formatted: nothing to write.
    let old_doc = existing.as_deref().and_then(|t| Document::parse(t).ok());
    let same =
        old_doc.as_ref().is_some_and(|d| to_json(&d.meta) == m.frontmatter && d.body == m.body);
    // A changed memory keeps the formatting of the lines that did not change.
    let new = match (&existing, &old_doc) {
        (Some(text), Some(old)) if !same => {
            let mut after = old.clone();
            after.meta = doc.meta.clone();
            after.body = doc.body.clone();
            crate::model::frontmatter::edit::render_over(text, old, &after)
        }
        (Some(text), _) if same => text.clone(),
        _ => doc.render(),
    };
    let action = match existing {
        Some(_) if same => "unchanged",
        Some(old) if old == new => "unchanged",
        Some(_) if !args.yes => "differs",
        Some(_) => "updated",
        None => "created",
    };
    // A new file whose name differs from another only in case is one
    // file on Windows and macOS: refused, as remember refuses it.
    if action == "created" {
        let dir = rel.under(&root.dir).with_file_name("");
        let twin =
            crate::model::relpath::case_twins(&dir, &rel.slug).into_iter().next().or_else(|| {
                plan.iter()
                    .map(|p| &p.0)
                    .find(|r| {
                        r.category == rel.category
                            && r.slug != rel.slug
                            && r.slug.eq_ignore_ascii_case(&rel.slug)
                    })
                    .map(|r| format!("{}.md", r.slug))
            });
        if let Some(twin) = twin {
            return Err(Error::input(format!(
                "{}: {rel} and {}/{twin} differ only in case; on Windows and macOS they are one file",
                args.file.display(),
                rel.category
            )).about(&args.file)
            .hint("rename one in the export, then import again"));
        }
    }
    Ok((rel, new, action, m.hits))
}

/// Write the plan: each changed memory (an updated one's text saved in
/// `.history/` first), the hit counts the export brings, then a recompile;
/// returns what the recompile wrote.
fn apply(ctx: &Context, root: &Root, plan: &[Step]) -> Result<Vec<String>> {
    for (rel, new, action, _) in plan {
        let file = rel.under(&root.dir);
        let old = crate::store::files::text(&root.dir, &file)?;
        if *action == "updated" {
            let old = old.as_deref().unwrap_or("");
            let updated = crate::model::memory::updated_of(old).unwrap_or(ctx.now_ms);
            save_history(&root.dir, rel, updated, old.as_bytes())?;
        }
        if *action != "unchanged" {
            write_atomic(&root.dir, &file, new.as_bytes())?;
            let old = old.as_deref().map(str::as_bytes);
            crate::store::trust::wrote(&ctx.roots.global.dir, root, rel, old, new.as_bytes());
        }
    }
    let known = state::load(&root.dir).0.hits;
    let new_hits =
        plan.iter().any(|(rel, _, _, h)| h.is_some_and(|h| known.get(&rel.file()) != Some(&h)));
    if new_hits {
        state::update(&root.dir, ctx.now_ms, |s| {
            for (rel, _, _, hits) in plan {
                if let Some(h) = hits {
                    s.hits.insert(rel.file(), *h);
                }
            }
        })?;
    }
    if plan.iter().any(|(_, _, action, _)| *action != "unchanged") {
        return Ok(refresh(root)?.0);
    }
    Ok(Vec::new())
}

fn target(ctx: &Context) -> Result<&Root> {
    use crate::settings::Selection;
    let root = match ctx.selection {
        Selection::Both => return ctx.write_root(),
        Selection::ProjectOnly => return ctx.project_root(),
        Selection::GlobalOnly => &ctx.roots.global,
    };
    if !root.exists() {
        return Err(Error::input(format!("{} is not a memory root yet", root.dir.display()))
            .about(&root.dir)
            .hint("create it with `mem init --global`"));
    }
    Ok(root)
}

fn to_yaml(map: &serde_json::Map<String, serde_json::Value>) -> Result<yaml_serde::Mapping> {
    match yaml_serde::to_value(map) {
        Ok(yaml_serde::Value::Mapping(m)) => Ok(m),
        _ => Err(Error::input("a memory's frontmatter is not a map of keys")),
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let verb = if self.dry_run { "would import into" } else { "imported into" };
        let skipped = if self.skipped.is_empty() {
            String::new()
        } else {
            format!(
                "  skipped {} memories of the other root (import them into it, or name this root with --global or --project-only to bring them here)\n",
                self.skipped.len()
            )
        };
        if self.actions.values().all(|a| *a == "unchanged") {
            return format!(
                "nothing to import into {}: its {} memories are as the export has them\n{skipped}",
                self.dir.display(),
                self.actions.len()
            );
        }
        let mut out = format!("{verb} {}\n", self.dir.display());
        for (path, action) in self.actions.iter().filter(|(_, a)| **a != "unchanged") {
            out.push_str(&format!("  {action:<9} {}\n", style.path(path)));
        }
        let unchanged = self.actions.values().filter(|a| **a == "unchanged").count();
        if unchanged > 0 {
            out.push_str(&format!("  ({unchanged} unchanged)\n"));
        }
        let differ = self.actions.values().filter(|a| **a == "differs").count();
        if differ > 0 {
            out.push_str(&format!(
                "  {differ} live file(s) differ from the export: `--yes` replaces them (their text goes to .history/)\n"
            ));
        }
        out.push_str(&skipped);
        out
    }
}
