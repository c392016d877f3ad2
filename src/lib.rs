//! `mem`: a filesystem-native Markdown memory engine.
//!
//! The pipeline, in the order a command runs it:
//!
//! 1. [`context`] resolves flags and environment once: the [`roots`] (global
//!    and project), the clock, the output format.
//! 2. [`scan`] walks each root and reads every `<category>/<slug>.md` through
//!    [`frontmatter`] into a [`memory::Memory`]; files it cannot read are
//!    reported as problems, never aborts. [`files`] is the one way a file
//!    under a root is opened: regular files only, links only within the
//!    root, every read bounded.
//!    [`index`] keeps what that yields per root (file list, statistics,
//!    metadata records, packed term tables, and a delta of the files
//!    changed since), so a run re-reads no unchanged file and reads only
//!    the records a query needs; it also records what each category folder
//!    held and a root that compiled clean. [`base`] holds the building
//!    blocks everything stands on: errors, the binary codec, time, safe
//!    text, the parallel fan-out.
//! 3. [`rank`] scores memories for a query (pure, no I/O); [`compile`] turns
//!    frontmatter into generated text (pure); [`guard`] checks what is about
//!    to be written.
//! 4. A command in [`commands`] does its work and builds a report; [`write`](mod@write)
//!    changes files under a root (atomically, through open folders, under
//!    the root's write lock), [`state`] keeps hit counts, [`session`] what
//!    an agent's session was shown, and [`trust`] what the user trusted of
//!    a project root: only that reaches an agent.
//! 5. [`output`] prints the report for a person (control characters
//!    escaped) or as `--json`.

pub mod base;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod commands;
pub mod compile;
pub mod context;
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
pub mod state;
pub mod trust;
pub mod write;
