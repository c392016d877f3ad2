//! What block to build: the options of [`super::run`].

use std::path::PathBuf;

use crate::model::usage::Relevance;
use crate::store::session;

use super::report::Format;

/// What block to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// Add the memories that best match this text.
    pub query: Option<String>,
    /// Per prompt: matches only (the session start gave the rest), and the
    /// prompt's budget by default.
    pub prompt_mode: bool,
    /// Why the session starts (a hook's `source`): a resume keeps what the
    /// session was shown.
    pub source: Option<session::Source>,
    /// The folder the agent works in, when a hook says: its project root is
    /// the one read, unless one was named.
    pub cwd: Option<PathBuf>,
    /// Token cap on everything printed (default: [`super::SESSION_BUDGET`], or
    /// [`super::PROMPT_BUDGET`] per prompt).
    pub budget: Option<usize>,
    /// Add memories whose `paths:` globs match these project files.
    pub files: Vec<String>,
    pub format: Format,
    /// Act as this agent role (default: the context's role).
    pub role: Option<String>,
    /// Count hits for the matches shown.
    pub track: bool,
    /// Pinned memories with their whole body (rules always have theirs).
    pub full: bool,
    /// The agent session this block is for (what it was shown is remembered).
    pub session: Option<String>,
    /// Pinned memories and matches only at or above this relevance in effect.
    pub min_relevance: Relevance,
}

impl Default for Options {
    /// The session-start block in Markdown, tracked, at medium relevance.
    fn default() -> Options {
        Options {
            query: None,
            prompt_mode: false,
            source: None,
            cwd: None,
            budget: None,
            files: Vec::new(),
            format: Format::Markdown,
            role: None,
            track: true,
            full: false,
            session: None,
            min_relevance: Relevance::Medium,
        }
    }
}
