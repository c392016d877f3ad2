//! Write-time guardrails: what an agent is about to save is checked for
//! quality (warnings) and near-duplicates (a hint); secrets (a refusal) are
//! found by [`crate::base::secrets`].
//! Pure text in, findings out; the commands decide what to do with them.

pub mod quality;

use crate::base::parallel;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::base::text::is_cjk;
use crate::rank::tokenize::normalize;

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

/// Bigrams by their hash, each mapped to one place of its own.
type Places = HashMap<u64, u32, BuildHasherDefault<crate::base::codec::Hash64>>;

/// Every distinct bigram of `sets`, with its place in the order rarest
/// first (ties by the bigram).
fn rarest_first(sets: &[Bigrams]) -> Places {
    let mut freq: Places = HashMap::default();
    for set in sets {
        for &b in &set.0 {
            *freq.entry(b).or_default() += 1;
        }
    }
    let mut rarest_first: Vec<(u32, u64)> = freq.iter().map(|(&b, &n)| (n, b)).collect();
    rarest_first.sort_unstable();
    rarest_first.iter().enumerate().map(|(r, &(_, b))| (b, r as u32)).collect()
}

/// Every pair `(i, j, similarity)`, `i < j`, of `sets` whose Jaccard is at
/// least [`DUPLICATE_THRESHOLD`], in order.
///
/// Exact, without comparing every pair (PPJoin: prefix and positional
/// filtering). With bigrams ordered rarest first and sets taken smallest
/// first, two sets that similar share one of the first
/// `len - ceil(t * len) + 1` bigrams of the larger and one of the first
/// `len - ceil(2t / (1 + t) * len) + 1` of the smaller, so only the earlier
/// sets indexed under the larger one's first bigrams are candidates. Shared
/// bigrams come in the same order in both, so at each one the overlap can
/// still grow by at most what follows it in either set: a candidate that
/// cannot reach `t / (1 + t) * (|x| + |y|)` is dropped before it is compared.
/// The rest are bounded by 1,024-bit bitmaps, then compared by a merge that
/// stops once the overlap is out of reach.
pub fn near_pairs(sets: &[Bigrams]) -> Vec<(usize, usize, f64)> {
    let rank = rarest_first(sets);
    // A threshold a little under the real one only loosens the filters.
    let t = DUPLICATE_THRESHOLD - 1e-9;
    let prefix = |len: usize, share: f64| len - (share * len as f64).ceil() as usize + 1;
    // The overlap two sets of `n` bigrams together need: t / (1 + t) of n.
    let share = t / (1.0 + t);
    let needed = |n: usize| {
        let v = share * n as f64;
        v as usize + usize::from((v as usize as f64) < v)
    };
    let mut by_size: Vec<usize> = (0..sets.len()).filter(|&i| !sets[i].is_empty()).collect();
    by_size.sort_by_key(|&i| (sets[i].len(), i));
    // Each set's place in that order: a set is compared with earlier ones.
    let mut place = vec![u32::MAX; sets.len()];
    by_size.iter().enumerate().for_each(|(p, &x)| place[x] = p as u32);
    let order = |x: usize| -> Vec<u32> {
        let mut order: Vec<u32> = sets[x].0.iter().map(|b| rank[b]).collect();
        order.sort_unstable();
        order
    };
    // Under each bigram: the sets with it in their first bigrams, in order,
    // with its place in each.
    let mut index: Vec<Vec<(u32, u32)>> = vec![Vec::new(); rank.len()];
    for &x in &by_size {
        let order = order(x);
        let len = order.len();
        for (j, b) in order[..prefix(len, 2.0 * t / (1.0 + t)).min(len)].iter().enumerate() {
            index[*b as usize].push((x as u32, j as u32));
        }
    }
    let bitmaps: Vec<Bitmap> = sets.iter().map(|s| Bitmap::of(&s.0)).collect();
    // Sets are compared independently: a few hundred at a time, per core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let probe = || {
        // Shared prefix bigrams per candidate of the current set; PRUNED
        // once it cannot reach the threshold.
        const PRUNED: u32 = u32::MAX;
        let mut overlap = vec![0u32; sets.len()];
        let mut candidates = Vec::new();
        let mut pairs = Vec::new();
        loop {
            let start = next.fetch_add(256, std::sync::atomic::Ordering::Relaxed);
            let Some(batch) = by_size.get(start..(start + 256).min(by_size.len())) else { break };
            for &x in batch {
                let order = order(x);
                let len = order.len();
                // Earlier sets are no larger; too small ones cannot reach t.
                let smallest = (t * len as f64).ceil() as usize;
                for (i, b) in order[..prefix(len, t).min(len)].iter().enumerate() {
                    let list = &index[*b as usize];
                    let to = list.partition_point(|&(y, _)| place[y as usize] < place[x]);
                    let list = &list[..to];
                    let from = list.partition_point(|&(y, _)| sets[y as usize].len() < smallest);
                    for &(y, j) in &list[from..] {
                        let (y, j) = (y as usize, j as usize);
                        if overlap[y] == PRUNED {
                            continue;
                        }
                        let needed = needed(len + sets[y].len());
                        let most = 1 + (len - i - 1).min(sets[y].len() - j - 1);
                        if overlap[y] == 0 {
                            candidates.push(y);
                        }
                        if overlap[y] as usize + most >= needed {
                            overlap[y] += 1;
                        } else {
                            overlap[y] = PRUNED;
                        }
                    }
                }
                for y in candidates.drain(..) {
                    if overlap[y] != PRUNED {
                        let needed = needed(len + sets[y].len());
                        let most = bitmaps[x].most_shared(&bitmaps[y], len, sets[y].len());
                        let shared = || shared_at_least(&sets[x].0, &sets[y].0, needed);
                        if let Some(both) = (most >= needed).then(shared).flatten() {
                            let score = both as f64 / (len + sets[y].len() - both) as f64;
                            if score >= DUPLICATE_THRESHOLD {
                                pairs.push((x.min(y), x.max(y), score));
                            }
                        }
                    }
                    overlap[y] = 0;
                }
            }
        }
        pairs
    };
    let threads = parallel::threads().min(by_size.len().div_ceil(256)).max(1);
    let mut pairs: Vec<(usize, usize, f64)> =
        parallel::run(threads, |_| probe()).into_iter().flatten().collect();
    pairs.sort_by_key(|p| (p.0, p.1));
    pairs
}

/// A set's values hashed into 1,024 bits: a cheap bound on what two sets
/// can share. A bit set in one bitmap and not the other stands for at least
/// one value only one set has, and distinct bits for distinct values.
struct Bitmap([u64; 16]);

impl Bitmap {
    fn of(values: &[u64]) -> Bitmap {
        let mut bits = [0u64; 16];
        for v in values {
            let h = (crate::base::codec::mix(0, *v) >> 54) as usize;
            bits[h / 64] |= 1 << (h % 64);
        }
        Bitmap(bits)
    }

    /// The most two sets of sizes `a` and `b` with these bitmaps can share.
    fn most_shared(&self, other: &Bitmap, a: usize, b: usize) -> usize {
        let apart: usize =
            self.0.iter().zip(&other.0).map(|(x, y)| (x ^ y).count_ones() as usize).sum();
        (a + b).saturating_sub(apart) / 2
    }
}

/// How many values two sorted sets share, if at least `needed`: the merge
/// stops as soon as what is left of either cannot make up the difference.
fn shared_at_least(a: &[u64], b: &[u64], needed: usize) -> Option<usize> {
    let (mut i, mut j, mut both) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if both + (a.len() - i).min(b.len() - j) < needed {
            return None;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => (i, j, both) = (i + 1, j + 1, both + 1),
        }
    }
    (both >= needed).then_some(both)
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
    fn bitmaps_bound_and_merges_count_what_sets_share() {
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 40
        };
        for _ in 0..300 {
            let mut set = |n: u64| -> Vec<u64> {
                let mut v: Vec<u64> = (0..next() % n).map(|_| next() % 900).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (a, b) = (set(400), set(400));
            let shared = a.iter().filter(|v| b.binary_search(v).is_ok()).count();
            let most = Bitmap::of(&a).most_shared(&Bitmap::of(&b), a.len(), b.len());
            assert!(most >= shared, "{most} < {shared}");
            assert_eq!(shared_at_least(&a, &b, shared), Some(shared));
            assert_eq!(shared_at_least(&a, &b, shared + 1), None);
        }
    }
}
