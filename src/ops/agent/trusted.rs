//! What of a project memory reaches the agent: only the bytes the user
//! trusted.

use crate::base::error::{self, Error};
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::ops::{inspect, list, remember};
use crate::store::trust::Gate;

/// Rebuild a project memory's detail from the one buffer whose digest was
/// checked: metadata, frontmatter and body alike; its version chain only as
/// far as trusted files lead. A held-back memory is an error that names it.
pub(super) fn trusted_detail(
    detail: &mut inspect::Detail,
    root: &Root,
    gate: &Gate,
) -> error::Result<()> {
    if detail.memory.scope != Scope::Project {
        return Ok(());
    }
    let rel = detail.memory.path.clone();
    let held = || {
        Error::input(format!(
            "{rel} was added or changed since the user trusted this project, so it is held back"
        ))
        .hint("the user can review it and run `mem trust` in the project (do not run it for them)")
    };
    let text = gate.text(root, &rel).ok_or_else(held)?;
    let doc = crate::model::frontmatter::Document::parse(&text).map_err(|_| held())?;
    let memory = crate::model::memory::Memory::from_document(
        rel.clone(),
        Scope::Project,
        &doc,
        detail.memory.updated,
    )
    .0;
    let chain = |next: fn(&crate::model::memory::Memory) -> Option<&String>,
                 old: &[inspect::Link]| {
        let mut links = Vec::new();
        let mut at = next(&memory).cloned();
        while let Some(path) = at.take().filter(|_| links.len() < 32) {
            let Ok(link) = RelPath::parse(&path) else { break };
            if !link.under(&root.dir).exists() {
                // Not a project file: the global root's, trusted as it is.
                let title =
                    old.iter().find(|l| l.path == link.file()).and_then(|l| l.title.clone());
                links.push(inspect::Link { path: link.file(), title });
                break;
            }
            let found = gate.memory(root, &link);
            links.push(inspect::Link {
                path: link.file(),
                title: found.as_ref().map(|m| m.title.clone()),
            });
            at = found.as_ref().and_then(next).cloned();
        }
        links
    };
    detail.supersedes = chain(|m| m.supersedes.as_ref(), &detail.supersedes);
    detail.superseded_by = chain(|m| m.superseded_by.as_ref(), &detail.superseded_by);
    detail.frontmatter = doc.meta;
    detail.body = doc.body;
    detail.memory = memory;
    Ok(())
}

/// A listing as the agent may see it: each project memory as the user
/// trusted it, or left out and named in a note; problems that quote
/// project files replaced by a count.
pub(super) fn trusted_list(report: &mut list::Report, root: &Root, gate: &Gate) {
    let mut held = Vec::new();
    report.memories.retain_mut(|m| {
        if m.scope != Scope::Project {
            return true;
        }
        match gate.memory(root, &m.path) {
            Some(trusted) => {
                m.memory = trusted;
                true
            }
            None => {
                held.push(m.file());
                false
            }
        }
    });
    report.warnings.extend(crate::ops::visibility::held_back_note(&held));
    let before = report.problems.len();
    report.problems.retain(|p| !p.path.starts_with(&root.dir));
    let dropped = before - report.problems.len();
    report.warnings.retain(|w| !w.contains(&root.dir.display().to_string()));
    if dropped > 0 {
        crate::ops::visibility::note_dropped(&mut report.warnings, dropped);
    }
}

/// A reply to remember names only what the user trusted: a near-duplicate
/// note only when the other memory is trusted (or the note would tell the
/// agent what an untrusted file says), and of the category it lists only
/// the trusted memories, with their trusted summaries.
pub(super) fn trusted_remember(report: &mut remember::Report, root: &Root, gate: &Gate) {
    let trusted = |file: &str| RelPath::parse(file).ok().and_then(|rel| gate.memory(root, &rel));
    report.warnings.retain(|w| {
        let Some(rest) = w.strip_prefix("nearly the same as project ") else {
            return true;
        };
        rest.split_whitespace().next().is_some_and(|file| trusted(file).is_some())
    });
    if report.scope == Scope::Project {
        report
            .manifest
            .retain_mut(|(file, summary)| trusted(file).map(|m| *summary = m.summary).is_some());
    }
}
