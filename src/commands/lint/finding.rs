//! What lint reports, and the files it reads.

use std::path::PathBuf;

use serde::Serialize;

use crate::model::memory::Memory;

/// How much a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something to fix: lint exits 1.
    Error,
    /// Something to know, that alone does not fail lint (files held back
    /// from agents).
    Warning,
}

/// One problem.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub file: PathBuf,
    pub line: Option<usize>,
    pub problem: String,
    pub fix: String,
}

/// One file as lint reads it.
pub struct Read {
    pub file: PathBuf,
    pub text: String,
    pub memory: Memory,
}

/// The 1-based line of `key:` in the frontmatter.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    if key.is_empty() {
        return None;
    }
    text.lines()
        .position(|l| l.trim_start_matches('\u{feff}').starts_with(&format!("{key}:")))
        .map(|i| i + 1)
}
