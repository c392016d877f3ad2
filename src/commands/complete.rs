//! What a shell completes an argument with (clap's dynamic completion,
//! `COMPLETE=<shell> mem`): the memory paths and categories on disk now.
//! Shared by every verb whose arguments name them; `mem completions`
//! writes the shell's registration.

use std::ffi::OsStr;

use clap_complete::engine::CompletionCandidate;

use crate::settings::Context;

/// The memories of the roots seen from here, as `category/slug`, that
/// start with what was typed; each with its title as the help.
pub fn memory_paths(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Ok(ctx) = Context::resolve(&crate::settings::Options::default()) else { return Vec::new() };
    let Ok(roots) = ctx.read_roots() else { return Vec::new() };
    let tree = crate::cache::scan_all(&roots);
    let mut out: Vec<(String, String)> = tree
        .memories
        .iter()
        .map(|m| (format!("{}/{}", m.path.category, m.path.slug), m.label()))
        .filter(|(path, _)| path.starts_with(typed.as_ref()))
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out.into_iter()
        // Shown by the shell on the terminal: one line, no control codes.
        .map(|(path, label)| {
            let label = crate::base::text::terminal_safe(&crate::base::text::flat(&label), false)
                .into_owned();
            CompletionCandidate::new(path).help(Some(label.into()))
        })
        .collect()
}

/// The categories of the roots seen from here that start with what was typed.
pub fn categories(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Ok(ctx) = Context::resolve(&crate::settings::Options::default()) else { return Vec::new() };
    let Ok(roots) = ctx.read_roots() else { return Vec::new() };
    let mut names = std::collections::BTreeSet::new();
    for root in roots {
        for entry in std::fs::read_dir(&root.dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let folder = entry.file_type().is_ok_and(|t| t.is_dir());
            if folder
                && crate::model::relpath::check_category(&name).is_ok()
                && name.starts_with(typed.as_ref())
            {
                names.insert(name);
            }
        }
    }
    names.into_iter().map(CompletionCandidate::new).collect()
}
