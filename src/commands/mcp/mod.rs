//! `mem mcp`: a Model Context Protocol server on stdin/stdout. Its four tools
//! build the same `Args` the CLI builds and return the same reports, as JSON.
//!
//! Tokio and rmcp stay inside this module; the engine is synchronous and each
//! call runs to completion. stdout carries JSON-RPC only: notes go to stderr.
//! The context is resolved again per call, so the clock and the roots are fresh.

use std::io::IsTerminal;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use tracing_subscriber::filter::LevelFilter;

use crate::settings::{Context, Options};
// `error::Result`, not a bare `Result`: the rmcp macros expect the std one in scope.
use crate::base::error::{self, Error};
use crate::output::Report;

mod resources;
mod stdin;
mod tools;

const INSTRUCTIONS: &str = "\
mem is this project's long-term memory: Markdown files under .memory/ (shared through git) \
and a global root for the user. Call memory_recall at the start of a task and before \
deciding anything the team may already have decided. Save with memory_remember only what \
will still be true and useful next week: facts, decisions with their reasons, pitfalls, \
preferences, rules. Do not save what the code or git history already says, or the state \
of the current debugging session. Recall first, then update or supersede rather than duplicate.";

const EXAMPLES: &str = "\
Example (an MCP client's server entry):
  {\"command\": \"mem\", \"args\": [\"mcp\"]}

Tools: memory_context, memory_recall, memory_list, memory_inspect, memory_remember,
memory_forget. Prompts: memory-context, memory-consolidate. Resources: mem://context
and mem://memory/<category>/<slug> (the list changes as files do).
memory_recall leaves out an untrusted project root (`mem trust`; MEM_TRUST_ALL=1 in CI).
The log goes to stderr: MEM_LOG=error|warn|info|debug|trace (default warn).
The server watches its roots for changes; MEM_WATCH=off lists them by stat on every call.";

/// Serve the memory tools to an MCP client over stdin/stdout.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {}

/// Run the server until the client closes stdin.
pub fn run(opts: &Options, _args: &Args) -> error::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("cannot start the MCP runtime: {e}")))?;
    log_to_stderr();
    // A long-lived process: roots are listed from file-system events.
    crate::cache::watch::enable();
    let tier = crate::ops::tier::Kept::default();
    // The model, when one is configured, loads while the client starts.
    if let Ok(ctx) = Context::resolve(opts) {
        let tier = tier.clone();
        std::thread::spawn(move || tier.get(&ctx).1.map(|w| tracing::warn!("{w}")));
    }
    let server = Server { opts: opts.clone(), tool_router: Server::tool_router(), tier };
    if std::io::stdin().is_terminal() {
        eprintln!("mem mcp: speaks MCP on stdin/stdout; start it from an MCP client (Ctrl-D ends)");
    }
    tracing::info!("serving the memory tools, prompts and resources");
    let opts = opts.clone();
    runtime.block_on(async move {
        let running = server
            .serve((stdin::Lines::stdin(), stdin::Replies::stdout()))
            .await
            .map_err(|e| Error::input(format!("MCP session did not start: {e}")))?;
        let peer = running.peer().clone();
        // The list of resources follows the files: a memory added, removed,
        // renamed or edited (by anyone) is announced within two seconds.
        tokio::spawn(async move {
            let mut last = listing_stamp(&opts);
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                let now = listing_stamp(&opts);
                if now != last {
                    last = now;
                    if peer.notify_resource_list_changed().await.is_err() {
                        break;
                    }
                }
            }
        });
        running.waiting().await.map_err(|e| Error::input(format!("MCP session failed: {e}")))?;
        Ok(())
    })
}

/// Resources per `resources/list` page: a client pages through a large tree.
const RESOURCE_PAGE: usize = 500;

/// Files whose times are looked at every two seconds in a root that is not
/// watched (MEM_WATCH=off, or beyond the watch limit), at most: past this,
/// only folders are (an edit in place then shows at the next add, removal
/// or rename).
const STAMP_FILES: usize = 4096;

/// Where one thing the resource list depends on stands.
#[derive(Debug, PartialEq, Eq)]
enum Stamp {
    /// A file's or folder's modification time and size.
    Stat(Option<(std::time::SystemTime, u64)>),
    /// A watched root's events (see [`crate::cache::watch::events`]).
    Events(u64, u64),
}

/// What changes when a memory is added, removed, renamed or edited, or
/// trust changes: each watched root's events; else its folders and files
/// with their modification times and sizes (folders only in a tree over
/// [`STAMP_FILES`]); and the trust records'. No memory is read.
fn listing_stamp(opts: &Options) -> Vec<(std::path::PathBuf, Stamp)> {
    let Ok(ctx) = Context::resolve(opts) else { return Vec::new() };
    let stat = |p: &std::path::Path| {
        Stamp::Stat(
            std::fs::symlink_metadata(p).ok().and_then(|m| Some((m.modified().ok()?, m.len()))),
        )
    };
    let entries = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        out.sort();
        out
    };
    let mut out = Vec::new();
    let trust = crate::store::trust::records_dir(&ctx.roots.global.dir);
    out.push((trust.clone(), stat(&trust)));
    for record in entries(&trust) {
        let s = stat(&record);
        out.push((record, s));
    }
    let mut files = 0;
    for root in ctx.selected() {
        if let Some((watch, changes)) = crate::cache::watch::events(root) {
            out.push((root.dir.clone(), Stamp::Events(watch, changes)));
            continue;
        }
        out.push((root.dir.join("ROOT.md"), stat(&root.dir.join("ROOT.md"))));
        let folders = entries(&root.dir).into_iter().filter(|p| {
            p.is_dir() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
        });
        for dir in folders {
            out.push((dir.clone(), stat(&dir)));
            if files < STAMP_FILES {
                for file in entries(&dir) {
                    files += 1;
                    let s = stat(&file);
                    out.push((file, s));
                }
            }
        }
    }
    out
}

/// The log on stderr, at `$MEM_LOG` (error, warn, info, debug, trace; default warn).
/// `debug` shows the lines rmcp ignores, such as a line that is not JSON.
fn log_to_stderr() {
    let level = std::env::var("MEM_LOG").ok().filter(|v| !v.is_empty());
    let level = level.and_then(|v| v.parse().ok());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(level.unwrap_or(LevelFilter::WARN))
        .try_init();
}

/// The tool handler: the global options, resolved into a context per call.
#[derive(Debug, Clone)]
pub(super) struct Server {
    opts: Options,
    tool_router: ToolRouter<Server>,
    /// The semantic tier, loaded once.
    tier: crate::ops::tier::Kept,
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("mem", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// The request that stands for a line over the limit gets its error.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != stdin::OVERSIZED {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        let bytes = request.params.as_ref().and_then(|p| p["bytes"].as_u64());
        let size = bytes.map(|b| format!(" of {b} bytes")).unwrap_or_default();
        Err(ErrorData::invalid_request(
            format!(
                "a request line{size} is over the {} MiB limit; it was not read",
                stdin::MAX_LINE >> 20
            ),
            None,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(resources::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let ctx = self.rpc_context()?;
        let args = request.arguments.unwrap_or_default();
        resources::get_prompt(&ctx, &request.name, &args).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let ctx = self.rpc_context()?;
        // Pages of RESOURCE_PAGE; the cursor is where the next one starts.
        let all = resources::resources(&ctx)?;
        // A cursor is a position this server gave: digits, inside the list.
        let from = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&n| c.bytes().all(|b| b.is_ascii_digit()) && n > 0 && n < all.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("cursor `{c}` is not one this server gave"),
                        None,
                    )
                })?,
        };
        let page: Vec<_> = all.iter().skip(from).take(RESOURCE_PAGE).cloned().collect();
        let mut result = ListResourcesResult::with_all_items(page);
        let next = from.saturating_add(RESOURCE_PAGE);
        result.next_cursor = (next < all.len()).then(|| next.to_string());
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let ctx = self.rpc_context()?;
        resources::read(&ctx, &request.uri).map(Into::into)
    }
}

impl Server {
    /// A context for one call: the clock is now, and roots created since start are seen.
    fn context(&self) -> error::Result<Context> {
        Context::resolve(&self.opts)
    }

    /// [`Server::context`] for a prompt or resource request.
    fn rpc_context(&self) -> Result<Context, ErrorData> {
        self.context().map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// A report as JSON text, then its warnings in plain words; an error as a
/// tool error with its hint. (The CLI's notices name CLI commands: left out.)
fn answer<R: Report>(command: &str, result: error::Result<R>) -> CallToolResult {
    let report = match result {
        Ok(report) => report,
        Err(err) => return CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
    };
    // The same JSON as `mem <command> --json` writes.
    let value = serde_json::to_value(&report)
        .map(|v| crate::output::envelope(command, v, report.warnings()));
    let json = match value.and_then(|v| serde_json::to_string_pretty(&v)) {
        Ok(json) => json,
        Err(e) => return CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    };
    let mut content = vec![ContentBlock::text(json)];
    if !report.warnings().is_empty() {
        let lines: Vec<String> = report.warnings().iter().map(|w| format!("- {w}")).collect();
        content.push(ContentBlock::text(format!("warnings:\n{}", lines.join("\n"))));
    }
    CallToolResult::success(content)
}
