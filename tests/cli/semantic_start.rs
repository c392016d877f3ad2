//! The semantic tier's start: the prepared form a model folder keeps
//! (`mem-prepared.bin`), the tokenizer it holds, and the model loaded from
//! it against the model loaded from its files. Needs the real model, as
//! `semantic.rs` does (`MEM_TEST_MODEL`).
#![cfg(feature = "semantic")]

use std::path::{Path, PathBuf};

use mem::semantic::embedder::Model;
use mem::semantic::prepared::NAME;
use mem::semantic::tokenizer::{self, AGREE, Tokenizer};

use crate::env::Env;

fn model() -> PathBuf {
    let dir = std::env::var_os("MEM_TEST_MODEL").map(PathBuf::from);
    let dir = dir.expect("MEM_TEST_MODEL is not set: .ci/run imports the model and sets it");
    assert!(dir.join("tokenizer.json").is_file(), "{} holds no model", dir.display());
    dir
}

/// A model folder of its own under `env`: the test model's files linked
/// in, and its config copied (so that it can be changed).
fn linked_model(env: &Env) -> PathBuf {
    let dir = env.tmp.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    let from = model();
    for name in ["tokenizer.json", "model.safetensors", "config_sentence_transformers.json"] {
        std::os::unix::fs::symlink(from.join(name), dir.join(name)).unwrap();
    }
    std::fs::copy(from.join("config.json"), dir.join("config.json")).unwrap();
    dir
}

/// Texts of every kind: the repository's own documents and memories whole
/// (past the 512-token cut) and line by line, and generated strings mixing
/// scripts, marks, emoji, spaces and control characters.
fn texts() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("tests/data/look-alikes.txt")];
    let mut dirs = vec![root.join("docs"), root.join("fixtures/demo/.memory")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    let mut out: Vec<String> = AGREE.iter().map(|t| t.to_string()).collect();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        out.extend(text.lines().filter(|l| !l.trim().is_empty()).map(String::from));
        out.push(text);
    }
    let pool: Vec<char> = "aZ09 .,;:-_/\\\"'()[]{}<>@#$%^&*+=~`|?!\t\n\r\u{a0}\u{3000}\u{200b}\u{200d}\u{feff}\
        éüßøåçñ\u{301}\u{308}\u{327}部署脚本只用内存不足被杀掉ぁアカ한국어ไทยالعربيةहिन्दीΑλφαЖжЁ\
        😀👍🏽👨\u{200d}👩\u{200d}👧🇨🇳①Ａｂｃ\u{0}\u{1}\u{7}\u{1b}\u{7f}\u{85}\u{e000}\u{fffd}\u{10ffff}▁"
        .chars()
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let len = (next() % 40) as usize;
        out.push((0..len).map(|_| pool[(next() % pool.len() as u64) as usize]).collect());
    }
    out
}

#[test]
fn semantic_the_prepared_tokenizer_splits_as_the_crate_does() {
    let bytes = std::fs::read(model().join("tokenizer.json")).unwrap();
    let full = Tokenizer::full(&bytes, 512).unwrap();
    let (rest, pieces) = tokenizer::split(&bytes).unwrap().expect("a Unigram vocabulary");
    let prepared = Tokenizer::prepared(&rest, pieces, 512).unwrap();
    let texts = texts();
    let mut long = 0;
    for text in &texts {
        let (a, b) = (full.ids(text).unwrap(), prepared.ids(text).unwrap());
        assert_eq!(a, b, "{text:?}");
        long += usize::from(a.len() == 512);
    }
    assert!(texts.len() > 3000 && long > 3, "{} texts, {long} cut at 512 tokens", texts.len());
}

#[test]
fn semantic_a_model_is_prepared_once_and_embeds_the_same_either_way() {
    let env = Env::new();
    let dir = linked_model(&env);
    let prepared = dir.join(NAME);
    let texts = ["worker keeps dying from running out of ram", "容器因为内存不足被杀掉 OOMKilled"];
    let embed = |model: &Model| {
        let mut out: Vec<Vec<f32>> = texts.iter().map(|t| model.query(t).unwrap()).collect();
        let passages: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        out.extend(model.passages(&passages, &mut |_| {}).unwrap());
        out
    };
    // From its files (the crate's tokenizer), then prepared.
    let first = Model::load(&dir).unwrap();
    assert!(prepared.is_file(), "prepared on the first load");
    let from_files = embed(&first);
    let written = std::fs::metadata(&prepared).unwrap().modified().unwrap();
    let second = Model::load(&dir).unwrap();
    assert_eq!(
        std::fs::metadata(&prepared).unwrap().modified().unwrap(),
        written,
        "read, not made again"
    );
    assert_eq!(embed(&second), from_files, "the prepared model embeds as the files do");
    assert_eq!((&second.id, second.bytes), (&first.id, first.bytes));
    assert_eq!(first.id, Model::load(&model()).unwrap().id, "the identity of the same files");

    // A damaged prepared form is made again, and changes nothing.
    let mut bytes = std::fs::read(&prepared).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&prepared, &bytes).unwrap();
    let again = Model::load(&dir).unwrap();
    assert_eq!(embed(&again), from_files);
    assert_ne!(std::fs::read(&prepared).unwrap(), bytes, "made again");

    // A model file changed is another model.
    let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
    std::fs::write(dir.join("config.json"), format!("{config}\n")).unwrap();
    let changed = Model::load(&dir).unwrap();
    assert_ne!(changed.id, first.id);
    assert_eq!(Model::load(&dir).unwrap().id, changed.id);
}

#[test]
fn semantic_a_recall_answers_the_same_from_a_prepared_model() {
    let env = Env::with_fixture("demo");
    let dir = linked_model(&env);
    let recall = |query: &str| {
        let out = env
            .mem(["recall", "--json", "--no-track", "-n", "5", "--explain", "--", query])
            .env("MEM_MODEL", &dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let queries = ["deploy keeps failing", "数据库迁移锁表", "which node version"];
    // The first recall loads the model from its files and prepares it.
    let cold: Vec<_> = queries.iter().map(|q| recall(q)).collect();
    assert!(dir.join(NAME).is_file());
    let warm: Vec<_> = queries.iter().map(|q| recall(q)).collect();
    assert_eq!(cold, warm);
    assert!(cold[0]["results"][0]["explanation"]["fused"].is_object(), "{}", cold[0]);
}
