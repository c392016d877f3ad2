//! ROOT.md within [`fit::MAX_LINES`] lines and [`fit::MAX_BYTES`] bytes:
//! the rows of its `registry` and `routing` tables and their order
//! ([`rows`]), what each table keeps ([`fit`]), and the same decided by the
//! merge driver from three versions of the file ([`merge`]).

pub mod fit;
pub mod merge;
pub mod rows;
#[cfg(test)]
mod testing;
