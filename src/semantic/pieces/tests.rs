use proptest::prelude::*;
use tokenizers::models::unigram::Unigram;

use super::*;

fn vocab(pieces: &[(&str, f64)]) -> Vec<(String, f64)> {
    pieces.iter().map(|(p, s)| (p.to_string(), *s)).collect()
}

/// A token as compared: its id, text and offsets.
type Seen = (u32, String, (usize, usize));

/// Each token, or None for an error.
fn seen(tokens: tokenizers::Result<Vec<Token>>) -> Option<Vec<Seen>> {
    tokens.ok().map(|t| t.into_iter().map(|t| (t.id, t.value, t.offsets)).collect())
}

fn both(vocab: &[(String, f64)], unk: Option<usize>, fallback: bool, text: &str) {
    let ours = Pieces::new(vocab, unk, fallback).unwrap();
    let theirs = Unigram::from(vocab.to_vec(), unk, fallback).unwrap();
    assert_eq!(seen(ours.tokens(text)), seen(theirs.tokenize(text)), "{text:?} over {vocab:?}");
}

#[test]
fn the_best_path_is_the_crates() {
    let v = vocab(&[
        ("<unk>", 0.0),
        ("a", 0.0),
        ("b", 0.0),
        ("c", 0.0),
        ("d", 0.0),
        ("cd", 1.0),
        ("ab", 2.0),
        ("abc", 5.0),
        ("abcd", 10.0),
    ]);
    let pieces = Pieces::new(&v, Some(0), false).unwrap();
    let texts: Vec<String> =
        pieces.tokens("abcdacdxx").unwrap().into_iter().map(|t| t.value).collect();
    assert_eq!(texts, ["abcd", "a", "cd", "xx"]);
    for text in ["", "x", "abcdacdxx", "xxabxx", "dcba", "部署 deploy"] {
        both(&v, Some(0), false, text);
    }
    // A piece listed twice: the crate keeps the later id and its score.
    let twice = vocab(&[("<unk>", 0.0), ("ab", -9.0), ("a", -1.0), ("b", -1.0), ("ab", -0.5)]);
    both(&twice, Some(0), false, "abab");
    // No unk_id: an unknown character is an error in both.
    both(&v, None, false, "axb");
    // Byte fallback.
    let bytes = vocab(&[("<unk>", 0.0), ("a", -1.0), ("<0xC3>", -5.0), ("<0xA9>", -5.0)]);
    both(&bytes, Some(0), true, "aéa");
    both(&bytes, Some(0), true, "a中a");
}

#[test]
fn a_vocabulary_reads_back_as_written_and_damage_is_refused() {
    let v = vocab(&[("<unk>", 0.0), ("▁部署", -3.5), ("ab", -2.0), ("a", -1.0), ("ab", -0.5)]);
    let pieces = Pieces::new(&v, Some(0), true).unwrap();
    let mut bytes = Vec::new();
    pieces.encode(&mut bytes);
    let mut at = &bytes[..];
    assert_eq!(Pieces::decode(&mut at), Some(pieces.clone()));
    assert!(at.is_empty());
    // An id or an end past the vocabulary, a cut: refused.
    let mut wrong = pieces.clone();
    wrong.sorted[1] = 5;
    let mut out = Vec::new();
    wrong.encode(&mut out);
    assert_eq!(Pieces::decode(&mut &out[..]), None);
    let mut past = pieces.clone();
    past.ends[1] = 400;
    out.clear();
    past.encode(&mut out);
    assert_eq!(Pieces::decode(&mut &out[..]), None);
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(Pieces::decode(&mut &bytes[..cut]), None, "cut at {cut}");
    }
}

/// Texts and pieces over a few characters of every width, spaces and the
/// metaspace mark, so that pieces overlap, tie and miss.
fn text() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec!['a', 'b', 'é', '中', '文', '😀', ' ', '▁', 'x']);
    prop::collection::vec(chars, 0..12).prop_map(|c| c.into_iter().collect())
}

fn piece() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec!['a', 'b', 'é', '中', '文', '😀', ' ', '▁']);
    prop::collection::vec(chars, 1..4).prop_map(|c| c.into_iter().collect())
}

proptest! {
    #[test]
    fn random_vocabularies_tokenize_as_the_crate_does(
        pieces in prop::collection::vec(
            (piece(), prop::sample::select(vec![-4.0, -2.5, -1.0, -1.0, -0.5, 0.0])),
            1..24,
        ),
        unk in prop::option::of(0usize..24),
        fallback in any::<bool>(),
        bytes in any::<bool>(),
        texts in prop::collection::vec(text(), 1..6),
    ) {
        let mut v = pieces;
        v.insert(0, ("<unk>".into(), 0.0));
        if bytes {
            v.extend(["<0xC3>", "<0xA9>", "<0x78>"].map(|p| (p.to_string(), -6.0)));
        }
        let unk = unk.filter(|&u| u < v.len());
        for t in &texts {
            both(&v, unk, fallback, t);
        }
    }
}
