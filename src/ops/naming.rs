//! What a command says about the names it is given: a category that is
//! not there yet (refused when it is a near miss of one that is, else
//! created with a note), a memory that is not there (the nearest ones), and
//! a memory that crosses the hard-rule boundary.

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::nearest::{did_you_mean, near_categories, near_paths};
use crate::model::relpath::{RelPath, check_category};
use crate::model::roots::Root;
use crate::settings::Context;

/// A write of `rel` into `root` that would make its category folder: Ok(None)
/// when the folder is there; refused when the name is within two edits of
/// a category that exists (in any selected root, or a default one) and
/// `new_category` was not given; else the note that says it was made.
pub fn new_category(
    ctx: &Context,
    root: &Root,
    rel: &RelPath,
    new_category: bool,
) -> Result<Option<String>> {
    let name = rel.category.as_str();
    if root.dir.join(name).is_dir() {
        return Ok(None);
    }
    let known = known_categories(ctx);
    if !new_category && !known.iter().any(|c| c == name) {
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let near = near_categories(name, &known);
        if !near.is_empty() {
            let quoted: Vec<String> = near.iter().map(|c| format!("`{c}`")).collect();
            let ask = did_you_mean(&quoted).unwrap_or_default();
            return Err(Error::input(format!("{rel}: there is no category `{name}`; {ask}"))
                .hint(format!("pass --new-category to create `{name}` anyway")));
        }
    }
    Ok(Some(format!("new category `{name}` in the {} root", root.scope.name())))
}

/// The category folders of the selected roots, and the default categories.
fn known_categories(ctx: &Context) -> Vec<String> {
    let mut names: Vec<String> =
        crate::model::memory::DEFAULT_CATEGORIES.iter().map(|c| c.to_string()).collect();
    for root in ctx.selected() {
        let Ok(entries) = std::fs::read_dir(&root.dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) && check_category(&name).is_ok() {
                names.push(name);
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// "`rel`: no such memory", with the nearest memories of the selected roots
/// as the hint when there are any (`did you mean facts/temp?`). For an
/// agent (`as_agent`), only the memories its role sees are named.
pub fn no_such_memory(ctx: &Context, rel: &RelPath, as_agent: bool) -> Error {
    let error = Error::input(format!("{rel}: no such memory"));
    match nearest_memories(ctx, rel, as_agent) {
        Some(ask) => error.hint(ask),
        None => error.hint("check the path with `mem list`"),
    }
}

/// "did you mean …?" naming the memories of the selected roots nearest to
/// `rel` (for an agent, those its role sees); None when none is near.
pub fn nearest_memories(ctx: &Context, rel: &RelPath, as_agent: bool) -> Option<String> {
    let roots = ctx.read_roots().ok()?;
    let seen = |m: &Memory| !as_agent || crate::ops::visibility::visible_to(m, ctx.role.as_ref());
    let mut paths: Vec<String> = roots
        .into_iter()
        .flat_map(|root| crate::cache::scan_root(root).memories)
        .filter(seen)
        .map(|m| format!("{}/{}", m.path.category, m.path.slug))
        .collect();
    paths.sort();
    paths.dedup();
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let near = near_paths(&format!("{}/{}", rel.category, rel.slug), &paths);
    did_you_mean(&near.iter().map(|p| p.to_string()).collect::<Vec<_>>())
}

/// "did you mean …?" naming the trashed memories of the selected roots
/// nearest to `rel` (what `mem restore` could bring back); None when none is.
pub fn nearest_trashed(ctx: &Context, rel: &RelPath) -> Option<String> {
    let trash = crate::ops::trash::run(ctx, &Default::default()).ok()?.trashed;
    let mut paths: Vec<&str> = trash.iter().map(|t| t.path.trim_end_matches(".md")).collect();
    paths.sort();
    paths.dedup();
    let near = near_paths(&format!("{}/{}", rel.category, rel.slug), &paths);
    did_you_mean(&near.iter().map(|p| p.to_string()).collect::<Vec<_>>())
}

/// Whether the memory `text` at `rel` is a hard rule (false when it does
/// not parse: it is not injected then either).
pub fn is_rule(rel: &RelPath, text: &str) -> bool {
    Document::parse(text).is_ok_and(|doc| {
        Memory::from_document(rel.clone(), crate::model::roots::Scope::Project, &doc, 0).0.is_rule()
    })
}

/// The note for a memory that became, or stopped being, a hard rule (by its
/// folder or its `kind`); None when it did neither.
pub fn rule_change(path: &RelPath, was: bool, now: bool) -> Option<String> {
    match (was, now) {
        (false, true) => Some(format!(
            "{path} is now a hard rule: its whole text is injected into every session"
        )),
        (true, false) => Some(format!(
            "{path} is no longer a hard rule: it is not injected into every session, only recalled"
        )),
        _ => None,
    }
}

/// What `mem edit` says once it wrote (`action`): the category note of a
/// memory it created, and a change across the hard-rule boundary of one it
/// updated (`before` → `after`).
pub fn edit_notes(
    rel: &RelPath,
    action: &str,
    before: Option<&str>,
    after: &str,
    new_category: Option<String>,
) -> Vec<String> {
    match (action, before) {
        ("created", _) => new_category.into_iter().collect(),
        ("updated", Some(before)) => {
            rule_change(rel, is_rule(rel, before), is_rule(rel, after)).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_by_folder_or_kind() {
        let rel = |p: &str| RelPath::parse(p).unwrap();
        assert!(is_rule(&rel("rules/x"), "text\n"));
        assert!(is_rule(&rel("rules/x"), "---\nkind: fact\n---\ntext\n"));
        assert!(is_rule(&rel("facts/x"), "---\nkind: rule\n---\ntext\n"));
        assert!(!is_rule(&rel("facts/x"), "text\n"));
        assert!(!is_rule(&rel("rules/x"), "---\nkind: [\n---\n"));
        assert!(rule_change(&rel("rules/x"), false, true).unwrap().contains("is now a hard rule"));
        assert!(rule_change(&rel("facts/x"), true, false).unwrap().contains("no longer"));
        assert_eq!(rule_change(&rel("facts/x"), true, true), None);
    }
}
