//! The export document: what `mem export` writes (every memory with its
//! frontmatter, body and hit state, with a schema version) and `mem import`
//! reads back.

use serde::{Deserialize, Serialize};

use crate::model::roots::Scope;
use crate::store::state::Hits;

/// The export format's name and version.
pub const SCHEMA: &str = "mem-export/1";

/// The export document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Export {
    pub schema: String,
    pub memories: Vec<Exported>,
    /// What `mem export --json` said on stderr too; read and ignored, so
    /// its output imports as well as the file `--output` writes.
    #[serde(default, skip_serializing)]
    pub warnings: Vec<String>,
}

/// One exported memory.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    pub root: Scope,
    pub path: String,
    pub frontmatter: serde_json::Map<String, serde_json::Value>,
    pub body: String,
    pub hits: Option<Hits>,
}

pub fn to_json(meta: &yaml_serde::Mapping) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(meta) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}
