//! Taking the language out of a multilingual model's vectors.
//!
//! A multilingual sentence model puts every text of one language nearer to
//! every other text of that language than to the same meaning in another:
//! a Chinese question about the on-call rota is more similar to an
//! unrelated Chinese note than to the English note that answers it. Much
//! of that pull is one direction per language, the mean of its vectors
//! (Libovický et al., "On the Language Neutrality of Pre-trained
//! Multilingual Representations", 2020). So each vector is moved by its
//! language's offset from the mean of all: `v - (mean(lang) - mean(all))`,
//! where a text's language is its share of CJK in words (a line that
//! mixes both is moved by the mix of both offsets).
//!
//! In a tree of one language the offsets are zero and nothing changes;
//! they are used only when each language weighs at least [`MIN_WEIGHT`]
//! memories.

/// How many memories' worth of each language a tree needs before its
/// offsets are taken out: fewer make a noisy mean.
pub const MIN_WEIGHT: f32 = 5.0;

/// The share of CJK in `text`: CJK characters over CJK characters plus
/// other words (a run of letters or digits counts once, as a CJK
/// character stands for about a word). 0 for text with neither.
pub fn cjk_share(text: &str) -> f32 {
    cjk_share_of(&[text])
}

/// [`cjk_share`] of several texts taken together (a memory's title and
/// summary).
pub fn cjk_share_of(texts: &[&str]) -> f32 {
    let (mut cjk, mut words, mut in_word) = (0usize, 0usize, false);
    for c in texts.iter().flat_map(|t| t.chars().chain([' '])) {
        if crate::base::text::is_cjk(c) {
            cjk += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            words += usize::from(!in_word);
            in_word = true;
        } else {
            in_word = false;
        }
    }
    if cjk + words == 0 { 0.0 } else { cjk as f32 / (cjk + words) as f32 }
}

/// The language offsets of one set of vectors: a text of CJK share `w` is
/// moved by `base + w × step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Offsets {
    /// mean(other) − mean(all).
    base: Vec<f32>,
    /// mean(CJK) − mean(other).
    step: Vec<f32>,
}

impl Offsets {
    /// The offsets of `vectors` (each with its text's CJK share), or none
    /// when one language weighs under [`MIN_WEIGHT`] memories or the
    /// vectors disagree in length.
    pub fn of<'a>(vectors: impl IntoIterator<Item = (f32, &'a [f32])>) -> Option<Offsets> {
        let (mut cjk, mut other, mut all): (Vec<f32>, Vec<f32>, Vec<f32>) = Default::default();
        let (mut w_cjk, mut w_other, mut n) = (0.0f32, 0.0f32, 0.0f32);
        for (w, v) in vectors {
            if all.is_empty() {
                (cjk, other, all) = (vec![0.0; v.len()], vec![0.0; v.len()], vec![0.0; v.len()]);
            }
            if v.len() != all.len() {
                return None;
            }
            let w = w.clamp(0.0, 1.0);
            for (i, x) in v.iter().enumerate() {
                cjk[i] += w * x;
                other[i] += (1.0 - w) * x;
                all[i] += x;
            }
            (w_cjk, w_other, n) = (w_cjk + w, w_other + 1.0 - w, n + 1.0);
        }
        if w_cjk < MIN_WEIGHT || w_other < MIN_WEIGHT {
            return None;
        }
        let mean = |sum: &[f32], weight: f32| sum.iter().map(|s| s / weight).collect::<Vec<f32>>();
        let (cjk, other, all) = (mean(&cjk, w_cjk), mean(&other, w_other), mean(&all, n));
        Some(Offsets {
            base: other.iter().zip(&all).map(|(o, a)| o - a).collect(),
            step: cjk.iter().zip(&other).map(|(c, o)| c - o).collect(),
        })
    }

    /// `v` without the offset of a text of CJK share `share`.
    pub fn remove(&self, v: &[f32], share: f32) -> Vec<f32> {
        let w = share.clamp(0.0, 1.0);
        v.iter().zip(self.base.iter().zip(&self.step)).map(|(x, (b, s))| x - b - w * s).collect()
    }

    /// A query, ready to be compared with many vectors: `q` without its
    /// own offset.
    pub fn query(&self, q: &[f32], share: f32) -> Aligned<'_> {
        let q = self.remove(q, share);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        Aligned {
            base_base: dot(&self.base, &self.base),
            base_step: dot(&self.base, &self.step),
            step_step: dot(&self.step, &self.step),
            q_base: dot(&q, &self.base),
            q_step: dot(&q, &self.step),
            q_norm: dot(&q, &q).sqrt(),
            q,
            offsets: self,
        }
    }
}

/// A query without its language offset, and the dot products that let it
/// be compared with a vector without building that vector's aligned copy.
pub struct Aligned<'a> {
    q: Vec<f32>,
    offsets: &'a Offsets,
    q_norm: f32,
    q_base: f32,
    q_step: f32,
    base_base: f32,
    base_step: f32,
    step_step: f32,
}

impl Aligned<'_> {
    /// `cosine(q, offsets.remove(v, share))`, in one pass over `v`.
    pub fn cosine(&self, v: &[f32], share: f32) -> f32 {
        let w = share.clamp(0.0, 1.0);
        let (mut qv, mut vv, mut vb, mut vs) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        let o = self.offsets;
        for (i, x) in v.iter().enumerate() {
            qv += self.q[i] * x;
            vv += x * x;
            vb += x * o.base[i];
            vs += x * o.step[i];
        }
        let dot = qv - self.q_base - w * self.q_step;
        let norm2 = vv + self.base_base + w * w * self.step_step - 2.0 * vb - 2.0 * w * vs
            + 2.0 * w * self.base_step;
        let norms = self.q_norm * norm2.max(0.0).sqrt();
        if norms > 0.0 { dot / norms } else { 0.0 }
    }
}

/// The cosine similarity of two vectors of any length (0 if one is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norms =
        a.iter().map(|x| x * x).sum::<f32>().sqrt() * b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norms > 0.0 { dot / norms } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_counts_cjk_characters_against_words() {
        assert_eq!(cjk_share("deploy with argo"), 0.0);
        assert_eq!(cjk_share("回滚"), 1.0);
        // Two characters against two words.
        assert_eq!(cjk_share("回滚 via argo-cd"), 2.0 / 5.0);
        assert_eq!(cjk_share("  --  "), 0.0);
    }

    /// Five English and five Chinese texts: each language's vectors share
    /// a strong direction of their own (axis 2 or 3) on top of their meaning
    /// (axis 0 or 1).
    fn two_languages() -> Vec<(f32, Vec<f32>)> {
        let mut out = Vec::new();
        for i in 0..5 {
            let meaning = if i % 2 == 0 { [1.0, 0.0] } else { [0.0, 1.0] };
            out.push((0.0, vec![meaning[0], meaning[1], 2.0, 0.0]));
            out.push((1.0, vec![meaning[1], meaning[0], 0.0, 2.0]));
        }
        out
    }

    #[test]
    fn the_same_meaning_across_languages_is_nearer_once_aligned() {
        let docs = two_languages();
        let off = Offsets::of(docs.iter().map(|(w, v)| (*w, v.as_slice()))).expect("two languages");
        let english_query = [1.0, 0.0, 2.0, 0.0];
        let chinese_same_meaning = [1.0, 0.0, 0.0, 2.0];
        let english_other_meaning = [0.0, 1.0, 2.0, 0.0];
        // Raw, the other meaning in the same language is nearer.
        assert!(
            cosine(&english_query, &english_other_meaning)
                > cosine(&english_query, &chinese_same_meaning)
        );
        let q = off.remove(&english_query, 0.0);
        let same = off.remove(&chinese_same_meaning, 1.0);
        let other = off.remove(&english_other_meaning, 0.0);
        assert!(cosine(&q, &same) > cosine(&q, &other));
    }

    #[test]
    fn one_language_or_too_few_of_the_other_changes_nothing() {
        let english: Vec<(f32, Vec<f32>)> =
            two_languages().into_iter().filter(|(w, _)| *w == 0.0).collect();
        assert_eq!(Offsets::of(english.iter().map(|(w, v)| (*w, v.as_slice()))), None);
        let mut few = english.clone();
        few.extend(two_languages().into_iter().filter(|(w, _)| *w == 1.0).take(4));
        assert_eq!(Offsets::of(few.iter().map(|(w, v)| (*w, v.as_slice()))), None);
        let ragged = [(0.0, vec![1.0, 0.0]), (1.0, vec![1.0])];
        assert_eq!(Offsets::of(ragged.iter().map(|(w, v)| (*w, v.as_slice()))), None);
    }

    #[test]
    fn mixed_text_moves_by_the_mix_of_both_offsets() {
        let docs = two_languages();
        let off = Offsets::of(docs.iter().map(|(w, v)| (*w, v.as_slice()))).expect("two languages");
        let v = [0.5, 0.5, 0.5, 0.5];
        let half = off.remove(&v, 0.5);
        let (en, zh) = (off.remove(&v, 0.0), off.remove(&v, 1.0));
        for i in 0..4 {
            assert!((half[i] - (en[i] + zh[i]) / 2.0).abs() < 1e-6);
        }
        // The mean of all stays where it was: the offsets average to zero.
        let mean_shift: f32 = (0..4).map(|i| (en[i] + zh[i]) / 2.0 - v[i]).map(f32::abs).sum();
        assert!(mean_shift < 1e-6, "{mean_shift}");
    }

    #[test]
    fn an_aligned_query_compares_as_the_aligned_copies_do() {
        let docs = two_languages();
        let off = Offsets::of(docs.iter().map(|(w, v)| (*w, v.as_slice()))).expect("two languages");
        let q = [0.3, -0.2, 1.0, 0.4];
        let aligned = off.query(&q, 0.25);
        for (w, v) in docs.iter().chain(&[(0.6, vec![0.1, 0.2, -0.3, 0.9])]) {
            let want = cosine(&off.remove(&q, 0.25), &off.remove(v, *w));
            let got = aligned.cosine(v, *w);
            assert!((want - got).abs() < 1e-5, "{want} vs {got}");
        }
    }

    #[test]
    fn cosine_of_a_zero_vector_is_zero() {
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert!((cosine(&[2.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
    }
}
