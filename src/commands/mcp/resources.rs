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

use crate::base::error::Error;
use crate::model::relpath::RelPath;
use crate::ops::{agent, prompt};
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
            agent::block(ctx, query, budget, None, Vec::new()).map_err(to_error)?
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
    let Some(listed) = agent::readable(ctx) else { return Ok(out) };
    for m in &listed.memories {
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
        agent::block(ctx, None, None, None, Vec::new()).map_err(to_error)?
    } else {
        let missing = || ErrorData::resource_not_found(format!("no memory at {uri}"), None);
        let rel = uri.strip_prefix(MEMORY_PREFIX).ok_or_else(missing)?;
        let rel = RelPath::parse(rel).map_err(|_| missing())?;
        agent::memory_text(ctx, &rel).map_err(to_error)?.ok_or_else(missing)?
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/markdown"),
    ]))
}

fn to_error(e: Error) -> ErrorData {
    ErrorData::invalid_params(e.to_string(), None)
}
