//! Ranking: pure functions from memories and a query to ordered hits.
//! No file I/O here: the caller brings the memories and their hit counts.

pub mod corpus;
pub mod explain;
pub mod highlight;
pub mod score;
pub mod stopwords;
pub mod tokenize;
