//! The engine's operations: what a verb does, as library functions that
//! take plain option structs and return reports, with no command line in
//! sight. `mem`'s verbs (`crate::commands`) and its MCP server parse their
//! input into these options and print the reports; an embedding program
//! (`examples/eval.rs`) calls them directly.
//!
//! - [`recall`]: the memories that best answer a query, ranked (and fused
//!   with the semantic [`tier`] when a model is configured).
//! - [`context`]: the block an agent gets at session start and per prompt.
//! - [`compile`]: regenerate the indexes and ROOT.md's tables; every write
//!   refreshes its root through it.
//! - [`remember`], [`forget`] (and restore), [`rename`], [`import`],
//!   [`clean`]: the writes, each under the root's lock ([`writing`]) and
//!   followed by a recompile; [`list`], [`inspect`], [`stats`], [`prompt`]:
//!   the reads.
//! - [`trust`]: the user's review of a project root's files, recorded
//!   (or revoked) as what may reach an agent.
//! - [`visibility`]: what an agent may be shown (role and trust), in one
//!   place, and [`agent`]: the operations as an agent asks for them
//!   (`mem mcp`), with those rules applied. [`filter`]: the criteria that
//!   pick memories.
//! - [`export`]: every memory as one JSON document or Markdown file, or
//!   the project's rules and pinned memories as the files agent hosts read
//!   ([`hostfiles`], which `mem setup` writes too); [`exchange`]: the
//!   document `mem export` writes and `mem import` reads.
//! - [`trash`]: what was forgotten, newest first; [`history`]: a memory's
//!   saved versions.
//! - [`writing`]: a root locked for a write that recompiles after it,
//!   even after a crash; [`naming`]: what is said of a name that is new,
//!   mistyped or crosses the hard-rule boundary.
//! - [`git`]: running git, and a root as git's index holds it, for the
//!   pre-commit check.

pub mod agent;
pub mod clean;
pub mod compile;
pub mod context;
pub mod exchange;
pub mod export;
pub mod filter;
pub mod forget;
pub mod git;
pub mod history;
pub mod hostfiles;
pub mod import;
pub mod inspect;
pub mod list;
pub mod naming;
pub mod prompt;
pub mod recall;
pub mod remember;
pub mod rename;
pub mod stats;
pub mod tier;
pub mod trash;
pub mod trust;
pub mod visibility;
pub mod writing;
