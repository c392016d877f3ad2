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
//! - [`visibility`]: what an agent may be shown (role and trust), in one
//!   place; [`filter`]: the criteria that pick memories.
//! - [`staged`]: a root as git's index holds it, for a pre-commit check.

pub mod compile;
pub mod context;
pub mod filter;
pub mod recall;
pub mod staged;
pub mod tier;
pub mod visibility;
