//! Ranking: pure functions from memories and a query to ordered hits.
//! No file I/O here: the caller brings the memories and their hit counts.

pub mod align;
mod ceiling;
pub mod corpus;
pub mod explain;
pub mod fields;
pub mod fuse;
pub mod highlight;
pub mod params;
pub mod related;
pub mod score;
pub mod stats;
pub mod stopwords;
pub mod terms;
pub mod tokenize;
