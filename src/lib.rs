//! `mem`: a filesystem-native Markdown memory engine.
//!
//! A map, from the bottom up. Each layer uses only the ones above it in
//! this list (`tests/architecture.rs` fails on an import cycle at any
//! depth, and on the engine naming the command line):
//!
//! 1. [`base`]: building blocks that know nothing of memories: errors, the
//!    binary codec, time, safe text, credentials in text, the parallel
//!    fan-out, the progress line.
//! 2. The model: [`relpath`] and [`roots`] (where memories live),
//!    [`frontmatter`] (a file's YAML and body, edited byte for byte),
//!    [`memory`] (one memory, parsed and defaulted), [`regions`],
//!    [`glob`], [`merge`] (the git merge driver's text), [`compile`]
//!    (generated text, pure).
//! 3. [`rank`]: tokenizing and scoring, pure: no file I/O; term tables the
//!    index stores are read through a trait. [`guard`] checks what is
//!    about to be written (quality, near-duplicates) on rank's tokens.
//! 4. File access: [`files`] is the one way a file under a root is opened
//!    (regular files only, links only within the root, every read
//!    bounded); [`scan`] lists a root and reads its memories;
//!    [`write`](mod@write) changes files (atomically, through open folders,
//!    under the root's write lock); [`state`] keeps hit counts, [`session`]
//!    what an agent's session was shown, [`trust`] what the user trusted
//!    of a project root: only that reaches an agent.
//! 5. [`index`]: per-root caches (file list, statistics, records, packed
//!    term tables, a delta of changed files, folder snapshots, the compile
//!    stamp), so a run reads no unchanged file and only the records a
//!    query needs.
//!
//! The engine is everything above; it builds without the command line
//! (`--no-default-features`). With the `cli` feature: [`settings`]
//! resolves flags and environment once, [`commands`] holds one module per
//! verb (and the MCP server), [`cli`] parses the command line and
//! dispatches, and [`output`] prints a report for a person or as `--json`.

pub mod base;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod commands;
pub mod compile;
pub mod files;
pub mod frontmatter;
pub mod glob;
pub mod guard;
pub mod index;
pub mod memory;
pub mod merge;
pub mod output;
pub mod rank;
pub mod regions;
pub mod relpath;
pub mod roots;
pub mod scan;
pub mod session;
pub mod settings;
pub mod state;
pub mod trust;
pub mod write;
