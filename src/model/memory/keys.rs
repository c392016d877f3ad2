//! The frontmatter keys `mem` reads: the one list of them, with the shape
//! each value must have. A memory is read from a document key by key
//! through this list, the index's records are written and read through it,
//! and `lint` names unknown keys against it. Adding a key: a line in
//! [`KEYS`], a field of [`Memory`] with its arms in [`Memory::field`] and
//! [`Memory::set_field`], and the index's format number.

use yaml_serde::Value;

use super::{
    Memory, date_ms, default_kind, first_heading, first_paragraph, flag, scalar, string_list,
    with_md,
};
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::model::usage::Relevance;

/// The shape a key's value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One line of text.
    Text,
    /// Epoch milliseconds or an ISO 8601 date.
    Date,
    /// A list of text, or one line split on commas.
    List,
    /// True or false.
    Flag,
    /// A relevance level: high, medium or low.
    Level,
}

impl Shape {
    /// What a value of this shape should be, for a message.
    fn want(self) -> &'static str {
        match self {
            Shape::Text => "a single line of text",
            Shape::Date => "epoch milliseconds or an ISO 8601 date",
            Shape::List => "a list of text, or one line split on commas",
            Shape::Flag => "true or false",
            Shape::Level => Relevance::VALID,
        }
    }

    /// `v` read as this shape; None when it has another.
    fn read(self, v: &Value) -> Option<Field> {
        match self {
            Shape::Text => scalar(v).map(|s| Field::Text(Some(s))),
            Shape::Date => date_ms(v).map(Field::Date),
            Shape::List => string_list(v).map(Field::List),
            Shape::Flag => flag(v).map(Field::Flag),
            Shape::Level => scalar(v).and_then(|s| s.parse().ok()).map(Field::Level),
        }
    }
}

/// One frontmatter key.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    pub shape: Shape,
    /// False for a key `mem` accepts but does not keep (`id`, which older
    /// versions wrote).
    pub kept: bool,
}

const fn key(name: &'static str, shape: Shape) -> Key {
    Key { name, shape, kept: true }
}

/// The frontmatter keys, in the order a memory's problems are reported.
pub const KEYS: [Key; 16] = [
    key("title", Shape::Text),
    key("kind", Shape::Text),
    key("summary", Shape::Text),
    key("highlight", Shape::Text),
    key("role", Shape::Text),
    key("supersedes", Shape::Text),
    key("superseded_by", Shape::Text),
    key("created", Shape::Date),
    key("updated", Shape::Date),
    key("load_when", Shape::List),
    key("tags", Shape::List),
    key("paths", Shape::List),
    key("pinned", Shape::Flag),
    key("relevance", Shape::Level),
    key("source_sessions", Shape::List),
    Key { name: "id", shape: Shape::Text, kept: false },
];

/// A key's value in a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Text(Option<String>),
    Date(i64),
    List(Vec<String>),
    Flag(bool),
    Level(Relevance),
}

/// A key's value in a memory, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldRef<'a> {
    Text(Option<&'a str>),
    Date(i64),
    List(&'a [String]),
    Flag(bool),
    Level(Relevance),
}

impl Memory {
    /// A memory at `path` with every field empty.
    pub fn blank(path: RelPath, scope: Scope) -> Memory {
        Memory {
            path,
            scope,
            title: String::new(),
            kind: String::new(),
            summary: String::new(),
            summary_derived: false,
            highlight: String::new(),
            created: 0,
            updated: 0,
            load_when: Vec::new(),
            pinned: false,
            relevance: Relevance::Medium,
            source_sessions: Vec::new(),
            tags: Vec::new(),
            role: None,
            paths: Vec::new(),
            supersedes: None,
            superseded_by: None,
            body: String::new(),
            content: 0,
        }
    }

    /// The value of the kept key `name`; None for a key it does not keep.
    pub fn field(&self, name: &str) -> Option<FieldRef<'_>> {
        Some(match name {
            "title" => FieldRef::Text(Some(&self.title)),
            "kind" => FieldRef::Text(Some(&self.kind)),
            "summary" => FieldRef::Text(Some(&self.summary)),
            "highlight" => FieldRef::Text(Some(&self.highlight)),
            "role" => FieldRef::Text(self.role.as_deref()),
            "supersedes" => FieldRef::Text(self.supersedes.as_deref()),
            "superseded_by" => FieldRef::Text(self.superseded_by.as_deref()),
            "created" => FieldRef::Date(self.created),
            "updated" => FieldRef::Date(self.updated),
            "load_when" => FieldRef::List(&self.load_when),
            "tags" => FieldRef::List(&self.tags),
            "paths" => FieldRef::List(&self.paths),
            "pinned" => FieldRef::Flag(self.pinned),
            "relevance" => FieldRef::Level(self.relevance),
            "source_sessions" => FieldRef::List(&self.source_sessions),
            _ => return None,
        })
    }

    /// Set the kept key `name`; false when the key is not kept or the value
    /// has another shape.
    pub fn set_field(&mut self, name: &str, value: Field) -> bool {
        let text = |v: Option<String>| v.unwrap_or_default();
        match (name, value) {
            ("title", Field::Text(v)) => self.title = text(v),
            ("kind", Field::Text(v)) => self.kind = text(v),
            ("summary", Field::Text(v)) => self.summary = text(v),
            ("highlight", Field::Text(v)) => self.highlight = text(v),
            ("role", Field::Text(v)) => self.role = v,
            ("supersedes", Field::Text(v)) => self.supersedes = v,
            ("superseded_by", Field::Text(v)) => self.superseded_by = v,
            ("created", Field::Date(v)) => self.created = v,
            ("updated", Field::Date(v)) => self.updated = v,
            ("load_when", Field::List(v)) => self.load_when = v,
            ("tags", Field::List(v)) => self.tags = v,
            ("paths", Field::List(v)) => self.paths = v,
            ("pinned", Field::Flag(v)) => self.pinned = v,
            ("relevance", Field::Level(v)) => self.relevance = v,
            ("source_sessions", Field::List(v)) => self.source_sessions = v,
            _ => return false,
        }
        true
    }

    /// Build a memory from a parsed document, key by key through [`KEYS`].
    /// `mtime_ms` stands in for absent dates. Returns the memory and one
    /// message per field that had to be defaulted because its value had the
    /// wrong shape.
    pub fn from_document(
        path: RelPath,
        scope: Scope,
        doc: &Document,
        mtime_ms: i64,
    ) -> (Memory, Vec<String>) {
        let mut memory = Memory::blank(path, scope);
        memory.created = mtime_ms;
        memory.updated = mtime_ms;
        let mut problems = Vec::new();
        let mut written = Vec::new();
        for key in KEYS.iter().filter(|k| k.kept) {
            let Some(v) = doc.meta.get(key.name).filter(|v| !v.is_null()) else { continue };
            match key.shape.read(v) {
                Some(value) => {
                    memory.set_field(key.name, value);
                    written.push(key.name);
                }
                None => problems.push(format!(
                    "`{}` should be {}; using the default",
                    key.name,
                    key.shape.want()
                )),
            }
        }
        let has = |name: &str| written.contains(&name);
        if !has("title") {
            memory.title = first_heading(&doc.body).unwrap_or_else(|| memory.path.slug.clone());
        }
        if !has("kind") {
            memory.kind = default_kind(&memory.path).into();
        }
        if !has("summary") {
            memory.summary_derived = true;
            memory.summary = first_paragraph(&doc.body);
        }
        memory.supersedes = memory.supersedes.as_deref().map(with_md);
        memory.superseded_by = memory.superseded_by.as_deref().map(with_md);
        memory.body = doc.body.clone();
        (memory, problems)
    }
}
