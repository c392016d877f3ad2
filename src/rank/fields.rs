//! The scored fields of a memory and a term's counts in each.

use serde::Serialize;

/// Number of scored fields.
pub const FIELDS: usize = 7;

/// The parts of a memory that are scored, each with its own weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Title,
    Summary,
    Highlight,
    LoadWhen,
    Tags,
    Path,
    Body,
}

impl Field {
    /// Every field, in index order.
    pub const ALL: [Field; FIELDS] = [
        Field::Title,
        Field::Summary,
        Field::Highlight,
        Field::LoadWhen,
        Field::Tags,
        Field::Path,
        Field::Body,
    ];

    /// The field's name as shown by `--explain`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Summary => "summary",
            Field::Highlight => "highlight",
            Field::LoadWhen => "load_when",
            Field::Tags => "tags",
            Field::Path => "path",
            Field::Body => "body",
        }
    }
}

/// One document's counts of one term, per field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub doc: u32,
    pub tf: [u16; FIELDS],
}
