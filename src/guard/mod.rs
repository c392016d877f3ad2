//! Write-time guardrails: what an agent is about to save is checked for
//! quality (warnings), near-duplicates (a hint) and secrets (a refusal).
//! Pure text in, findings out; the commands decide what to do with them.

pub mod quality;
pub mod secrets;

use crate::rank::tokenize::{is_cjk, normalize};

/// Near-duplicates are memories whose character-bigram Jaccard is at least this.
pub const DUPLICATE_THRESHOLD: f64 = 0.70;

/// The set of character bigrams of `text` (letters, digits and CJK only,
/// normalised), the measure near-duplicate detection compares: each bigram
/// packed into a number, sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bigrams(Vec<u64>);

impl Bigrams {
    /// Number of distinct bigrams.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the text had fewer than two counted characters.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The bigrams of `text`.
pub fn bigrams(text: &str) -> Bigrams {
    let chars: Vec<char> =
        normalize(text).chars().filter(|c| c.is_alphanumeric() || is_cjk(*c)).collect();
    let mut set: Vec<u64> =
        chars.windows(2).map(|w| u64::from(w[0]) << 32 | u64::from(w[1])).collect();
    set.sort_unstable();
    set.dedup();
    Bigrams(set)
}

/// Jaccard similarity of two bigram sets (0 when both are empty).
pub fn jaccard(a: &Bigrams, b: &Bigrams) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0);
    while i < a.0.len() && j < b.0.len() {
        match a.0[i].cmp(&b.0[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => (i, j, both) = (i + 1, j + 1, both + 1),
        }
    }
    let union = a.0.len() + b.0.len() - both;
    if union == 0 { 0.0 } else { both as f64 / union as f64 }
}

/// True when sets of these sizes cannot reach [`DUPLICATE_THRESHOLD`]: the
/// intersection is at most the smaller, the union at least the larger.
pub fn too_far_apart(a: usize, b: usize) -> bool {
    let (small, large) = (a.min(b), a.max(b));
    large == 0 || (small as f64) < DUPLICATE_THRESHOLD * large as f64
}

/// Every pair `(i, j, similarity)`, `i < j`, of `sets` whose Jaccard is at
/// least [`DUPLICATE_THRESHOLD`], in order.
///
/// Exact, without comparing every pair (prefix filtering, as in PPJoin):
/// with bigrams ordered rarest first and sets taken smallest first, two sets
/// that similar share one of the first `len - ceil(t * len) + 1` bigrams of
/// the larger and one of the first `len - ceil(2t / (1 + t) * len) + 1` of
/// the smaller, so only the earlier sets indexed under the larger one's
/// first bigrams are compared with it.
pub fn near_pairs(sets: &[Bigrams]) -> Vec<(usize, usize, f64)> {
    let mut freq: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    for set in sets {
        for &b in &set.0 {
            *freq.entry(b).or_default() += 1;
        }
    }
    // A threshold a little under the real one only lengthens prefixes.
    let t = DUPLICATE_THRESHOLD - 1e-9;
    let prefix = |len: usize, share: f64| len - (share * len as f64).ceil() as usize + 1;
    let mut by_size: Vec<usize> = (0..sets.len()).filter(|&i| !sets[i].is_empty()).collect();
    by_size.sort_by_key(|&i| (sets[i].len(), i));
    let mut index: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::new();
    let mut seen = vec![usize::MAX; sets.len()];
    let mut pairs = Vec::new();
    for &x in &by_size {
        let len = sets[x].len();
        let mut order = sets[x].0.clone();
        order.sort_unstable_by_key(|b| (freq[b], *b));
        // Earlier sets are no larger; too small ones cannot reach t.
        let smallest = (t * len as f64).ceil() as usize;
        for b in &order[..prefix(len, t).min(len)] {
            let Some(list) = index.get(b) else { continue };
            let from = list.partition_point(|&y| sets[y].len() < smallest);
            for &y in &list[from..] {
                if seen[y] == x {
                    continue;
                }
                seen[y] = x;
                let score = jaccard(&sets[x], &sets[y]);
                if score >= DUPLICATE_THRESHOLD {
                    pairs.push((x.min(y), x.max(y), score));
                }
            }
        }
        for &b in &order[..prefix(len, 2.0 * t / (1.0 + t)).min(len)] {
            index.entry(b).or_default().push(x);
        }
    }
    pairs.sort_by_key(|p| (p.0, p.1));
    pairs
}

/// Estimated tokens of `text` for a context budget: one per CJK character,
/// one per four other non-space characters.
pub fn estimate_tokens(text: &str) -> usize {
    let (cjk, other) = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .fold((0usize, 0usize), |(c, o), ch| if is_cjk(ch) { (c + 1, o) } else { (c, o + 1) });
    cjk + other.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_duplicates_score_high() {
        let a = bigrams("部署脚本用 pnpm 而不是 npm");
        let b = bigrams("部署脚本用 pnpm，而不是 npm！");
        let c = bigrams("PostgreSQL 连接池上限 20");
        assert!(jaccard(&a, &b) >= DUPLICATE_THRESHOLD);
        assert!(jaccard(&a, &c) < 0.2);
        assert_eq!(jaccard(&bigrams(""), &bigrams("")), 0.0);
        assert_eq!(jaccard(&bigrams("abab"), &bigrams("ab ab ab")), 1.0);
        assert_eq!(jaccard(&bigrams("abc"), &bigrams("bcd")), 1.0 / 3.0);
        assert!(too_far_apart(bigrams("abcdefgh").len(), a.len()));
        assert!(!too_far_apart(a.len(), b.len()));
    }

    #[test]
    fn near_pairs_equal_comparing_every_pair() {
        // Texts built from few words, so that many pairs are close.
        let words = ["部署", "pnpm", "lock", "脚本", "npm", "ci", "a", "b"];
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for round in 0..60 {
            let sets: Vec<Bigrams> = (0..80)
                .map(|_| {
                    let n = next() % 8 + round % 5;
                    bigrams(
                        &(0..n).map(|_| words[next() % words.len()]).collect::<Vec<_>>().join(" "),
                    )
                })
                .collect();
            let mut every = Vec::new();
            for i in 0..sets.len() {
                for j in i + 1..sets.len() {
                    let score = jaccard(&sets[i], &sets[j]);
                    if score >= DUPLICATE_THRESHOLD {
                        every.push((i, j, score));
                    }
                }
            }
            assert!(round > 0 || !every.is_empty());
            assert_eq!(near_pairs(&sets), every, "round {round}");
        }
    }

    #[test]
    fn tokens_count_cjk_as_one_and_latin_as_a_quarter() {
        assert_eq!(estimate_tokens("部署"), 2);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("部署 pnpm"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
