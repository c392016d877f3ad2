//! Trust for project roots, file by file. A project root arrives with
//! `git clone` or `git pull`, and what `mem context` and the MCP server
//! inject becomes an instruction to an agent; so only content the user
//! trusted is injected.
//!
//! `mem trust` records, in the global root (`.trust/<key>.json`, per
//! device, outside any repository), the project root's canonical path, its
//! identity and a digest of every file that can be injected: the
//! hand-written text of `ROOT.md` (outside the generated regions) and every
//! memory file, whole. A file whose digest is not recorded (added or changed
//! since, from outside `mem`) is held back and named; the rest of the root
//! still works. A write made through `mem` on a trusted root records what
//! it wrote ([`wrote`]).
//!
//! The identity is a random id kept in the project root's own (git-ignored)
//! `.state.json` when it is first trusted: a different repository cloned to
//! a trusted path has no such id, so it is not trusted.

mod gate;
mod record;
mod review;

pub use gate::{Gate, RootMd};
pub use record::{ROOT_MD, Record, digest, key, load, prose, record_path, records_dir};
pub use review::{
    Review, Reviewed, record, renamed, review, trust_new_root, untrust, wrote, wrote_root_md,
};
