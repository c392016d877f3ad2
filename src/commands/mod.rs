//! One module per verb, plus what several share (`filter`: the flags that
//! pick memories; `complete`: what a shell completes their arguments with).
//! A verb's module holds its clap `Args`
//! and turns them into the options of an operation of [`crate::ops`] where
//! there is one; [`crate::cli`] parses the command line and calls them.

pub mod clean;
pub mod compile;
pub mod complete;
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
pub mod import;
pub mod init;
pub mod inspect;
pub mod lint;
pub mod list;
pub mod mcp;
pub mod merge_driver;
pub mod model;
pub mod prompt;
pub mod recall;
pub mod remember;
pub mod rename;
pub mod setup;
pub mod stats;
pub mod trash;
pub mod trust;
