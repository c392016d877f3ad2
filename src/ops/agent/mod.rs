//! The operations as an agent asks for them (`mem mcp`'s tools, prompts
//! and resources): each plain operation with [`crate::ops::visibility`]'s
//! rules applied around it. A memory private to another role is, to the
//! agent, a memory that does not exist (`roles`); of a project root it gets
//! only what the user trusted, and no message quoting a file the user has
//! not trusted (`trusted`); the session-start block comes as Markdown
//! (`block`).

mod block;
mod roles;
mod trusted;

pub use block::block;
pub use roles::hidden;

use crate::base::error::{Error, Result};
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::{forget, inspect, list, recall, remember, visibility};
use crate::settings::{Context, Selection};
use crate::store::trust::Gate;

/// Recall as an agent: only what the user trusted; with a session, what
/// it was shown before is left out (the rest fills the limit) and what is
/// shown now is recorded.
pub fn recall(
    ctx: &Context,
    options: &recall::Options,
    session: Option<&str>,
    tier: Option<&crate::ops::tier::Kept>,
) -> Result<recall::Report> {
    let mut options = recall::Options { trusted: true, ..options.clone() };
    let session = session.filter(|s| !s.is_empty());
    let roots: Vec<Root> = ctx.read_roots()?.into_iter().cloned().collect();
    let roots: Vec<&Root> = roots.iter().collect();
    // Locked until this call's results are recorded.
    let shown = session.map(|id| crate::store::session::Shown::open(&roots, id, false));
    // What the session was shown is left out; the rest fills the limit.
    let limit = options.limit;
    let seen_before = shown.as_ref().map_or(0, crate::store::session::Shown::len);
    options.limit = limit.saturating_add(seen_before.min(200)).min(usize::from(u16::MAX));
    let mut report = recall::run_with(ctx, &options, tier)?;
    // The reply repeats the query it answers, not a pasted log.
    report.query = crate::model::memory::truncate(&report.query, 200);
    if let Some(shown) = &shown {
        let seen = |f: &recall::Found| shown.contains(f.root, &f.path, f.updated);
        let skipped = report.results.iter().filter(|f| seen(f)).count();
        report.results.retain(|f| !seen(f));
        report.results.truncate(limit);
        if skipped > 0 {
            report
                .warnings
                .push(format!("{skipped} result(s) this session was already shown were left out"));
        }
        let results = report.results.iter().map(|f| (f.root, f.path.as_str(), f.updated));
        shown.record(results, false, ctx.now_ms);
    } else {
        report.results.truncate(limit);
    }
    Ok(report)
}

/// Remember as an agent acting as the context's role, in the root named
/// (`project`, `global`, or by default where `mem remember` writes): a
/// shared memory or its own role's, never over one it cannot see; the
/// reply names only memories it may see and text the user trusted.
pub fn remember(
    mut ctx: Context,
    options: &remember::Options,
    root: Option<&str>,
) -> Result<remember::Report> {
    let options = remember::Options { as_agent: true, ..options.clone() };
    ctx.selection = match root {
        None => ctx.selection,
        Some("project") => Selection::ProjectOnly,
        Some("global") => Selection::GlobalOnly,
        Some(other) => {
            return Err(Error::input(format!("root `{other}` is not a memory root"))
                .hint("use \"project\" or \"global\", or leave it out"));
        }
    };
    roles::refuse_foreign_role(&ctx, options.role.as_deref())?;
    roles::refuse_overwrite(&ctx, &options.path)?;
    if let Some(old) = &options.supersedes {
        roles::refuse_hidden_supersedes(&ctx, old)?;
        roles::refuse_private_over_shared(&ctx, &options.path, options.role.as_deref(), old)?;
    }
    let gated = visibility::gated_dir(&ctx);
    let mut report =
        remember::run(&ctx, &options).map_err(|e| visibility::scrub_error(e, gated.as_deref()))?;
    if let Some(dir) = &gated {
        visibility::scrub(&mut report.warnings, dir);
    }
    let (_, _, gate) = visibility::gated(ctx.clone());
    let project = ctx.roots.project.as_ref().filter(|p| p.exists());
    let gate = gate.or_else(|| Some((project?.clone(), Gate::Nothing)));
    if let Some((root, gate)) = gate.filter(|_| !ctx.trust_all) {
        trusted::trusted_remember(&mut report, &root, &gate);
    }
    Ok(report)
}

/// Forget as an agent: a memory it cannot see is not there.
pub fn forget(ctx: &Context, options: &forget::Options) -> Result<forget::Report> {
    let options = forget::Options { as_agent: true, ..options.clone() };
    roles::refuse_hidden(ctx, &options.path)?;
    let gated = visibility::gated_dir(ctx);
    let mut report =
        forget::run(ctx, &options).map_err(|e| visibility::scrub_error(e, gated.as_deref()))?;
    if let Some(dir) = &gated {
        visibility::scrub(&mut report.warnings, dir);
    }
    Ok(report)
}

/// Inspect as an agent: like recall, an untrusted project root's text is
/// not handed over, and a trusted one's only as the user trusted it.
pub fn inspect(ctx: Context, options: &inspect::Options) -> Result<inspect::Report> {
    let options = inspect::Options { as_agent: true, ..options.clone() };
    if let Some(path) = &options.path {
        roles::refuse_hidden(&ctx, path)?;
    }
    let gated = visibility::gated_dir(&ctx);
    let (ctx, note, gate) = visibility::gated(ctx);
    let mut report = inspect::run(&ctx, &options)
        .map_err(|e| visibility::scrub_error(e, gated.as_deref()))
        .map_err(|e| match &note {
            Some(note) => e.hint(note.clone()),
            None => e,
        })?;
    if let Some((root, gate)) = &gate {
        match &mut report {
            inspect::Report::Detail(detail) => trusted::trusted_detail(detail, root, gate)?,
            inspect::Report::Overview(overview) => {
                let before = overview.problems.len();
                overview.problems.retain(|p| !p.path.starts_with(&root.dir));
                let dropped = before - overview.problems.len();
                if dropped > 0 {
                    visibility::note_dropped(&mut overview.notes, dropped);
                }
            }
            inspect::Report::Secrets { .. } => {}
        }
    }
    Ok(report)
}

/// List as an agent: memories private to another role are not its own,
/// and of a project root only what the user trusted.
pub fn list(ctx: Context, options: &list::Options) -> Result<list::Report> {
    let gated = visibility::gated_dir(&ctx);
    let (ctx, note, gate) = visibility::gated(ctx);
    let role = ctx.role.clone();
    let mut report =
        list::run(&ctx, options).map_err(|e| visibility::scrub_error(e, gated.as_deref()))?;
    // As recall: memories private to another role are not this agent's.
    report.memories.retain(|m| visibility::visible_to(m, role.as_ref()));
    if let Some((root, gate)) = &gate {
        trusted::trusted_list(&mut report, root, gate);
    }
    report.warnings.extend(note);
    Ok(report)
}

/// Every memory an agent may read, by name: [`list()`] without its notes;
/// None when the roots cannot be read.
pub fn readable(ctx: &Context) -> Option<list::Report> {
    let (ctx, _, gate) = visibility::gated(ctx.clone());
    let options = list::Options {
        filter: crate::ops::filter::Filter::default(),
        sort: list::Sort::Name,
        limit: None,
        long: false,
    };
    let mut listed = list::run(&ctx, &options).ok()?;
    if let Some((root, gate)) = &gate {
        trusted::trusted_list(&mut listed, root, gate);
    }
    listed.memories.retain(|m| visibility::visible_to(m, ctx.role.as_ref()));
    Some(listed)
}

/// A memory's file as an agent may read it: the visible copy (project
/// first); a project file only as the user trusted it; another role's
/// private memory not at all (None, as a memory that is not there).
pub fn memory_text(ctx: &Context, rel: &RelPath) -> Result<Option<String>> {
    // Another role's memory first: as absent, whatever its trust.
    if roles::hidden(ctx, &rel.file()) {
        return Ok(None);
    }
    let (ctx, _, gate) = visibility::gated(ctx.clone());
    let Some((root, file)) = ctx.locate(rel)? else { return Ok(None) };
    let visible = |m: &crate::model::memory::Memory| visibility::visible_to(m, ctx.role.as_ref());
    match &gate {
        Some((project, gate)) if root.scope == Scope::Project => {
            let held = || {
                Error::input(format!(
                    "{rel} was added or changed since the user trusted this project, so it is held back"
                ))
            };
            let memory = gate.memory(project, rel).ok_or_else(held)?;
            if !visible(&memory) {
                return Ok(None);
            }
            Ok(Some(gate.text(project, rel).ok_or_else(held)?))
        }
        _ => {
            let Some(text) = crate::store::files::text(&root.dir, &file)? else { return Ok(None) };
            let doc = crate::model::frontmatter::Document::parse(&text)
                .map_err(|e| Error::input(format!("{rel}: {}", e.message)).about(&file))?;
            let memory =
                crate::model::memory::Memory::from_document(rel.clone(), root.scope, &doc, 0).0;
            Ok(visible(&memory).then_some(text))
        }
    }
}
