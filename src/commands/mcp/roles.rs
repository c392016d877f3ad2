//! What an agent acting as a role (`$MEM_ROLE`) may touch over MCP: a
//! memory private to another role is, to it, a memory that does not exist.

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::settings::Context;

/// The role a memory is private to: `None` when there is no such file (or
/// it cannot be read), `Some(None)` when it is shared.
fn role_of(ctx: &Context, rel: &RelPath) -> Option<Option<String>> {
    let (root, file) = ctx.locate(rel).ok()??;
    let text = crate::store::files::text(&root.dir, &file).ok()??;
    let doc = Document::parse(&text).ok()?;
    let memory = crate::model::memory::Memory::from_document(rel.clone(), root.scope, &doc, 0).0;
    Some(memory.role)
}

/// Whether the memory at `path` (`category/slug`) is another role's.
pub(super) fn hidden(ctx: &Context, path: &str) -> bool {
    let Ok(rel) = RelPath::parse(path) else { return false };
    match role_of(ctx, &rel) {
        Some(role) => role.is_some() && role.as_ref() != ctx.role.as_ref(),
        None => false,
    }
}

/// A read or a removal of another role's memory: answered word for word
/// as for a memory that is not there (its "did you mean" names only what
/// the role sees).
pub(super) fn refuse_hidden(ctx: &Context, path: &str) -> Result<()> {
    if hidden(ctx, path)
        && let Ok(rel) = RelPath::parse(path)
    {
        return Err(crate::commands::naming::no_such_memory(ctx, &rel, true));
    }
    Ok(())
}

/// `supersedes` naming another role's memory: answered as for one that is
/// not there, and nothing is written to it.
pub(super) fn refuse_hidden_supersedes(ctx: &Context, path: &str) -> Result<()> {
    if hidden(ctx, path) {
        let shown = RelPath::parse(path).map(|r| r.file()).unwrap_or_else(|_| path.to_string());
        return Err(Error::input(format!("--supersedes {shown}: no such memory"))
            .hint("check the path with `mem list`"));
    }
    Ok(())
}

/// A write over another role's memory: refused, without a word of it.
pub(super) fn refuse_overwrite(ctx: &Context, path: &str) -> Result<()> {
    if hidden(ctx, path) {
        return Err(Error::input(format!("{path} is taken by a memory this agent cannot see"))
            .hint("choose another path"));
    }
    Ok(())
}
