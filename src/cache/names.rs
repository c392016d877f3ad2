//! The first part of a cache file: the categories and file names it
//! holds, in walk order, searched as they lie.

use std::cmp::Ordering;

use super::packed::Held;
use crate::base::codec::u32_at;
use crate::model::relpath::RelPath;

/// The first part of a cache: what a root's folders held, enough to list it.
#[derive(Clone)]
pub(super) struct Names {
    pub(super) built_at: u64,
    pub(super) len: usize,
    /// Category names, each with the first document of its run.
    pub(super) categories: Vec<(String, usize)>,
    /// The slugs (UTF-8, back to back) and their offsets (u32, len + 1),
    /// where they lie in the mapped file.
    pub(super) slugs: Held,
    pub(super) slug_offs: Held,
}

impl Names {
    /// The slug of `doc`, as bytes (valid UTF-8: checked on open).
    pub(super) fn slug_bytes(&self, doc: usize) -> &[u8] {
        let at = |i: usize| u32_at(&self.slug_offs, 4 * i).unwrap_or(0) as usize;
        self.slugs.get(at(doc)..at(doc + 1)).unwrap_or(&[])
    }

    pub(super) fn slug(&self, doc: usize) -> &str {
        std::str::from_utf8(self.slug_bytes(doc)).unwrap_or("")
    }

    pub(super) fn category(&self, doc: usize) -> &str {
        let i = self.categories.partition_point(|c| c.1 <= doc);
        i.checked_sub(1).map_or("", |i| &self.categories[i].0)
    }

    /// The documents of `category`.
    pub(super) fn run(&self, category: &str) -> std::ops::Range<usize> {
        match self.categories.binary_search_by(|c| c.0.as_str().cmp(category)) {
            Ok(i) => {
                let end = self.categories.get(i + 1).map_or(self.len, |c| c.1);
                self.categories[i].1..end.max(self.categories[i].1)
            }
            Err(_) => 0..0,
        }
    }
}

/// The order files are listed in within a category: by file name, `<slug>.md`.
pub(super) fn name_order(a: &[u8], b: &[u8]) -> Ordering {
    a.iter().chain(b".md").cmp(b.iter().chain(b".md"))
}

/// The order of memories in a root: category, then file name.
pub(super) fn walk_order(a: &RelPath, b: &RelPath) -> Ordering {
    a.category.cmp(&b.category).then_with(|| name_order(a.slug.as_bytes(), b.slug.as_bytes()))
}
