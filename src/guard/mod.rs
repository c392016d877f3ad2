//! Write-time guardrails: what an agent is about to save is checked for
//! quality (warnings), near-duplicates (a hint) and secrets (a refusal).
//! Pure text in, findings out; the commands decide what to do with them.

pub mod quality;
pub mod secrets;

use std::collections::HashSet;

use crate::rank::tokenize::{is_cjk, normalize};

/// Near-duplicates are memories whose character-bigram Jaccard is at least this.
pub const DUPLICATE_THRESHOLD: f64 = 0.70;

/// The set of character bigrams of `text` (letters, digits and CJK only,
/// normalised), the measure near-duplicate detection compares.
pub fn bigrams(text: &str) -> HashSet<(char, char)> {
    let chars: Vec<char> =
        normalize(text).chars().filter(|c| c.is_alphanumeric() || is_cjk(*c)).collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Jaccard similarity of two bigram sets (0 when both are empty).
pub fn jaccard(a: &HashSet<(char, char)>, b: &HashSet<(char, char)>) -> f64 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f64 / union as f64 }
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
    }

    #[test]
    fn tokens_count_cjk_as_one_and_latin_as_a_quarter() {
        assert_eq!(estimate_tokens("部署"), 2);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("部署 pnpm"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }
}
