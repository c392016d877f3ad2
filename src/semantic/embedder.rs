//! A sentence-embedding model folder in the Hugging Face layout:
//! `config.json`, `tokenizer.json`, `model.safetensors` and, optionally,
//! `config_sentence_transformers.json` with the model's query and passage
//! prompts. Loaded once; embeds queries and passages.

use std::path::{Path, PathBuf};

use super::bert::{Config, Encoder};
use super::pieces::Pieces;
use super::prepared::{self, Prepared};
use super::tokenizer::{self, Tokenizer};
use super::weights::Weights;
use crate::base::codec::{checksum, mix};
use crate::base::error::{Error, Result};

/// The files a model folder must hold.
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
const SENTENCE: &str = "config_sentence_transformers.json";

/// How many texts go through the encoder together.
const BATCH: usize = 8;

/// A loaded model.
pub struct Model {
    pub dir: PathBuf,
    /// A hash of every byte of the model's files: vectors made by another
    /// model, or another copy of the weights, never mix with this one's.
    pub id: String,
    /// The bytes of the folder's files.
    pub bytes: u64,
    /// Its name: `_name_or_path` in `config.json`, on one line, else the folder.
    pub name: String,
    tokenizer: Tokenizer,
    encoder: Encoder,
    prompts: Prompts,
}

/// What goes before a query and before a passage (e5: `query: ` and
/// `passage: `; most other models: nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompts {
    pub query: String,
    pub passage: String,
}

/// Read a file of the model folder: a regular file (links are followed:
/// the folder is the user's), at most `limit` bytes.
fn read(dir: &Path, name: &str, limit: u64) -> Result<Vec<u8>> {
    let path = dir.join(name);
    let meta = std::fs::metadata(&path).map_err(|e| {
        Error::input(format!("{}: {e}", path.display()))
            .hint("a model folder holds config.json, tokenizer.json and model.safetensors")
    })?;
    if !meta.is_file() {
        return Err(Error::input(format!("{} is not a regular file", path.display())));
    }
    if meta.len() > limit {
        return Err(Error::input(format!("{} is larger than {} MiB", path.display(), limit >> 20)));
    }
    std::fs::read(&path).map_err(|e| Error::io(&path, e))
}

fn broken(dir: &Path, what: impl std::fmt::Display) -> Error {
    Error::input(format!("the model in {} cannot be used: {what}", dir.display()))
        .hint("install it again: `mem model pull`, or `mem model import PATH` offline")
}

/// The prompts of a model: from `config_sentence_transformers.json` when it
/// names them, else `query: ` / `passage: ` for an e5 model, else none.
pub fn prompts(dir: &Path, config: &serde_json::Value) -> Prompts {
    prompts_known_as(dir, config, "")
}

/// [`prompts`], where `also` is another name the model is known by (the
/// Hub repo it came from): an e5 model is told by its config's name, its
/// folder's, or this one.
pub fn prompts_known_as(dir: &Path, config: &serde_json::Value, also: &str) -> Prompts {
    if let Some(named) = named_prompts(dir) {
        return named;
    }
    let name = config.get("_name_or_path").and_then(|v| v.as_str()).unwrap_or("");
    let folder = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if [name, folder, also].iter().any(|n| n.to_lowercase().contains("e5")) {
        return Prompts { query: "query: ".into(), passage: "passage: ".into() };
    }
    Prompts::default()
}

/// The prompts `config_sentence_transformers.json` names, if it names a
/// query or passage prompt (sentence-transformers also writes the file
/// with no prompts, or an empty `prompts`, which says nothing).
pub fn named_prompts(dir: &Path) -> Option<Prompts> {
    let sentence: serde_json::Value =
        read(dir, SENTENCE, 1 << 20).ok().and_then(|b| serde_json::from_slice(&b).ok())?;
    let p = sentence.get("prompts")?.as_object()?;
    let get = |keys: &[&str]| keys.iter().find_map(|k| p.get(*k).and_then(|v| v.as_str()));
    let (query, passage) = (get(&["query"]), get(&["passage", "document"]));
    if query.is_none() && passage.is_none() {
        return None;
    }
    let own = |s: Option<&str>| s.unwrap_or("").to_string();
    Some(Prompts { query: own(query), passage: own(passage) })
}

fn encoder_of(dir: &Path, config: &Config) -> Result<Encoder> {
    let weights = Weights::open(&dir.join("model.safetensors")).map_err(|e| broken(dir, e))?;
    Encoder::load(weights, config).map_err(|e| broken(dir, e))
}

/// A model loaded from its files: its tokenizer, its encoder, the checksum
/// of each file, and the vocabulary to prepare, when it has one that the
/// prepared tokenizer splits as the crate's does.
type FromFiles = (Tokenizer, Encoder, [u64; 3], Option<(String, Pieces)>);

fn from_files(dir: &Path, config: &Config, config_bytes: &[u8]) -> Result<FromFiles> {
    let max = config.max_tokens();
    let tokenizer_bytes = read(dir, "tokenizer.json", 256 << 20)?;
    // Building the crate's tokenizer (its vocabulary trie) takes as long
    // as the rest together: on its own thread, beside the weights.
    let (tokenizer, weights) = std::thread::scope(|s| {
        let tokenizer = s.spawn(|| {
            let full = Tokenizer::full(&tokenizer_bytes, max).map_err(|e| broken(dir, e))?;
            let vocabulary =
                tokenizer::split(&tokenizer_bytes).ok().flatten().filter(|(rest, pieces)| {
                    Tokenizer::prepared(rest, pieces.clone(), max)
                        .is_ok_and(|p| p.agrees(&full, tokenizer::AGREE))
                });
            Ok((full, checksum(&tokenizer_bytes), vocabulary))
        });
        let weights = read(dir, "model.safetensors", 8 << 30).and_then(|weights| {
            let sum = checksum(&weights);
            drop(weights);
            Ok((encoder_of(dir, config)?, sum))
        });
        let tokenizer = tokenizer.join();
        (tokenizer.unwrap_or_else(|_| Err(broken(dir, "its tokenizer failed"))), weights)
    });
    let ((tokenizer, tokenizer_sum, vocabulary), (encoder, weights_sum)) = (tokenizer?, weights?);
    Ok((tokenizer, encoder, [checksum(config_bytes), tokenizer_sum, weights_sum], vocabulary))
}

impl Model {
    /// Load the model in `dir`: from its prepared form when that stands for
    /// the files there, else from the files, checked on the way (a probe
    /// embeds a text), and then prepared for the next start.
    pub fn load(dir: &Path) -> Result<Model> {
        let config_bytes = read(dir, "config.json", 1 << 20)?;
        let config_value: serde_json::Value =
            serde_json::from_slice(&config_bytes).map_err(|e| broken(dir, e))?;
        let config: Config = serde_json::from_value(config_value.clone())
            .map_err(|e| broken(dir, format!("config.json: {e}")))?;
        config.check().map_err(|e| broken(dir, e))?;
        let prompts = prompts(dir, &config_value);
        let stamps = prepared::stamps(dir).ok();
        let fresh = stamps.as_ref().and_then(|s| Prepared::read(dir, s));
        let checked = fresh.is_some();
        let (tokenizer, encoder, sums, vocabulary) = match fresh {
            // Prepared from these very files, which passed the probe then.
            Some(p) => {
                let tokenizer = match p.tokenizer {
                    Some((rest, pieces)) => Tokenizer::prepared(&rest, pieces, config.max_tokens())
                        .map_err(|e| broken(dir, e))?,
                    None => Tokenizer::full(
                        &read(dir, "tokenizer.json", 256 << 20)?,
                        config.max_tokens(),
                    )
                    .map_err(|e| broken(dir, e))?,
                };
                (tokenizer, encoder_of(dir, &config)?, p.sums, None)
            }
            None => from_files(dir, &config, &config_bytes)?,
        };
        let mut id = sums[0];
        id = mix(id, sums[1]);
        id = mix(id, sums[2]);
        id = mix(id, checksum(format!("{}\u{0}{}", prompts.query, prompts.passage).as_bytes()));
        let bytes = stamps.map_or(0, |s| s.iter().map(|s| s.len).sum());
        let name = config_value.get("_name_or_path").and_then(|n| n.as_str()).unwrap_or("");
        let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
        let name = if name.is_empty() { dir.display().to_string() } else { name };
        let model = Model {
            dir: dir.to_path_buf(),
            id: format!("{id:016x}"),
            bytes,
            name,
            tokenizer,
            encoder,
            prompts,
        };
        if checked {
            return Ok(model);
        }
        // A model that loads but cannot embed (a broken normalizer, sizes
        // that do not fit together) is refused here, not at every recall.
        let probe = model.query("probe: 检查 the model")?;
        if probe.is_empty() {
            return Err(broken(dir, "it gives empty vectors"));
        }
        // Prepared for the next start; a folder mem cannot write to is
        // loaded from its files every time.
        if let Some(stamps) = stamps {
            let _ = Prepared { stamps, sums, tokenizer: vocabulary }.write(dir);
        }
        Ok(model)
    }

    /// The query's vector.
    pub fn query(&self, text: &str) -> Result<Vec<f32>> {
        let mut out = self.embed(&[format!("{}{text}", self.prompts.query)], &mut |_| {})?;
        Ok(out.pop().unwrap_or_default())
    }

    /// The passages' vectors, in order; `done` is told how many are finished.
    pub fn passages(&self, texts: &[String], done: &mut dyn FnMut(usize)) -> Result<Vec<Vec<f32>>> {
        let prefixed: Vec<String> =
            texts.iter().map(|t| format!("{}{t}", self.prompts.passage)).collect();
        self.embed(&prefixed, done)
    }

    /// [`Model::run`], where a panic inside the tokenizer or the encoder
    /// (a hostile model file) is an error, and every vector must be finite
    /// and of unit length.
    fn embed(&self, texts: &[String], done: &mut dyn FnMut(usize)) -> Result<Vec<Vec<f32>>> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(texts, done)));
        std::panic::set_hook(previous);
        let vectors = run.map_err(|_| broken(&self.dir, "it failed while embedding"))??;
        let unit = |v: &Vec<f32>| {
            let norm: f32 = v.iter().map(|x| x * x).sum();
            v.iter().all(|x| x.is_finite()) && (norm - 1.0).abs() < 1e-3
        };
        if !vectors.iter().all(unit) {
            return Err(broken(
                &self.dir,
                "it gives vectors that are not finite and of unit length",
            ));
        }
        Ok(vectors)
    }

    fn run(&self, texts: &[String], done: &mut dyn FnMut(usize)) -> Result<Vec<Vec<f32>>> {
        let fail = |e: &dyn std::fmt::Display| broken(&self.dir, e);
        let mut ids: Vec<(usize, Vec<u32>)> = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            ids.push((i, self.tokenizer.ids(t).map_err(|e| fail(&e))?));
        }
        // Texts of like length share a batch, so little is padding.
        ids.sort_by_key(|(_, seq)| seq.len());
        let mut out = vec![Vec::new(); texts.len()];
        let mut finished = 0;
        for chunk in ids.chunks(BATCH) {
            let batch: Vec<Vec<u32>> = chunk.iter().map(|(_, s)| s.clone()).collect();
            let vectors = self.encoder.encode(&batch).map_err(|e| fail(&e))?;
            for ((i, _), v) in chunk.iter().zip(vectors) {
                out[*i] = v;
            }
            finished += chunk.len();
            done(finished);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_named_by_the_file_else_told_by_an_e5_name() {
        let dir = tempfile::tempdir().unwrap();
        let plain = serde_json::json!({});
        let e5 = Prompts { query: "query: ".into(), passage: "passage: ".into() };
        // The folder (a snapshot named by its commit) says nothing; the
        // repo's name does.
        assert_eq!(prompts(dir.path(), &plain), Prompts::default());
        assert_eq!(prompts_known_as(dir.path(), &plain, "intfloat/multilingual-e5-small"), e5);
        // A file that names no prompts (or an empty map) says nothing either.
        for said_nothing in [r#"{"__version__": {}}"#, r#"{"prompts": {}}"#] {
            std::fs::write(dir.path().join(SENTENCE), said_nothing).unwrap();
            assert_eq!(named_prompts(dir.path()), None);
            assert_eq!(prompts_known_as(dir.path(), &plain, "intfloat/e5-base"), e5);
        }
        std::fs::write(dir.path().join(SENTENCE), r#"{"prompts": {"query": "q: "}}"#).unwrap();
        let own = Prompts { query: "q: ".into(), passage: String::new() };
        assert_eq!(prompts_known_as(dir.path(), &plain, "intfloat/e5-base"), own);
    }
}
