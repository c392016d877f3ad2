//! Where a result's text matched the query, for highlighting on a terminal.
//! Works on the original text, so byte ranges point into what is shown.

use std::collections::HashSet;
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use crate::base::text::is_cjk;
use crate::rank::tokenize::{Tokenizer, normalize};

/// Byte ranges of `text` whose tokens are in `matched`, merged and sorted.
///
/// ```
/// use std::collections::HashSet;
/// use mem::rank::{highlight::spans, tokenize::Tokenizer};
/// let matched: HashSet<String> = ["部署".to_string(), "deploy".to_string()].into();
/// let text = "部署脚本 deploys";
/// let got: Vec<&str> = spans(text, &matched, &Tokenizer::new()).into_iter().map(|r| &text[r]).collect();
/// assert_eq!(got, ["部署", "deploys"]);
/// ```
pub fn spans(text: &str, matched: &HashSet<String>, tokenizer: &Tokenizer) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut push = |r: Range<usize>| match out.last_mut() {
        Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
        _ => out.push(r),
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if is_cjk(c) {
            let end_of = |j: usize| chars.get(j + 1).map_or(text.len(), |x| x.0);
            let next_cjk = chars.get(i + 1).is_some_and(|x| is_cjk(x.1));
            let prev_cjk = i > 0 && is_cjk(chars[i - 1].1);
            if next_cjk && matched.contains(normalize(&text[start..end_of(i + 1)]).as_ref()) {
                push(start..end_of(i + 1));
            } else if !next_cjk
                && !prev_cjk
                && matched.contains(normalize(&text[start..end_of(i)]).as_ref())
            {
                push(start..end_of(i));
            }
            i += 1;
            continue;
        }
        let run_end = chars[i..].iter().position(|x| is_cjk(x.1)).map_or(chars.len(), |k| i + k);
        let run_end_byte = chars.get(run_end).map_or(text.len(), |x| x.0);
        for (offset, word) in text[start..run_end_byte].split_word_bound_indices() {
            let norm = normalize(word);
            if matched.contains(tokenizer.word(&norm).as_ref()) || matched.contains(norm.as_ref()) {
                push(start + offset..start + offset + word.len());
            }
        }
        i = run_end;
    }
    out
}
