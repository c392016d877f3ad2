//! A BERT encoder (BERT, MiniLM, multilingual-e5, XLM-RoBERTa) on candle:
//! token ids in, one mean-pooled, L2-normalised vector per text out.

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

use super::weights::{Rows, Weights};

/// The parts of `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub model_type: Option<String>,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub vocab_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub hidden_act: Option<String>,
    #[serde(default)]
    pub pad_token_id: Option<usize>,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}

impl Config {
    /// Where position ids start: RoBERTa models count from past the pad id.
    pub fn position_offset(&self) -> usize {
        match self.model_type.as_deref() {
            Some("xlm-roberta" | "roberta") => self.pad_token_id.unwrap_or(1).saturating_add(1),
            _ => 0,
        }
    }

    /// The longest input, in tokens, special tokens included.
    pub fn max_tokens(&self) -> usize {
        self.max_position_embeddings.saturating_sub(self.position_offset()).clamp(2, 512)
    }

    /// Why this configuration cannot be run, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        let known = ["bert", "xlm-roberta", "roberta"];
        match self.model_type.as_deref() {
            Some(t) if known.contains(&t) => {}
            other => {
                return Err(format!(
                    "model_type {} is not a BERT-family encoder ({})",
                    other.unwrap_or("(none)"),
                    known.join(", ")
                ));
            }
        }
        if let Some(act) = &self.hidden_act
            && act != "gelu"
        {
            return Err(format!("hidden_act {act} is not supported (gelu is)"));
        }
        let heads = self.num_attention_heads;
        if heads == 0 || self.hidden_size == 0 || !self.hidden_size.is_multiple_of(heads) {
            return Err("hidden_size does not split into num_attention_heads".into());
        }
        let sane = (1..=256).contains(&self.num_hidden_layers)
            && self.hidden_size <= 8192
            && (1..=65536).contains(&self.intermediate_size)
            && (1..=4_000_000).contains(&self.vocab_size)
            && (self.position_offset() + 2..=65536).contains(&self.max_position_embeddings)
            && (1..=64).contains(&self.type_vocab_size)
            && self.layer_norm_eps.is_finite()
            && self.layer_norm_eps > 0.0;
        if !sane {
            return Err("its sizes are out of range for a sentence model".into());
        }
        Ok(())
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The loaded encoder.
pub struct Encoder {
    words: Rows,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    offset: usize,
    device: Device,
}

fn linear(vb: VarBuilder, name: &str, out: usize, inp: usize) -> candle_core::Result<Linear> {
    candle_nn::linear(inp, out, vb.pp(name))
}

fn norm(vb: VarBuilder, name: &str, size: usize, eps: f64) -> candle_core::Result<LayerNorm> {
    candle_nn::layer_norm(size, eps, vb.pp(name))
}

impl Encoder {
    /// Build the encoder from weights named as Hugging Face names them
    /// (with or without a `bert.` / `roberta.` prefix).
    pub fn load(weights: Weights, c: &Config) -> candle_core::Result<Encoder> {
        let table = "embeddings.word_embeddings.weight";
        let prefix = ["", "bert.", "roberta.", "model."]
            .into_iter()
            .find(|p| weights.contains(&format!("{p}{table}")))
            .unwrap_or("");
        let (h, eps) = (c.hidden_size, c.layer_norm_eps);
        // The largest table by far (250,037 rows for e5): read a row at a
        // time, as tokens need them.
        let words = weights.rows(&format!("{prefix}{table}"), c.vocab_size, h)?;
        let vb = VarBuilder::from_backend(Box::new(weights), DType::F32, Device::Cpu);
        let vb = match prefix.strip_suffix('.') {
            Some(p) => vb.pp(p),
            None => vb,
        };
        let e = vb.pp("embeddings");
        let positions =
            candle_nn::embedding(c.max_position_embeddings, h, e.pp("position_embeddings"))?;
        let types = candle_nn::embedding(c.type_vocab_size, h, e.pp("token_type_embeddings"))?;
        let norm_ = norm(e.clone(), "LayerNorm", h, eps)?;
        let layer = |i: usize| -> candle_core::Result<Layer> {
            let l = vb.pp(format!("encoder.layer.{i}"));
            Ok(Layer {
                query: linear(l.clone(), "attention.self.query", h, h)?,
                key: linear(l.clone(), "attention.self.key", h, h)?,
                value: linear(l.clone(), "attention.self.value", h, h)?,
                attention_out: linear(l.clone(), "attention.output.dense", h, h)?,
                attention_norm: norm(l.clone(), "attention.output.LayerNorm", h, eps)?,
                intermediate: linear(l.clone(), "intermediate.dense", c.intermediate_size, h)?,
                output: linear(l.clone(), "output.dense", h, c.intermediate_size)?,
                output_norm: norm(l, "output.LayerNorm", h, eps)?,
            })
        };
        // Reading and widening the layers is most of a start: half on
        // another thread.
        let n = c.num_hidden_layers;
        let layers = std::thread::scope(|s| {
            let later = s.spawn(|| (n / 2..n).map(layer).collect::<candle_core::Result<Vec<_>>>());
            let mut layers = (0..n / 2).map(layer).collect::<candle_core::Result<Vec<_>>>()?;
            let later =
                later.join().map_err(|_| candle_core::Error::Msg("a layer failed".into()))?;
            layers.extend(later?);
            Ok::<_, candle_core::Error>(layers)
        })?;
        Ok(Encoder {
            words,
            positions,
            types,
            norm: norm_,
            layers,
            heads: c.num_attention_heads,
            offset: c.position_offset(),
            device: vb.device().clone(),
        })
    }

    /// Encode a batch of token id lists (each already cut to the model's
    /// length): one mean-pooled, L2-normalised vector per list.
    pub fn encode(&self, batch: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(Vec::len).max().unwrap_or(0);
        if len == 0 {
            return Ok(Vec::new());
        }
        let b = batch.len();
        let mut ids = Vec::with_capacity(b * len);
        let mut mask = Vec::with_capacity(b * len);
        for seq in batch {
            ids.extend(seq.iter().copied());
            ids.extend(std::iter::repeat_n(0u32, len - seq.len()));
            mask.extend(std::iter::repeat_n(1f32, seq.len()));
            mask.extend(std::iter::repeat_n(0f32, len - seq.len()));
        }
        let mask = Tensor::from_vec(mask, (b, len), &self.device)?;
        let positions: Vec<u32> = (0..len).map(|p| (p + self.offset) as u32).collect();
        let positions = Tensor::from_vec(positions, len, &self.device)?;
        let types = Tensor::zeros((b, len), DType::U32, &self.device)?;
        let x = self
            .words
            .gather(&ids)?
            .reshape((b, len, ()))?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .add(&self.types.forward(&types)?)?;
        let mut x = self.norm.forward(&x)?;
        // Padding gets a large negative score, so no token attends to it.
        let bias = ((mask.clone() - 1.0)? * 1e4)?.reshape((b, 1, 1, len))?;
        for layer in &self.layers {
            x = self.layer(layer, &x, &bias)?;
        }
        // Mean over the real tokens, then unit length.
        let m = mask.unsqueeze(2)?;
        let sum = x.broadcast_mul(&m)?.sum(1)?;
        let count = m.sum(1)?;
        let mean = sum.broadcast_div(&count)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }

    fn layer(&self, l: &Layer, x: &Tensor, bias: &Tensor) -> candle_core::Result<Tensor> {
        let (b, t, h) = x.dims3()?;
        let hd = h / self.heads;
        let split = |y: Tensor| -> candle_core::Result<Tensor> {
            y.reshape((b, t, self.heads, hd))?.transpose(1, 2)?.contiguous()
        };
        let q = split(l.query.forward(x)?)?;
        let k = split(l.key.forward(x)?)?;
        let v = split(l.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (hd as f64).sqrt())?.broadcast_add(bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((b, t, h))?;
        let x = l.attention_norm.forward(&(l.attention_out.forward(&context)? + x)?)?;
        let mid = l.intermediate.forward(&x)?.gelu_erf()?;
        l.output_norm.forward(&(l.output.forward(&mid)? + x)?)
    }
}

/// Dot product of two unit vectors: their cosine.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
