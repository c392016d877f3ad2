//! `mem mcp`: a Model Context Protocol server on stdin/stdout. Its four tools
//! build the same `Args` the CLI builds and return the same reports, as JSON.
//!
//! Tokio and rmcp stay inside this module; the engine is synchronous and each
//! call runs to completion. stdout carries JSON-RPC only: notes go to stderr.
//! The context is resolved again per call, so the clock and the roots are fresh.

use std::io::IsTerminal;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use tracing_subscriber::filter::LevelFilter;

use crate::settings::{Context, Options};
// `error::Result`, not a bare `Result`: the rmcp macros expect the std one in scope.
use crate::base::error::{self, Error};
use crate::output::Report;

mod tools;
mod trusted;

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

Tools: memory_recall, memory_remember, memory_forget, memory_inspect.
memory_recall leaves out an untrusted project root (`mem trust`; MEM_TRUST_ALL=1 in CI).
The log goes to stderr: MEM_LOG=error|warn|info|debug|trace (default warn).";

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
    let server = Server { opts: opts.clone(), tool_router: Server::tool_router() };
    if std::io::stdin().is_terminal() {
        eprintln!("mem mcp: speaks MCP on stdin/stdout; start it from an MCP client (Ctrl-D ends)");
    }
    tracing::info!("serving memory_recall, memory_remember, memory_forget, memory_inspect");
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::input(format!("MCP session did not start: {e}")))?;
        running.waiting().await.map_err(|e| Error::input(format!("MCP session failed: {e}")))?;
        Ok(())
    })
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
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mem", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

impl Server {
    /// A context for one call: the clock is now, and roots created since start are seen.
    fn context(&self) -> error::Result<Context> {
        Context::resolve(&self.opts)
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
