//! The address of a memory inside a root: `<category>/<slug>.md`.
//!
//! Parsing is the only way to get a [`RelPath`], so a value of this type is
//! always safe to join onto a root: no `..`, no `/`, no leading dot.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};

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
    /// let p = mem::model::relpath::RelPath::parse("decisions/db.md").unwrap();
    /// assert_eq!(p.to_string(), "decisions/db.md");
    /// assert!(mem::model::relpath::RelPath::parse("../etc/passwd").is_err());
    /// ```
    pub fn parse(arg: &str) -> Result<RelPath> {
        let hint = "write it as <category>/<slug>, e.g. decisions/store-format";
        // A path as a shell completes it (`.memory/rules/x.md`, or a longer
        // one through a project's `.memory/`) names the memory after it.
        let arg = arg.strip_prefix("./").unwrap_or(arg);
        let arg = match arg.rfind(".memory/") {
            Some(i) if i == 0 || arg[..i].ends_with('/') => &arg[i + ".memory/".len()..],
            _ => arg,
        };
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
        if let Some(what) = reserved(slug) {
            return Err(Error::input(format!("`{arg}` is {what}, not a memory"))
                .hint("pick another slug: `ROOT` and `index` (in any case) are mem's own files"));
        }
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

/// What a slug that names one of mem's own files (`ROOT.md`, `index.md`,
/// in any case: a case-insensitive disk makes them one) would be taken for.
pub fn reserved(slug: &str) -> Option<&'static str> {
    if slug.eq_ignore_ascii_case("index") {
        Some("the name of a category's generated index")
    } else if slug.eq_ignore_ascii_case("root") {
        Some("the name of a root's plan (ROOT.md)")
    } else {
        None
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

/// Names Windows reserves for devices, whatever the case or extension.
const RESERVED: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Why a name could not be checked out on every system, if it could not:
/// a Windows device name (`con`, `aux.notes`, `COM1`) or a trailing dot.
/// The charset of categories and slugs already leaves out every character
/// Windows forbids, and is ASCII, so no two names differ only in Unicode
/// normalization.
pub fn unportable(name: &str) -> Option<&'static str> {
    let base = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    if RESERVED.contains(&base.as_str()) {
        return Some("is a device name on Windows");
    }
    if name.ends_with('.') {
        return Some("ends in a dot, which Windows drops");
    }
    None
}

impl RelPath {
    /// Refuse a path that could not be checked out on every system: see
    /// [`unportable`]. (Case twins need the folder: see the commands.)
    pub fn check_portable(&self) -> Result<()> {
        for (what, name) in [("category", &self.category), ("slug", &self.slug)] {
            if let Some(why) = unportable(name) {
                return Err(Error::input(format!("{what} `{name}` {why}")).hint(
                    "pick another name: the memory must check out on Windows and macOS too",
                ));
            }
        }
        Ok(())
    }
}

/// The memory files of `dir` whose name equals `slug`'s but for case (a
/// twin on a case-insensitive disk).
pub fn case_twins(dir: &Path, slug: &str) -> Vec<String> {
    let want = format!("{slug}.md").to_ascii_lowercase();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.to_ascii_lowercase() == want && *n != format!("{slug}.md"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completed_path_names_the_memory_after_the_memory_folder() {
        for arg in [
            "rules/deploy-pnpm",
            "rules/deploy-pnpm.md",
            ".memory/rules/deploy-pnpm.md",
            "./.memory/rules/deploy-pnpm.md",
            "/home/me/shop/.memory/rules/deploy-pnpm.md",
            "web/.memory/rules/deploy-pnpm",
        ] {
            assert_eq!(RelPath::parse(arg).unwrap().file(), "rules/deploy-pnpm.md", "{arg}");
        }
        for arg in ["/etc/passwd", ".memory/../x/y", "x.memory/rules/a/b", ".memory/rules"] {
            assert!(RelPath::parse(arg).is_err(), "{arg}");
        }
    }

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
            "rules/index",
            "facts/INDEX.md",
            "facts/ROOT.md",
            "facts/root",
            "facts/Root.md",
            "facts/Index",
        ] {
            assert!(RelPath::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn names_that_cannot_be_checked_out_everywhere() {
        for bad in ["facts/CON", "facts/con.notes", "aux/x", "facts/com1", "facts/LPT9", "facts/x."]
        {
            let p = RelPath::parse(bad).unwrap();
            assert!(p.check_portable().is_err(), "{bad}");
        }
        for ok in ["facts/console", "facts/icon", "facts/com10", "facts/x.y"] {
            assert!(RelPath::parse(ok).unwrap().check_portable().is_ok(), "{ok}");
        }
    }

    #[test]
    fn md_suffix_is_optional() {
        assert_eq!(RelPath::parse("a/b").unwrap(), RelPath::parse("a/b.md").unwrap());
    }
}
