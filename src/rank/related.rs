//! Memories filed under the same tags as the best answer.
//!
//! People tag what belongs together: the pitfall of a float rounding in FX
//! and the rule to keep money in minor units both carry `money`. When a
//! question finds one, the other is often the second half of the answer,
//! even when neither its words nor its meaning come near the question. The
//! fused ranking lifts such memories a little (see [`crate::rank::fuse`]),
//! by how much of their tags they share with the first result, each tag
//! weighed by how rare it is in the tree: sharing `postgres` with a third
//! of the tree says less than sharing `migrations`.

use std::collections::HashMap;

/// How rare each tag is among the memories that may be shown.
pub struct Tags<'a> {
    weight: HashMap<&'a str, f32>,
}

impl<'a> Tags<'a> {
    /// The weight of each tag over `memories`' tag lists: `ln(1 + n / df)`.
    pub fn of(memories: impl IntoIterator<Item = &'a [String]>) -> Tags<'a> {
        let mut df: HashMap<&'a str, f32> = HashMap::new();
        let mut n = 0.0f32;
        for tags in memories {
            n += 1.0;
            let mut seen = std::collections::HashSet::with_capacity(tags.len());
            for t in tags.iter().filter(|t| seen.insert(t.as_str())) {
                *df.entry(t).or_default() += 1.0;
            }
        }
        let weight = df.into_iter().map(|(t, d)| (t, (1.0 + n / d).ln())).collect();
        Tags { weight }
    }

    /// How alike two tag lists are, 0 to 1: the cosine of their weighted
    /// tag vectors (a tag counts once).
    pub fn likeness(&self, a: &[String], b: &[String]) -> f32 {
        self.seed(a).likeness(b)
    }

    /// A tag list to compare many others with, each in time linear in its
    /// own length.
    pub fn seed<'s>(&'s self, tags: &'s [String]) -> Seed<'s> {
        let weights: HashMap<&str, f32> =
            tags.iter().map(|t| (t.as_str(), self.weight(t))).collect();
        let norm = weights.values().map(|w| w * w).sum::<f32>().sqrt();
        Seed { tags: self, weights, norm }
    }

    fn weight(&self, tag: &str) -> f32 {
        self.weight.get(tag).copied().unwrap_or(0.0)
    }
}

/// One memory's tags, weighed, for [`Tags::seed`].
pub struct Seed<'a> {
    tags: &'a Tags<'a>,
    weights: HashMap<&'a str, f32>,
    norm: f32,
}

impl Seed<'_> {
    /// How alike `other` is to the seed's tags, 0 to 1.
    pub fn likeness(&self, other: &[String]) -> f32 {
        if self.norm == 0.0 {
            return 0.0;
        }
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let (mut shared, mut own) = (0.0f32, 0.0f32);
        for t in other.iter().filter(|t| seen.insert(t.as_str())) {
            let w = self.tags.weight(t);
            own += w * w;
            if self.weights.contains_key(t.as_str()) {
                shared += w * w;
            }
        }
        if own == 0.0 { 0.0 } else { (shared / (self.norm * own.sqrt())).min(1.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_rare_shared_tag_counts_more_than_a_common_one() {
        let tree = [
            tags(&["postgres", "migrations", "locks"]),
            tags(&["postgres", "migrations"]),
            tags(&["postgres", "backups"]),
            tags(&["postgres"]),
            tags(&["postgres", "ledger"]),
            tags(&["kafka"]),
        ];
        let t = Tags::of(tree.iter().map(Vec::as_slice));
        let seed = &tree[0];
        let by_migrations = t.likeness(seed, &tree[1]);
        let by_postgres = t.likeness(seed, &tree[2]);
        assert!(by_migrations > by_postgres, "{by_migrations} vs {by_postgres}");
        assert_eq!(t.likeness(seed, &tree[5]), 0.0);
    }

    #[test]
    fn likeness_is_symmetric_bounded_and_one_for_the_same_tags() {
        let tree = [tags(&["a", "b"]), tags(&["b", "c", "c"]), tags(&[])];
        let t = Tags::of(tree.iter().map(Vec::as_slice));
        let (ab, ba) = (t.likeness(&tree[0], &tree[1]), t.likeness(&tree[1], &tree[0]));
        assert!((ab - ba).abs() < 1e-6 && ab > 0.0 && ab < 1.0);
        assert!((t.likeness(&tree[0], &tree[0]) - 1.0).abs() < 1e-6);
        assert_eq!(t.likeness(&tree[0], &tree[2]), 0.0);
        // A seed compares as the pair does.
        assert_eq!(t.seed(&tree[0]).likeness(&tree[1]), ab);
        // A tag no memory of the tree carries weighs nothing.
        assert_eq!(t.likeness(&tags(&["zzz"]), &tags(&["zzz"])), 0.0);
    }
}
