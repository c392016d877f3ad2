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
    fn tokens_count_cjk_as_one_and_latin_as_a_quarter() {
        assert_eq!(estimate_tokens("部署"), 2);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("部署 pnpm"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
