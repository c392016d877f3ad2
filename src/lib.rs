//! `mem`: a filesystem-native Markdown memory engine.
//!
//! The pipeline, in the order a command runs it:
//!
//! 1. [`context`] resolves flags and environment once: the [`roots`] (global
//!    and project), the clock, the output format.
//! 2. [`scan`] walks each root and reads every `<category>/<slug>.md` through
//!    [`frontmatter`] into a [`memory::Memory`]; files it cannot read are
//!    reported as problems, never aborts.
//! 3. A command in [`commands`] does its work and builds a report; [`write`]
//!    is the only place that changes files (atomically, inside a root).
//! 4. [`output`] prints the report for a person or as `--json`.

pub mod cache;
pub mod cli;
pub mod commands;
pub mod compile;
pub mod context;
pub mod error;
pub mod frontmatter;
pub mod glob;
pub mod guard;
pub mod memory;
pub mod merge;
pub mod output;
pub mod progress;
pub mod rank;
pub mod regions;
pub mod relpath;
pub mod roots;
pub mod scan;
pub mod state;
pub mod time;
pub mod trust;
pub mod write;
