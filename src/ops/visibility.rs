//! What an agent may be shown, in one place: a memory private to a role
//! reaches only that role ([`visible_to`]), and of a project root only what
//! the user trusted (see [`crate::store::trust`]). Every operation an agent
//! is served by (`mem mcp`, `mem context`, `mem recall --trusted`) asks here.

use std::path::{Path, PathBuf};

use crate::base::error::Error;
use crate::index::held::Standing;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::settings::Context;
use crate::store::scan::Listing;
use crate::store::trust::Gate;

/// Whether an agent acting as `role` (or as no role) may see `m`: a memory
/// without `role:` is shared, one with it is that role's alone.
pub fn visible_to(m: &Memory, role: Option<&String>) -> bool {
    m.role.as_ref().is_none_or(|r| Some(r) == role)
}

/// Leave out an untrusted project root (its memories would become the agent's
/// instructions), with a note saying how to trust it; as `mem context` does.
/// A trusted root comes back with its gate: each of its files passes only
/// as the content the user trusted.
pub fn gated(mut ctx: Context) -> (Context, Option<String>, Option<(Root, Gate)>) {
    let Some(project) = ctx.roots.project.clone() else { return (ctx, None, None) };
    let selected = ctx.selected().iter().any(|r| r.scope == Scope::Project);
    if !selected || !project.exists() || ctx.trust_all {
        return (ctx, None, None);
    }
    let gate = Gate::of(&ctx.roots.global.dir, &project, false);
    if !gate.is_closed() {
        return (ctx, None, Some((project, gate)));
    }
    let note = format!(
        "project memory at {} is not trusted, so its memories were left out; \
         the user can review it and run `mem trust` in the project (do not run it for them)",
        project.dir.display()
    );
    ctx.roots.project = None;
    (ctx, Some(note), None)
}

/// The project root's folder, when its text reaches the agent only as far as
/// the user trusted it (not under `MEM_TRUST_ALL`).
pub fn gated_dir(ctx: &Context) -> Option<PathBuf> {
    ctx.roots.project.as_ref().filter(|p| p.exists() && !ctx.trust_all).map(|p| p.dir.clone())
}

/// An error that quotes a project file, told without the quote.
pub fn scrub_error(e: Error, project: Option<&Path>) -> Error {
    let Some(dir) = project else { return e };
    let dir = dir.display().to_string();
    if !e.message.contains(&dir) && !e.hint.as_deref().is_some_and(|h| h.contains(&dir)) {
        return e;
    }
    Error { message: "a file of the project root cannot be used as it is".into(), ..e }.hint(
        "the message quotes a file the user has not trusted; the user can run `mem lint` to see it",
    )
}

/// Say how many notes about project files were left out of a reply: they
/// quote names and text from files the user has not trusted.
pub fn note_dropped(notes: &mut Vec<String>, n: usize) {
    notes.push(format!(
        "{n} note(s) about files of the project root were left out: they quote files the user has not trusted; the user can run `mem lint`"
    ));
}

/// Warnings that quote project files (their names, link targets, YAML
/// errors, marker labels) replaced by one line, for a reply to the agent.
pub fn scrub(warnings: &mut Vec<String>, project: &Path) {
    let dir = project.display().to_string();
    let before = warnings.len();
    warnings.retain(|w| !w.contains(&dir));
    let dropped = before - warnings.len();
    if dropped > 0 {
        note_dropped(warnings, dropped);
    }
}

/// The note for project memories held back from a reply.
pub fn held_back_note(paths: &[String]) -> Option<String> {
    (!paths.is_empty()).then(|| {
        format!(
            "{} project memor{} added or changed since the user trusted this project {} held back: {}; \
             the user can review them and run `mem trust` (do not run it for them)",
            paths.len(),
            if paths.len() == 1 { "y" } else { "ies" },
            if paths.len() == 1 { "is" } else { "are" },
            paths.join(", ")
        )
    })
}

/// Where the selected project root stands with agents on this device; None
/// when there is none, or trust does not apply (`MEM_TRUST_ALL`). `keep`
/// lets the check cache what it learnt (not for a command that writes
/// nothing).
pub fn project_standing(ctx: &Context, keep: bool) -> Option<Standing> {
    standing_listed(ctx, None, keep)
}

/// [`project_standing`], given the project root's files when the command
/// listed them already.
fn standing_listed(ctx: &Context, listed: Option<&[Listing]>, keep: bool) -> Option<Standing> {
    let project = ctx.roots.project.as_ref()?;
    let selected = ctx.selected().iter().any(|r| r.scope == Scope::Project);
    if !selected || !project.exists() || ctx.trust_all {
        return None;
    }
    let global = &ctx.roots.global.dir;
    Some(match listed {
        Some(listings) => crate::index::held::standing(global, project, listings, keep),
        None => crate::index::held::standing_now(global, project, keep),
    })
}

/// "N project files changed outside mem are held back from agents", when
/// any are: for the commands that write or check a root. `listed`: the
/// project root's files, when the command listed them already.
pub fn held_back_warning(ctx: &Context, listed: Option<&[Listing]>, keep: bool) -> Option<String> {
    standing_listed(ctx, listed, keep)?.notice()
}

/// The held-back notice, or for a root never trusted here one quiet line:
/// for the commands that describe a root (`inspect`, `stats`, `lint`).
pub fn standing_warning(ctx: &Context) -> Option<String> {
    let standing = project_standing(ctx, true)?;
    standing.notice().or_else(|| standing.untrusted_line())
}
