//! The address of a memory inside a root: `<category>/<slug>.md`.
//!
//! Parsing is the only way to get a [`RelPath`], so a value of this type is
//! always safe to join onto a root: no `..`, no `/`, no leading dot.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A validated `<category>/<slug>` pair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath {
    pub category: String,
    pub slug: String,
}

impl RelPath {
    /// Parse `category/slug` or `category/slug.md`, as a user types it.
    ///
    /// ```
    /// let p = mem::relpath::RelPath::parse("decisions/db.md").unwrap();
    /// assert_eq!(p.to_string(), "decisions/db.md");
    /// assert!(mem::relpath::RelPath::parse("../etc/passwd").is_err());
    /// ```
    pub fn parse(arg: &str) -> Result<RelPath> {
        let hint = "write it as <category>/<slug>, e.g. decisions/store-format";
        if arg.starts_with('/') || arg.split(['/', '\\']).any(|part| part == "..") {
            return Err(Error::input(format!(
                "`{arg}` leaves the memory root: `..` and absolute paths are refused"
            ))
            .hint(hint));
        }
        let Some((category, rest)) = arg.split_once('/') else {
            return Err(Error::input(format!("`{arg}` is not a memory path")).hint(hint));
        };
        let slug = rest.strip_suffix(".md").unwrap_or(rest);
        check_category(category)?;
        check_slug(slug).map_err(|e| e.hint(hint))?;
        Ok(RelPath { category: category.to_string(), slug: slug.to_string() })
    }

    /// The relative file path, always with `/` separators.
    pub fn file(&self) -> String {
        format!("{}/{}.md", self.category, self.slug)
    }

    /// The file's location under `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        root.join(&self.category).join(format!("{}.md", self.slug))
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}.md", self.category, self.slug)
    }
}

/// Check a category name against `[a-z0-9][a-z0-9._-]{0,31}`.
pub fn check_category(name: &str) -> Result<()> {
    let ok = name.len() <= 32
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::input(format!("invalid category `{name}`")).hint(
            "a category is 1-32 characters of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit",
        ))
    }
}

/// Check a slug against `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
pub fn check_slug(slug: &str) -> Result<()> {
    let ok = slug.len() <= 64
        && slug.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && slug.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::input(format!("invalid slug `{slug}`")).hint(
            "a slug is 1-64 characters of A-Z, a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_spec_shapes() {
        for ok in ["rules/no-force-push", "facts/k8s.v1_2.md", "a/B", "x.y/z"] {
            assert!(RelPath::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_escapes_and_bad_names() {
        let long = format!("facts/{}", "a".repeat(65));
        for bad in [
            "..",
            "../x",
            "facts/..",
            "facts/../x",
            "/etc/passwd",
            "facts/.hidden",
            ".git/config",
            "facts/",
            "/x",
            "Facts/x",
            "facts/a b",
            "facts/sub/x",
            "facts/x.md.md/",
            "部署/x",
            &long,
            "facts",
            "",
        ] {
            assert!(RelPath::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn md_suffix_is_optional() {
        assert_eq!(RelPath::parse("a/b").unwrap(), RelPath::parse("a/b.md").unwrap());
    }
}
