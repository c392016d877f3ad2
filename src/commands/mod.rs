//! One module per verb, plus what several share (`agent`: what may reach an
//! agent; `staged`: what a commit will hold; `naming`: what is said of
//! a name that is new, mistyped or crosses the hard-rule boundary). Each verb has its clap
//! `Args`, a `run` that does the work and returns a report, and the
//! report's human rendering; [`crate::cli`] parses the command line and
//! calls them.

pub mod agent;
pub mod clean;
pub mod compile;
pub mod completions;
pub mod consolidate;
pub mod context;
pub mod doctor;
pub mod edit;
pub mod export;
pub mod filter;
pub mod forget;
pub mod history;
pub mod hook;
pub mod hostfiles;
pub mod import;
pub mod init;
pub mod inspect;
pub mod lint;
pub mod list;
pub mod mcp;
pub mod merge_driver;
pub mod model;
pub mod naming;
pub mod pending;
pub mod prompt;
pub mod recall;
pub mod remember;
pub mod rename;
pub mod setup;
pub mod staged;
pub mod stats;
pub mod tier;
pub mod trash;
pub mod trust;
