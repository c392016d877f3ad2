//! The block's parts as data: what the context block prints, in either format
//! or as JSON, and what it still has to record once printed.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::time::Lang;
use crate::model::roots::{Root, Scope};
use crate::model::usage::Tier;
use crate::store::session;

/// How the block is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Markdown,
    Xml,
}

/// Why an entry is in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    Rule,
    Pinned,
    File,
    Match,
}

/// One memory in the block.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub section: Section,
    pub path: String,
    pub root: Scope,
    pub title: String,
    pub kind: String,
    pub text: String,
    /// The whole body: every rule's, and pinned ones' with `--full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub age: String,
    /// How recently it was used (shown beside the age).
    pub tier: Tier,
    /// Epoch ms of the version shown.
    pub updated: i64,
    /// Older than a day: shown with a reminder to verify before relying on it.
    pub stale: bool,
}

/// A root's ROOT.md plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub root: Scope,
    pub text: String,
}

/// What did not fit the budget.
#[derive(Debug, Default, Clone, Serialize)]
pub struct LeftOut {
    /// Memories left out.
    pub count: usize,
    /// The first few of them, in rank order.
    pub names: Vec<String>,
    /// The routing table was left out.
    pub routing: bool,
    /// Its triggers.
    pub triggers: usize,
}

/// The context block.
fn trigger_path<S: serde::Serializer>(
    rows: &[(String, String)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::output::named_pairs(rows, ["trigger", "path"], s)
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub query: Option<String>,
    pub session: Option<String>,
    pub budget: usize,
    /// Tokens of the block as printed.
    pub used: usize,
    pub plans: Vec<Plan>,
    pub entries: Vec<Entry>,
    /// (trigger, file) rows, when they fit the budget; in JSON
    /// `{"trigger", "path"}`.
    #[serde(serialize_with = "trigger_path")]
    pub routing: Vec<(String, String)>,
    pub left_out: LeftOut,
    /// Tokens the hard rules need, when they alone exceed the budget.
    pub rules_over_budget: Option<usize>,
    /// Project roots not injected because they are not trusted.
    pub untrusted: Vec<PathBuf>,
    /// Project files held back: added or changed since the root was trusted.
    pub held_back: Vec<String>,
    #[serde(skip)]
    pub(super) format: Format,
    #[serde(skip)]
    pub(super) lang: Lang,
    #[serde(skip)]
    pub(super) json: bool,
    /// Per prompt: matches only, no title.
    #[serde(skip)]
    pub(super) prompt_mode: bool,
    #[serde(skip)]
    pub(super) pending: Option<Pending>,
    /// Memory files left out because they cannot be read (invalid YAML,
    /// an unresolved git conflict): on stderr, and last in JSON.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// One thing that may go into the block, in rank order.
pub(super) enum Candidate {
    Plan(Plan),
    Memory(Section, usize),
    Routing,
}

/// What a printed block still has to record.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) roots: Vec<Root>,
    pub(super) shown: Option<session::Shown>,
    pub(super) fresh: bool,
    pub(super) track: bool,
}

/// What was placed, so that it can be taken back from the end.
pub(super) enum Placed {
    Plan,
    Entry,
    Routing,
}
