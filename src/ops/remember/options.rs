//! What to remember: the options of [`super::run`].

/// Create or update a memory.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The memory, as `category/slug`
    pub path: String,
    /// The Markdown body; `-` reads it from stdin. On update, omit it to keep the body
    pub body: Option<String>,
    /// Display title (default: the body's first heading)
    pub title: Option<String>,
    /// One-line summary (default: the body's first paragraph)
    pub summary: Option<String>,
    /// The key point, one line
    pub highlight: Option<String>,
    /// fact, rule, decision, preference, pitfall, lesson, reference, …
    pub kind: Option<String>,
    /// A phrase that should pull this memory in (repeatable; replaces the list)
    pub load_when: Vec<String>,
    /// A tag (repeatable, or comma-separated; replaces the list)
    pub tags: Vec<String>,
    /// Always show this memory first
    pub pin: bool,
    /// Stop pinning this memory
    pub unpin: bool,
    /// Make the memory private to one agent role
    pub role: Option<String>,
    /// How much it matters: high, medium (the default) or low; the level in
    /// effect drops one step per 30 days without use
    pub relevance: Option<crate::model::usage::Relevance>,
    /// The agent session this is written in, added to `source_sessions`
    /// [env: MEM_SESSION]
    pub session: Option<String>,
    /// The older memory this one replaces (it gets `superseded_by`)
    pub supersedes: Option<String>,
    /// Save even though the text looks like it holds a credential
    pub allow_secret: bool,
    /// Create the category even though its name is close to one that exists
    /// (refused otherwise, as a likely typo)
    pub new_category: bool,
    /// Written by an agent acting as `$MEM_ROLE` (`mem mcp`): another role's
    /// private memories are not listed or named in the reply.
    pub as_agent: bool,
}
