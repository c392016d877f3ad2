//! Question words and function words that carry no topic. They are dropped
//! from queries (never from the index) unless nothing else is left, so
//! "How do I deploy?" ranks on "deploy" alone.

/// English function words, after stemming (the tokenizer stems words of
/// four letters or more, so `does` arrives as `doe`).
const ENGLISH: &[&str] = &[
    "a", "about", "also", "am", "an", "and", "ani", "any", "are", "as", "at", "be", "been", "but",
    "by", "can", "could", "did", "do", "doe", "does", "for", "from", "had", "has", "have", "he",
    "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "might",
    "my", "of", "on", "or", "our", "she", "should", "so", "some", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "us", "veri", "very", "was",
    "we", "were", "what", "when", "where", "whi", "which", "who", "whom", "why", "will", "with",
    "would", "you", "your",
];

/// Chinese question and function bigrams: the bigram split of 为什么, 如何,
/// 是否, 怎样 … carries the form of a question, not its topic.
const CHINESE: &[&str] = &[
    "么是", "么样", "什么", "以用", "何在", "可以", "哪些", "哪个", "如何", "应如", "怎么", "怎样",
    "是什", "是否", "是不", "有没", "有什", "能否", "该如", "该怎", "请问", "需要", "为什",
];

/// Chinese function characters: particles; pronouns and measure words;
/// prepositions and conjunctions; adverbs; copula, modal and existential
/// verbs; question words; the commonest numeral and place words. Alone they
/// carry no topic; in a bigram they often only glue two words together
/// (`的公` in `的公开`).
const FUNCTION_CHARS: &str = concat!(
    "的了吗呢吧啊之",
    "我你他它们这那其些个",
    "在和与及或把被从以到对为将而",
    "也都就还又不",
    "是有会能可要该",
    "么什如何怎哪样",
    "一中上",
);

/// True for a query token that should not count.
pub fn is_stopword(token: &str) -> bool {
    ENGLISH.binary_search(&token).is_ok()
        || CHINESE.contains(&token)
        || matches!(single_char(token), Some(c) if is_function_char(c))
}

/// True for a Chinese function character (`的`, `了`, `是`, `如`, …).
pub fn is_function_char(c: char) -> bool {
    FUNCTION_CHARS.contains(c)
}

fn single_char(token: &str) -> Option<char> {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_for_binary_search() {
        assert!(ENGLISH.windows(2).all(|w| w[0] < w[1]), "keep ENGLISH sorted");
    }

    #[test]
    fn stems_of_question_words_are_stopwords() {
        let t = crate::rank::tokenize::Tokenizer::new();
        for w in ["does", "what", "why", "very", "any", "the"] {
            assert!(is_stopword(&t.word(w)), "{w} -> {}", t.word(w));
        }
        assert!(!is_stopword("deploy"));
    }

    #[test]
    fn function_characters_are_stopwords_alone_but_not_in_words() {
        for t in ["的", "了", "是", "吗"] {
            assert!(is_stopword(t), "{t}");
        }
        for t in ["锁", "目的", "部署"] {
            assert!(!is_stopword(t), "{t}");
        }
        assert!(is_function_char('的') && !is_function_char('目'));
    }
}
