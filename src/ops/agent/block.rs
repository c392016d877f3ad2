//! The session-start block (`mem context`) as an agent reads it over MCP:
//! Markdown, with the notes for the agent after it.

use crate::base::error;
use crate::output::Report;
use crate::settings::Context;

/// The `mem context` block for an agent, as Markdown (empty: a line that
/// says there is nothing to show).
pub fn block(
    ctx: &Context,
    query: Option<String>,
    budget: Option<usize>,
    session: Option<String>,
    files: Vec<String>,
) -> error::Result<String> {
    use crate::ops::context;
    let options = context::Options {
        query,
        budget,
        files,
        session: session.filter(|s| !s.is_empty()),
        ..context::Options::default()
    };
    let report = context::run(ctx, &options)?;
    let text = report.human(&crate::output::Style { color: false });
    // The notice is for a person at a terminal; the block speaks to the agent.
    let notes: Vec<String> = report.warnings().to_vec();
    let mut out = if text.trim().is_empty() {
        "No memory to show: the roots hold no rules, pinned memories or matches for this task.\n"
            .to_string()
    } else {
        text
    };
    for note in notes {
        out.push_str(&format!("\n> note: {note}\n"));
    }
    Ok(out)
}
