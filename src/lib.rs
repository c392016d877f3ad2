//! `mem`: a filesystem-native Markdown memory engine.
//!
//! A map, from the bottom up; each folder is a layer and uses only the
//! layers listed before it (`tests/architecture.rs` fails on an upward
//! import and on an import cycle at any depth):
//!
//! 1. [`base`]: building blocks that know nothing of memories: errors, the
//!    binary codec, time, safe text, credentials in text, the parallel
//!    fan-out, the progress line.
//! 2. [`model`]: what a memory is, pure: paths and roots, frontmatter
//!    edited byte for byte, the memory and its keys, generated regions and
//!    the text generated into them, globs, the merge driver's text.
//! 3. [`rank`]: tokenizing and scoring, pure: no file I/O; term tables the
//!    cache stores are read through a trait. [`guard`] checks what is
//!    about to be written (quality, near-duplicates) on rank's tokens.
//! 4. [`store`]: the files under a root: the one way a file is opened, the
//!    one walker, reading memories, atomic writes under the root's lock,
//!    hit counts, agent sessions, and trust (only what the user trusted
//!    reaches an agent).
//! 5. [`cache`]: per-root caches in `.cache/` (file list, statistics,
//!    records, packed term tables, a delta of changed files, folder
//!    snapshots, the compile stamp), so a run reads no unchanged file and
//!    only the records a query needs; in a long-lived process, the roots
//!    watched for changes. Beside it, with the `semantic` feature, `semantic`:
//!    a local embedding model and each root's memory vectors (also in
//!    `.cache/`), fused with the ranking by [`rank::fuse`].
//!
//! 6. [`settings`] resolves flags and environment once; [`output`] prints a
//!    report for a person or as `--json`.
//! 7. [`ops`]: the operations (recall, context, compile, …) as functions
//!    taking plain option structs and returning reports, with what an
//!    agent may see (role and trust) decided in one place.
//!
//! The engine is everything above; it builds without the command line
//! (`--no-default-features`). On top of it, with the `cli` feature (clap
//! and the MCP server), `commands` holds one thin adapter per verb (its
//! clap `Args` turned into an operation's options) plus the few helpers
//! they share, and `cli` parses the command line and dispatches. The
//! layers, and that no verb uses another, are checked by
//! `tests/architecture.rs`.

pub mod base;
pub mod cache;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod commands;
pub mod guard;
pub mod model;
pub mod ops;
pub mod output;
pub mod rank;
#[cfg(feature = "semantic")]
pub mod semantic;
pub mod settings;
pub mod store;
