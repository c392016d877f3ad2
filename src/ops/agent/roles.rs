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
pub fn hidden(ctx: &Context, path: &str) -> bool {
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
        return Err(crate::ops::naming::no_such_memory(ctx, &rel, true));
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

/// A memory made private to a role the agent does not act as: refused. An
/// agent writes shared memories or its own role's; only the user, at the
/// command line, writes for any role (else one agent could plant a pinned
/// memory in another's context).
pub(super) fn refuse_foreign_role(ctx: &Context, role: Option<&str>) -> Result<()> {
    let Some(role) = role else { return Ok(()) };
    if ctx.role.as_deref() == Some(role) {
        return Ok(());
    }
    let acting = match &ctx.role {
        Some(own) => format!("acts as role `{own}`"),
        None => "acts as no role ($MEM_ROLE is not set)".to_string(),
    };
    Err(Error::input(format!(
        "role `{role}`: this agent {acting}, and writes only shared memories or its own role's"
    ))
    .hint("leave role out for a shared memory; a memory for another role is the user's to write, with `mem remember --role`"))
}

/// A memory private to a role superseding a shared one: refused, for the
/// shared memory would then drop out of every other role's context in
/// favour of one they cannot see.
pub(super) fn refuse_private_over_shared(
    ctx: &Context,
    path: &str,
    role: Option<&str>,
    old: &str,
) -> Result<()> {
    let own = |p: &str| RelPath::parse(p).ok().and_then(|rel| role_of(ctx, &rel));
    let private = role.is_some() || own(path).is_some_and(|r| r.is_some());
    let shared_old = own(old).is_some_and(|r| r.is_none());
    if private && shared_old {
        return Err(Error::input(format!(
            "--supersedes {old}: a memory private to a role cannot supersede a shared one"
        ))
        .hint("supersede it with a shared memory (leave role out), or leave it as it is"));
    }
    Ok(())
}
