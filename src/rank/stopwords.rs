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

/// True for a query token that should not count.
pub fn is_stopword(token: &str) -> bool {
    ENGLISH.binary_search(&token).is_ok() || CHINESE.contains(&token)
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
}
