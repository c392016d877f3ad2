//! A model's tokenizer: the `tokenizers` crate's, built from
//! `tokenizer.json`, or the same pipeline around a prepared Unigram
//! vocabulary ([`Pieces`]). Only the vocabulary is replaced: the
//! normalizer, pre-tokenizer, special tokens, post-processor and the cut
//! at the model's length are the crate's own, read from `tokenizer.json`
//! without its vocabulary. A prepared tokenizer is kept only when it gives
//! the crate's ids on [`AGREE`].

use serde::Deserialize;
use tokenizers::{
    AddedToken, DecoderWrapper, NormalizerWrapper, PaddingParams, PostProcessorWrapper,
    PreTokenizerWrapper, TokenizerBuilder, TokenizerImpl, TruncationParams,
};

use super::pieces::Pieces;

type Around = TokenizerImpl<
    Pieces,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// A loaded tokenizer.
pub enum Tokenizer {
    /// The crate's, from the whole `tokenizer.json`.
    Full(Box<tokenizers::Tokenizer>),
    /// The crate's pipeline around a prepared vocabulary.
    Prepared(Box<Around>),
}

/// `tokenizer.json` without its model, as the crate reads it.
#[derive(Deserialize)]
struct Rest {
    version: String,
    truncation: Option<TruncationParams>,
    padding: Option<PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
}

/// Texts a prepared tokenizer must split as the crate does before it is
/// kept: scripts, marks, emoji, control and unassigned characters, runs of
/// spaces, special tokens, and a text past the 512-token cut.
pub const AGREE: &[&str] = &[
    "query: probe: 检查 the model",
    "passage: The deploy keeps failing because the service runs out of memory.",
    "部署脚本只用 pnpm，npm 会生成不同的 lockfile 并装出不同版本",
    "改了 ConfigMap 但 Pod 没更新 k8s rollout 😀👍🏽 café cafe\u{301} Ａｂｃ①",
    "  leading, \t tabs\n\nnew lines   and   runs of spaces  ",
    "<s> special </s> <pad><unk> tokens <mask>",
    "日本語のテキスト、한국어 텍스트، العربية, हिन्दी, ไทย, Ελληνικά, русский",
    "\u{0}\u{1}\u{7f}\u{200b}\u{feff}\u{e000}\u{10ffff}\u{fffd} control",
    "snake_case camelCase kebab-case HTTP/2 `mem recall --json` ~/.config 1,024.5e-3",
];

fn cut(tokenizer: &mut Around, max_tokens: usize) -> tokenizers::Result<()> {
    let params = TruncationParams { max_length: max_tokens, ..TruncationParams::default() };
    tokenizer.with_truncation(Some(params))?;
    tokenizer.with_padding(None);
    Ok(())
}

impl Tokenizer {
    /// The crate's tokenizer from the bytes of `tokenizer.json`, cut at
    /// `max_tokens`.
    pub fn full(bytes: &[u8], max_tokens: usize) -> tokenizers::Result<Tokenizer> {
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(bytes)?;
        let params = TruncationParams { max_length: max_tokens, ..TruncationParams::default() };
        tokenizer.with_truncation(Some(params))?;
        tokenizer.with_padding(None);
        Ok(Tokenizer::Full(Box::new(tokenizer)))
    }

    /// The crate's pipeline from `rest` (from [`split`]) around `pieces`,
    /// cut at `max_tokens`.
    pub fn prepared(
        rest: &str,
        pieces: Pieces,
        max_tokens: usize,
    ) -> tokenizers::Result<Tokenizer> {
        let rest: Rest = serde_json::from_str(rest)?;
        if rest.version != "1.0" {
            return Err(format!("unknown tokenizer version {}", rest.version).into());
        }
        let mut tokenizer: Around = TokenizerBuilder::new()
            .with_model(pieces)
            .with_normalizer(rest.normalizer)
            .with_pre_tokenizer(rest.pre_tokenizer)
            .with_post_processor(rest.post_processor)
            .with_decoder(rest.decoder)
            .with_truncation(rest.truncation)
            .with_padding(rest.padding)
            .build()?;
        tokenizer.add_tokens(rest.added_tokens)?;
        cut(&mut tokenizer, max_tokens)?;
        Ok(Tokenizer::Prepared(Box::new(tokenizer)))
    }

    /// The token ids of `text`, special tokens included.
    pub fn ids(&self, text: &str) -> tokenizers::Result<Vec<u32>> {
        let encoding = match self {
            Tokenizer::Full(t) => t.encode(text, true)?,
            Tokenizer::Prepared(t) => t.encode(text, true)?,
        };
        Ok(encoding.get_ids().to_vec())
    }

    /// Whether both give the same ids (or both fail) on every text.
    pub fn agrees(&self, other: &Tokenizer, texts: &[&str]) -> bool {
        texts.iter().all(|t| match (self.ids(t), other.ids(t)) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            _ => false,
        })
    }
}

/// A Unigram `tokenizer.json` split into the rest, as JSON, and its
/// vocabulary; None for another kind of model.
pub fn split(bytes: &[u8]) -> Result<Option<(String, Pieces)>, String> {
    let mut json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let Some(model) = json.as_object_mut().and_then(|o| o.remove("model")) else {
        return Ok(None);
    };
    if model.get("type").and_then(|t| t.as_str()) != Some("Unigram") {
        return Ok(None);
    }
    #[derive(Deserialize)]
    struct Unigram {
        vocab: Vec<(String, f64)>,
        unk_id: Option<usize>,
        #[serde(default)]
        byte_fallback: bool,
    }
    let unigram: Unigram = serde_json::from_value(model).map_err(|e| e.to_string())?;
    let pieces = Pieces::new(&unigram.vocab, unigram.unk_id, unigram.byte_fallback)?;
    Ok(Some((json.to_string(), pieces)))
}
