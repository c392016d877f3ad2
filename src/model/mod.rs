//! The memory model: where memories live ([`relpath`], [`roots`]), a file's
//! YAML and body ([`frontmatter`]), one memory parsed and defaulted
//! ([`memory`]), generated regions ([`regions`]) and the text generated
//! into them ([`compile`], its cells [`table`], ROOT.md's bound
//! [`bound`]), path globs ([`glob`]) and the git merge driver's text
//! ([`merge`]), the names near a name for "did you mean" ([`nearest`]),
//! and a memory's relevance and tier as time passes ([`usage`]). Text in,
//! text out; the exceptions look at the
//! file system without reading a memory: finding the roots (`roots`) and a
//! name's case twins in a folder (`relpath`). Reading and writing memory
//! files is [`crate::store`]'s.

pub mod bound;
pub mod compile;
pub mod consolidation;
pub mod frontmatter;
pub mod glob;
pub mod memory;
pub mod merge;
pub mod nearest;
pub mod regions;
pub mod relpath;
pub mod roots;
pub mod table;
pub mod usage;
