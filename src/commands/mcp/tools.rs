//! The tools: each builds the options of an operation, as the command line
//! does, has [`crate::ops::agent`] run it as an agent may, and answers with
//! the JSON the command line writes.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, RequestMetaObject};
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use super::{Server, answer};
// `error::Result`, not a bare `Result`: the rmcp macros expect the std one in scope.
use crate::base::error::Error;
use crate::ops::filter::Filter;
use crate::ops::{agent, forget, inspect, list, recall, remember};

/// memory_recall's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RecallParams {
    /// What to look for, in any language: a few words or a question
    query: String,
    /// How many results to return (default 10)
    limit: Option<u16>,
    /// Only this category, e.g. "decisions" or "pitfalls"
    category: Option<String>,
    /// Only this kind: fact, rule, decision, preference, pitfall, lesson, reference, …
    kind: Option<String>,
    /// Only memories with this tag
    tag: Option<String>,
    /// The agent session: memories it was already shown (by `mem context` or an
    /// earlier call) are left out, and these results are remembered
    session_id: Option<String>,
    /// false: do not count these results as hits (for scripts and evaluation)
    track: Option<bool>,
}

/// memory_remember's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RememberParams {
    /// The memory, as "category/slug", e.g. "decisions/orm" or "pitfalls/tz-offset"
    path: String,
    /// The Markdown body; required for a new memory, omit it on update to keep the body
    body: Option<String>,
    /// Display title (default: the body's first heading)
    title: Option<String>,
    /// One-line summary (default: the body's first paragraph)
    summary: Option<String>,
    /// The key point, one line
    highlight: Option<String>,
    /// fact, rule, decision, preference, pitfall, lesson, reference, …
    kind: Option<String>,
    /// Phrases that should pull this memory into context (replaces the list)
    load_when: Option<Vec<String>>,
    /// Tags (replaces the list)
    tags: Option<Vec<String>>,
    /// true: always show this memory first; false: stop pinning it
    pin: Option<bool>,
    /// The older memory this one replaces, as "category/slug" (it gets superseded_by)
    supersedes: Option<String>,
    /// Where it goes: "project" (the default when the project has a memory; shared with
    /// the team through git) or "global" (the user's own, for every project)
    root: Option<String>,
    /// Private to this agent's own role ($MEM_ROLE; only agents acting as it see the
    /// memory); omit it for a memory every agent shares. Another role is refused
    role: Option<String>,
    /// true: create the category even though its name is close to one that exists (a new
    /// category within two edits of an existing one is refused as a likely typo)
    new_category: Option<bool>,
    /// How much it matters: "high", "medium" (the default) or "low". Unused for 30 days,
    /// a memory counts one level lower
    relevance: Option<String>,
    /// This agent session's id: added to the memory's source_sessions, so consolidation
    /// knows the session is covered (a client's `_meta.sessionID` is used when omitted)
    session_id: Option<String>,
}

/// memory_context's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ContextParams {
    /// The user's request or the task at hand: the memories that best match it are added
    /// to the hard rules and pinned memories
    query: Option<String>,
    /// Token cap on the whole block (default 2000)
    budget: Option<usize>,
    /// The agent session: what it was shown before is not repeated
    session_id: Option<String>,
    /// Project files the task touches: memories whose `paths` match them are added
    files: Option<Vec<String>>,
}

/// memory_list's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ListParams {
    /// Only this category, e.g. "decisions"
    category: Option<String>,
    /// Only this kind
    kind: Option<String>,
    /// Only memories with this tag
    tag: Option<String>,
    /// "name" (default), "recent" (last updated first), "hits" (most recalled first) or
    /// "recalled" (last recalled first)
    sort: Option<String>,
    /// At most this many
    limit: Option<u32>,
}

/// A memory path, for memory_forget.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PathParams {
    /// The memory, as "category/slug"
    path: String,
}

/// memory_inspect's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct InspectParams {
    /// A memory, as "category/slug"; omit it for the roots, counts and problems
    path: Option<String>,
}

/// The session a memory_remember call is made in: its `session_id` (one
/// that cannot name a session is refused), else the `_meta.sessionID` a
/// client sends (OpenCode does; ignored when it cannot name one), else
/// none here (`$MEM_SESSION` then applies).
fn session_of(arg: Option<String>, meta: &RequestMetaObject) -> Result<Option<String>, Error> {
    let valid = crate::store::session::valid_id;
    if let Some(id) = arg.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) {
        if !valid(&id) {
            return Err(Error::input("session_id is not a session id")
                .hint(format!("a session id is {}", crate::store::session::ID_RULE)));
        }
        return Ok(Some(id));
    }
    let sent = meta.0.0.get("sessionID").and_then(|v| v.as_str()).map(str::trim);
    Ok(sent.filter(|id| valid(id)).map(str::to_string))
}

#[tool_router(vis = "pub(super)")]
impl Server {
    /// Search the project's and the user's memories (facts, decisions, pitfalls, preferences,
    /// rules) and return the best matches, ranked, as JSON. Call it at the start of a task,
    /// before a decision the team may already have made, and before memory_remember to find
    /// a memory to update instead of duplicating it. Read a full memory with memory_inspect.
    #[tool]
    fn memory_recall(&self, Parameters(p): Parameters<RecallParams>) -> CallToolResult {
        let limit = p.limit.unwrap_or(recall::DEFAULT_LIMIT).max(1);
        let options = recall::Options {
            limit: usize::from(limit),
            filter: Filter { category: p.category, kind: p.kind, tag: p.tag, ..Filter::default() },
            track: p.track != Some(false),
            trusted: true,
            ..recall::Options::new(p.query)
        };
        answer(
            "recall",
            self.context().and_then(|ctx| {
                agent::recall(&ctx, &options, p.session_id.as_deref(), Some(&self.tier))
            }),
        )
    }
    /// Save or update one durable memory as a Markdown file ("category/slug"). Worth saving:
    /// facts about the project or its environment, decisions with their reasons, pitfalls
    /// and how to avoid them, the user's preferences, rules to follow. Not worth saving:
    /// code patterns anyone can read from the repository, what git history already records,
    /// transient debugging state or the progress of the current task. Recall first
    /// (memory_recall): update the existing memory, or pass supersedes, rather than add a
    /// near-duplicate. Credentials are refused. Read the warnings in the result: they flag
    /// a vague, transient or too-short text and near-duplicates.
    #[tool]
    fn memory_remember(
        &self,
        Parameters(p): Parameters<RememberParams>,
        meta: RequestMetaObject,
    ) -> CallToolResult {
        if p.body.as_deref() == Some("-") {
            return answer::<remember::Report>(
                "remember",
                Err(Error::input("body `-` would read stdin").hint("pass the text itself as body")),
            );
        }
        let relevance = match p.relevance.as_deref().map(str::parse).transpose() {
            Ok(level) => level,
            Err(why) => return answer::<remember::Report>("remember", Err(Error::input(why))),
        };
        let session = match session_of(p.session_id, &meta) {
            Ok(session) => session,
            Err(e) => return answer::<remember::Report>("remember", Err(e)),
        };
        let args = remember::Options {
            path: p.path,
            body: p.body,
            title: p.title,
            summary: p.summary,
            highlight: p.highlight,
            kind: p.kind,
            load_when: p.load_when.unwrap_or_default(),
            tags: p.tags.unwrap_or_default(),
            pin: p.pin == Some(true),
            unpin: p.pin == Some(false),
            role: p.role.filter(|r| !r.is_empty()),
            supersedes: p.supersedes,
            allow_secret: false,
            new_category: p.new_category == Some(true),
            relevance,
            session,
            as_agent: true,
        };
        answer(
            "remember",
            self.context().and_then(|ctx| agent::remember(ctx, &args, p.root.as_deref())),
        )
    }

    /// Forget a memory that is wrong or no longer true: the file moves to the root's .trash/
    /// (the user can restore it). To replace a memory with a newer one, prefer
    /// memory_remember with supersedes, which keeps the history.
    #[tool]
    fn memory_forget(&self, Parameters(p): Parameters<PathParams>) -> CallToolResult {
        let args = forget::Options { path: p.path, dry_run: false, as_agent: true };
        answer("forget", self.context().and_then(|ctx| agent::forget(&ctx, &args)))
    }

    /// Show one memory in full (metadata, body, version chain, saved versions) as JSON; or,
    /// without a path, the memory roots with their counts, shadowed files and unreadable files.
    #[tool]
    fn memory_inspect(&self, Parameters(p): Parameters<InspectParams>) -> CallToolResult {
        let args = inspect::Options { path: p.path, secrets: false, as_agent: true };
        answer("inspect", self.context().and_then(|ctx| agent::inspect(ctx, &args)))
    }

    /// The memory this session should start with, as Markdown: the project's plan and hard
    /// rules in full, pinned memories, and (with a query) the memories that best match the
    /// task, within a token budget. Call it at the start of a session (or after the context
    /// was compacted) when the host did not inject it; pass the session id so nothing is
    /// repeated. Follow the rules it lists.
    #[tool]
    fn memory_context(&self, Parameters(p): Parameters<ContextParams>) -> CallToolResult {
        let query = p.query.filter(|q| !q.trim().is_empty());
        if query.as_deref() == Some("-") {
            let e = Error::input("query `-` would read stdin").hint("pass the text itself");
            return CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
        }
        let result = self.context().and_then(|mut ctx| {
            ctx.json = false;
            agent::block(&ctx, query, p.budget, p.session_id, p.files.unwrap_or_default())
        });
        match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        }
    }

    /// List memories by metadata (path, root, title, kind, summary, tags, dates) as JSON,
    /// filtered by category, kind or tag; no bodies. Use it to see what a category holds
    /// before adding to it; read one memory in full with memory_inspect.
    #[tool]
    fn memory_list(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        let sort = match p.sort.as_deref().unwrap_or("name") {
            "name" => list::Sort::Name,
            "recent" => list::Sort::Recent,
            "hits" => list::Sort::Hits,
            "recalled" => list::Sort::Recalled,
            other => {
                let e = Error::input(format!("sort `{other}` is not an order"))
                    .hint("use name, recent, hits or recalled");
                return answer::<list::Report>("list", Err(e));
            }
        };
        let filter = Filter { category: p.category, kind: p.kind, tag: p.tag, ..Filter::default() };
        let args = list::Options { filter, sort, limit: p.limit.filter(|n| *n > 0), long: false };
        answer("list", self.context().and_then(|ctx| agent::list(ctx, &args)))
    }
}
