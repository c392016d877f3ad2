//! The order the ranker visits a query's matches in: by the most each one's
//! final score can be, its ceiling. A ceiling is first bounded cheaply (the
//! recency boost at its most, see [`super::params::most_recency`]) and
//! worked out exactly only when it reaches the top of the heap, so that
//! only the matches that can make the top are worked out, and read.

/// A match and the most its final score can be, ordered by that most:
/// `exact` once worked out, else a bound above it.
pub(super) struct Ceiling {
    pub(super) most: f32,
    pub(super) doc: usize,
    pub(super) exact: bool,
}

impl PartialEq for Ceiling {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ceiling {}

impl PartialOrd for Ceiling {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ceiling {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.most
            .total_cmp(&other.most)
            .then(self.exact.cmp(&other.exact))
            .then(other.doc.cmp(&self.doc))
    }
}
