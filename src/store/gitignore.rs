//! The `.gitignore` `mem init` writes in a root (what git must not hold:
//! caches, hit counts, sessions, the trash), and what an older root's lacks.

/// The `.gitignore` a new root gets.
pub const GITIGNORE: &str = include_str!("../../templates/gitignore");

/// The ignore lines of the generated `.gitignore` (its comments left out).
pub fn ignore_lines() -> impl Iterator<Item = &'static str> {
    GITIGNORE.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
}

/// The generated `.gitignore`'s lines that `existing` lacks (a line is there
/// when some line of it reads the same, trimmed).
pub fn missing_ignores(existing: &str) -> Vec<&'static str> {
    ignore_lines().filter(|want| !existing.lines().any(|l| l.trim() == *want)).collect()
}

/// The generated `.gitignore`'s lines that the root in `dir` lacks (all of
/// them when it has none; none when it cannot be read).
pub fn gitignore_lacks(dir: &std::path::Path) -> Vec<String> {
    let text = match crate::store::files::text(dir, &dir.join(".gitignore")) {
        Ok(Some(text)) => text,
        Ok(None) => String::new(),
        Err(_) => return Vec::new(),
    };
    missing_ignores(&text).into_iter().map(str::to_string).collect()
}
