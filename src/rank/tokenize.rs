//! Text → index tokens, the same way for memories and for queries.
//!
//! | input            | tokens                                      |
//! |------------------|---------------------------------------------|
//! | `部署脚本`        | `部署` `署脚` `脚本` `部` `署` `脚` `本`         |
//! | `锁`             | `锁` (a lone CJK character is a unigram)     |
//! | `Ｄｅｐｌｏｙｓ`     | `deploy` (NFKC, lowercase, English stem)    |
//! | `utf-8`          | `utf` `8` `utf 8` `utf-8`                   |
//! | `pg_dump`        | `pg_dump` `pg` `dump`                       |
//! | `support groups` | `support` `group` `support group`           |
//! | `用pnpm部署`      | `用` `pnpm` `部署` `部` `署`                  |
//!
//! Latin words follow Unicode word boundaries; a word made of parts
//! (`pg_dump`, `v1.2`, `utf-8`) yields the whole and each part. Words of
//! letters only are stemmed (Snowball English), so `deploys`, `deployed` and
//! `deploying` meet. Two neighbouring words (function words skipped) also
//! give a pair token, `support group`, the evidence of a phrase. Runs of Han,
//! kana and Hangul become overlapping character bigrams, which is what lets
//! `部署` match inside `部署脚本用`, followed by each character on its own:
//! the unigrams let a partial overlap count (`清除` against `清理…删除`), at a
//! weight the scorer keeps low. [`Kind`] tells the four kinds of token apart.
//!
//! ```
//! let mut tokens = Vec::new();
//! mem::rank::tokenize::Tokenizer::new().tokens("部署脚本用 pnpm 而不是 npm", |t| tokens.push(t.to_string()));
//! assert!(tokens.contains(&"部署".to_string()));
//! ```

use crate::base::text::is_cjk;
use std::borrow::Cow;

use frostem::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

use crate::rank::stopwords::is_stopword;

/// Turns text into tokens; holds the stemmer (it is `Copy`: each thread
/// takes its own).
#[derive(Clone, Copy)]
pub struct Tokenizer {
    stemmer: Stemmer,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

/// What a token stands for, which decides how much a match on it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Latin word, stemmed, or one of its parts (`deploy`, `pg_dump`, `8`).
    Word,
    /// Two neighbouring Latin words (`support group`).
    Pair,
    /// Two neighbouring CJK characters (`部署`).
    Bigram,
    /// One CJK character (`锁`).
    Unigram,
}

impl Kind {
    /// The kind of a token this tokenizer emitted.
    pub fn of(token: &str) -> Kind {
        let mut chars = token.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(a), None, None) if is_cjk(a) => Kind::Unigram,
            (Some(a), Some(b), None) if is_cjk(a) && is_cjk(b) => Kind::Bigram,
            _ if token.contains(' ') => Kind::Pair,
            _ => Kind::Word,
        }
    }
}

/// NFKC, then lowercase; ASCII text takes a fast path.
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(text.to_ascii_lowercase())
        } else {
            Cow::Borrowed(text)
        }
    } else {
        Cow::Owned(text.nfkc().flat_map(char::to_lowercase).collect())
    }
}

impl Tokenizer {
    /// A tokenizer with the English stemmer.
    pub fn new() -> Tokenizer {
        Tokenizer { stemmer: Stemmer::new(Algorithm::English) }
    }

    /// Call `emit` with every token of `text`, in order.
    pub fn tokens(&self, text: &str, mut emit: impl FnMut(&str)) {
        let text = normalize(text);
        let mut rest = text.as_ref();
        while !rest.is_empty() {
            let cjk_start = rest.find(is_cjk).unwrap_or(rest.len());
            self.latin(&rest[..cjk_start], &mut emit);
            rest = &rest[cjk_start..];
            let run_len = rest.find(|c| !is_cjk(c)).unwrap_or(rest.len());
            cjk_run(&rest[..run_len], &mut emit);
            rest = &rest[run_len..];
        }
    }

    /// The token a single Latin word becomes (its stem when it is all letters).
    pub fn word<'a>(&self, word: &'a str) -> Cow<'a, str> {
        if word.len() > 3 && word.chars().all(char::is_alphabetic) {
            self.stemmer.stem(word)
        } else {
            Cow::Borrowed(word)
        }
    }

    fn latin(&self, text: &str, emit: &mut dyn FnMut(&str)) {
        let mut compound: Option<(usize, usize)> = None;
        let mut last_end = usize::MAX;
        let mut previous = String::new();
        let mut pair = String::new();
        for (start, seg) in text.split_word_bound_indices() {
            if seg.chars().any(char::is_alphanumeric) {
                let main = self.latin_word(seg, emit);
                if !is_stopword(&main) {
                    if !previous.is_empty() {
                        pair.clear();
                        pair.push_str(&previous);
                        pair.push(' ');
                        pair.push_str(&main);
                        emit(&pair);
                    }
                    previous = main;
                }
                compound = match compound {
                    Some((s, e)) if e == start => Some((s, start + seg.len())),
                    _ => {
                        flush(text, compound, emit);
                        Some((start, start + seg.len()))
                    }
                };
                last_end = start + seg.len();
            } else if seg == "-" && last_end == start {
                if let Some((s, _)) = compound {
                    compound = Some((s, start + 1));
                }
            } else {
                flush(text, compound.take(), emit);
            }
        }
        flush(text, compound, emit);
    }

    /// Emit one word's tokens; returns its main token (for pairs).
    fn latin_word(&self, word: &str, emit: &mut dyn FnMut(&str)) -> String {
        let word = word.trim_end_matches(['\'', '’']);
        let word = word.strip_suffix("'s").or_else(|| word.strip_suffix("’s")).unwrap_or(word);
        if word.chars().all(char::is_alphanumeric) || word.contains(['\'', '’']) {
            let token = self.word(word);
            emit(&token);
            return token.into_owned();
        }
        // pg_dump, v1.2, foo.bar: the whole, then each part.
        emit(word);
        for part in word.split(|c: char| !c.is_alphanumeric()).filter(|p| !p.is_empty()) {
            emit(&self.word(part));
        }
        word.to_string()
    }
}

/// Emit a `utf-8`-style compound when it spans more than one word.
fn flush(text: &str, span: Option<(usize, usize)>, emit: &mut dyn FnMut(&str)) {
    if let Some((s, e)) = span {
        let whole = text[s..e].trim_end_matches('-');
        if whole.contains('-') {
            emit(whole);
        }
    }
}

/// Overlapping bigrams of a CJK run, then each character on its own.
fn cjk_run(run: &str, emit: &mut dyn FnMut(&str)) {
    let mut bounds = run.char_indices().map(|(i, _)| i).chain([run.len()]);
    let (Some(mut a), Some(mut b)) = (bounds.next(), bounds.next()) else { return };
    if b == run.len() {
        emit(run);
        return;
    }
    for c in bounds {
        emit(&run[a..c]);
        (a, b) = (b, c);
    }
    for (i, c) in run.char_indices() {
        emit(&run[i..i + c.len_utf8()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Tokenizer::new().tokens(text, |t| out.push(t.to_string()));
        out
    }

    #[test]
    fn cjk_bigrams_find_a_word_inside_a_run() {
        let doc = toks("部署脚本用 pnpm 而不是 npm");
        let bigrams: Vec<&String> = doc.iter().filter(|t| Kind::of(t) == Kind::Bigram).collect();
        assert_eq!(bigrams, ["部署", "署脚", "脚本", "本用", "而不", "不是"]);
        assert!(doc.contains(&"部署".to_string()));
    }

    #[test]
    fn cjk_runs_give_bigrams_then_unigrams() {
        assert_eq!(toks("部署"), ["部署", "部", "署"]);
        assert_eq!(toks("而不是"), ["而不", "不是", "而", "不", "是"]);
    }

    #[test]
    fn lone_cjk_character_is_a_unigram() {
        assert_eq!(toks("锁"), ["锁"]);
        assert_eq!(toks("用pnpm部署"), ["用", "pnpm", "部署", "部", "署"]);
        assert_eq!(toks("a 锁 b"), ["a", "锁", "b"]);
    }

    #[test]
    fn kana_and_hangul_are_cjk() {
        assert_eq!(toks("デプロイ"), ["デプ", "プロ", "ロイ", "デ", "プ", "ロ", "イ"]);
        assert_eq!(toks("배포"), ["배포", "배", "포"]);
    }

    #[test]
    fn full_width_and_case_are_normalised() {
        assert_eq!(toks("ＰＮＰＭ，ｎｐｍ！"), ["pnpm", "npm", "pnpm npm"]);
        assert_eq!(toks("Deploys"), toks("deploying"));
        assert_eq!(toks("DEPLOYED"), ["deploy"]);
        assert_eq!(toks("部署（Ｋ８ｓ）"), ["部署", "部", "署", "k8s"]);
    }

    #[test]
    fn identifiers_by_parts_and_whole() {
        assert_eq!(toks("k8s"), ["k8s"]);
        assert_eq!(toks("pg_dump"), ["pg_dump", "pg", "dump"]);
        assert_eq!(toks("v1.2"), ["v1.2", "v1", "2"]);
        assert_eq!(toks("utf-8"), ["utf", "8", "utf 8", "utf-8"]);
        assert_eq!(toks("end-to-end"), ["end", "to", "end", "end end", "end-to-end"]);
        assert_eq!(toks("x - y"), ["x", "y", "x y"]);
    }

    #[test]
    fn possessives_and_plurals_meet_their_base() {
        assert_eq!(toks("Caroline's groups"), ["carolin", "group", "carolin group"]);
        assert_eq!(toks("caroline group"), toks("Caroline’s groups"));
        assert_eq!(toks("don't"), ["don't"]);
    }

    #[test]
    fn adjacent_words_give_a_pair_skipping_function_words() {
        assert_eq!(toks("support group"), ["support", "group", "support group"]);
        assert_eq!(
            toks("the support of the group"),
            ["the", "support", "of", "the", "group", "support group"]
        );
        assert_eq!(toks("用 pnpm 部署 npm"), ["用", "pnpm", "部署", "部", "署", "npm"]);
    }

    #[test]
    fn kinds_of_tokens() {
        assert_eq!(Kind::of("deploy"), Kind::Word);
        assert_eq!(Kind::of("utf-8"), Kind::Word);
        assert_eq!(Kind::of("support group"), Kind::Pair);
        assert_eq!(Kind::of("部署"), Kind::Bigram);
        assert_eq!(Kind::of("锁"), Kind::Unigram);
        assert_eq!(Kind::of("k8s"), Kind::Word);
    }

    #[test]
    fn punctuation_and_empty_text_give_nothing() {
        assert!(toks("").is_empty());
        assert!(toks("—，。！？ ... ---").is_empty());
    }
}
