//! Prompts and resources: the session-start block and the consolidation
//! instructions as prompts; the block (`mem://context`) and each memory
//! (`mem://memory/<category>/<slug>`) as resources. All of it passes the
//! same trust gate as the tools: an untrusted project root is left out, a
//! trusted one is read as the bytes the user trusted.

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role,
};

use super::trusted::trusted_list;
use crate::base::error::Error;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::ops::filter::Filter;
use crate::ops::list;
use crate::ops::prompt;
use crate::ops::visibility;
use crate::ops::visibility::visible_to;
use crate::settings::Context;

/// The block as a resource.
pub const CONTEXT_URI: &str = "mem://context";
/// A memory as a resource: this, then `<category>/<slug>`.
pub const MEMORY_PREFIX: &str = "mem://memory/";

/// The prompts the server offers.
pub fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "memory-context",
            Some(
                "The project's memory for this session: plan, hard rules, pinned memories and the best matches for a task",
            ),
            Some(vec![
                PromptArgument::new("query")
                    .with_description("The task: memories that best match it are added"),
                PromptArgument::new("budget").with_description("Token cap (default 2000)"),
            ]),
        ),
        Prompt::new(
            "memory-consolidate",
            Some(
                "Instructions to turn what this session learned into memories, with the list of memories there are",
            ),
            Some(vec![
                PromptArgument::new("since")
                    .with_description("Only work since this date (YYYY-MM-DD)"),
            ]),
        ),
    ]
}

/// One prompt, filled in.
pub fn get_prompt(
    ctx: &Context,
    name: &str,
    args: &serde_json::Map<String, serde_json::Value>,
) -> Result<GetPromptResult, ErrorData> {
    let arg = |key: &str| {
        args.get(key).and_then(|v| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let text = match name {
        "memory-context" => {
            let budget = match arg("budget") {
                None => None,
                Some(b) => Some(b.trim().parse::<usize>().map_err(|_| {
                    ErrorData::invalid_params(
                        format!("budget `{b}` is not a number of tokens"),
                        None,
                    )
                })?),
            };
            let query = arg("query").filter(|q| !q.trim().is_empty() && q != "-");
            super::block::block(ctx, query, budget, None, Vec::new()).map_err(to_error)?
        }
        "memory-consolidate" => {
            // The instructions and the list of memories, as the CLI prints them.
            let report =
                prompt::run(ctx, &prompt::Options { since: arg("since") }).map_err(to_error)?;
            crate::output::Report::human(&report, &crate::output::Style { color: false })
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{other}`: there are memory-context and memory-consolidate"),
                None,
            ));
        }
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]))
}

/// The template every memory's address follows.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{MEMORY_PREFIX}{{category}}/{{slug}}"), "memory")
            .with_description("One memory: its frontmatter and body, as Markdown")
            .with_mime_type("text/markdown"),
    ]
}

/// The block, then every memory the agent may read.
pub fn resources(ctx: &Context) -> Result<Vec<Resource>, ErrorData> {
    let mut out = vec![
        Resource::new(CONTEXT_URI, "context")
            .with_title("Memory for this session")
            .with_description(
                "The plan, hard rules and pinned memories, as `mem context` prints them",
            )
            .with_mime_type("text/markdown"),
    ];
    let (ctx, _, gate) = visibility::gated(ctx.clone());
    let args = list::Options {
        filter: Filter::default(),
        sort: list::Sort::Name,
        limit: None,
        long: false,
    };
    let Ok(mut listed) = list::run(&ctx, &args) else { return Ok(out) };
    if let Some((root, gate)) = &gate {
        trusted_list(&mut listed, root, gate);
    }
    for m in listed.memories.iter().filter(|m| visible_to(m, ctx.role.as_ref())) {
        let rel = &m.path;
        out.push(
            Resource::new(format!("{MEMORY_PREFIX}{}/{}", rel.category, rel.slug), m.file())
                .with_title(m.title.clone())
                .with_description(format!("{} ({}, {} root)", m.summary, m.kind, m.scope.name()))
                .with_mime_type("text/markdown"),
        );
    }
    Ok(out)
}

/// The text behind one address.
pub fn read(ctx: &Context, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let text = if uri == CONTEXT_URI {
        super::block::block(ctx, None, None, None, Vec::new()).map_err(to_error)?
    } else {
        let missing = || ErrorData::resource_not_found(format!("no memory at {uri}"), None);
        let rel = uri.strip_prefix(MEMORY_PREFIX).ok_or_else(missing)?;
        let rel = RelPath::parse(rel).map_err(|_| missing())?;
        memory_text(ctx, &rel)?.ok_or_else(missing)?
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/markdown"),
    ]))
}

/// A memory's file as the agent may read it: the visible copy (project
/// first); a project file only as the user trusted it; another role's
/// private memory not at all.
fn memory_text(ctx: &Context, rel: &RelPath) -> Result<Option<String>, ErrorData> {
    // Another role's memory first: as absent, whatever its trust.
    if super::roles::hidden(ctx, &rel.file()) {
        return Ok(None);
    }
    let (ctx, _, gate) = visibility::gated(ctx.clone());
    let Some((root, file)) = ctx.locate(rel).map_err(to_error)? else { return Ok(None) };
    let text = match &gate {
        Some((project, gate)) if root.scope == Scope::Project => {
            let held = || {
                ErrorData::invalid_params(
                    format!(
                        "{rel} was added or changed since the user trusted this project, so it is held back"
                    ),
                    None,
                )
            };
            let memory = gate.memory(project, rel).ok_or_else(held)?;
            if !visible_to(&memory, ctx.role.as_ref()) {
                return Ok(None);
            }
            gate.text(project, rel).ok_or_else(held)?
        }
        _ => {
            let text = crate::store::files::text(&root.dir, &file).map_err(to_error)?;
            let Some(text) = text else { return Ok(None) };
            let doc = crate::model::frontmatter::Document::parse(&text)
                .map_err(|e| ErrorData::invalid_params(format!("{rel}: {}", e.message), None))?;
            let memory =
                crate::model::memory::Memory::from_document(rel.clone(), root.scope, &doc, 0).0;
            if !visible_to(&memory, ctx.role.as_ref()) {
                return Ok(None);
            }
            text
        }
    };
    Ok(Some(text))
}

fn to_error(e: Error) -> ErrorData {
    ErrorData::invalid_params(e.to_string(), None)
}
