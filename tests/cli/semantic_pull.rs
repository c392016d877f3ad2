//! `mem model pull` against the stand-in Hub of `hub.rs`, serving the real
//! model (`MEM_TEST_MODEL`, see `semantic.rs`) through `HF_ENDPOINT`, with
//! the Hub's cache (`HF_HOME`) in the test's folder: no test needs the
//! network.
#![cfg(feature = "semantic")]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::env::Env;
use crate::hub::{COMMIT, Hub};
use crate::semantic::{env_with_memories, model, var};

const REPO: &str = "intfloat/multilingual-e5-small";
const ALL: [&str; 4] =
    ["config.json", "config_sentence_transformers.json", "tokenizer.json", "model.safetensors"];

/// `mem model pull ARGS` with the stand-in as the Hub, `HF_HOME` and the
/// model folder in the test's folder.
fn pull(env: &Env, hub: &Hub, args: &[&str], vars: &[(&str, &str)]) -> Output {
    env.mem(["model", "pull"])
        .args(args)
        .env("HF_ENDPOINT", &hub.endpoint)
        .env("HF_HOME", hf_home(env))
        .env("MEM_MODEL", installed(env))
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

fn hf_home(env: &Env) -> PathBuf {
    env.tmp.path().join("hf")
}

fn installed(env: &Env) -> PathBuf {
    env.tmp.path().join("models/e5")
}

fn cached(env: &Env) -> PathBuf {
    hf_home(env).join("hub/models--intfloat--multilingual-e5-small")
}

fn json(out: &Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

/// The first line of a failure, which must say it all; exit 2.
fn refused(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr.lines().next().unwrap_or("").to_string()
}

fn model_id(dir: &Path) -> serde_json::Value {
    let out = Env::new().mem(["model", "status", "--json"]).env("MEM_MODEL", dir).output();
    json(&out.unwrap())["model_id"].clone()
}

fn hows(v: &serde_json::Value) -> Vec<(String, String)> {
    let files = v["pulled"]["files"].as_array().unwrap();
    files
        .iter()
        .map(|f| (f["name"].as_str().unwrap().into(), f["how"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn semantic_pull_downloads_checks_and_installs_the_model_then_recall_uses_it() {
    let env = env_with_memories();
    let hub = Hub::serve(REPO, &model(), &ALL);
    let v = json(&pull(&env, &hub, &["--json"], &[("HF_TOKEN", "hf_from_env")]));
    assert_eq!(v["ready"], true, "{v}");
    assert_eq!(v["model_id"], model_id(&model()), "the same files, the same model");
    assert_eq!(v["pulled"]["repo"], REPO);
    assert_eq!(v["pulled"]["revision"], "main");
    assert_eq!(v["pulled"]["commit"], COMMIT);
    assert!(hows(&v).iter().all(|(_, how)| how == "downloaded"), "{v}");
    assert_eq!(hows(&v).len(), 4);
    let digest = format!("sha256:{}", hub.etag("model.safetensors"));
    assert!(v["pulled"]["files"].as_array().unwrap().iter().any(|f| f["digest"] == *digest));
    // The vectors of the roots it sees, as an import makes them.
    assert_eq!(v["made_count"], 6, "{v}");
    assert_eq!(v["roots"][0]["vector_count"], 6, "{v}");
    // The Hub's cache, as its clients lay it out.
    let repo = cached(&env);
    assert_eq!(std::fs::read_to_string(repo.join("refs/main")).unwrap(), COMMIT);
    let weights = repo.join("snapshots").join(COMMIT).join("model.safetensors");
    let target = std::fs::read_link(&weights).unwrap();
    assert_eq!(target, Path::new("../../blobs").join(hub.etag("model.safetensors")));
    // The token went with the requests to the Hub.
    let log = hub.log();
    assert!(log.iter().any(|s| s.authorization.as_deref() == Some("Bearer hf_from_env")));
    // Recall ranks by meaning with the pulled model.
    let out = env
        .mem(["recall", "--json", "--no-track", "-n", "3", "--", "容器因为内存不足被杀掉"])
        .env("MEM_MODEL", installed(&env))
        .output()
        .unwrap();
    let found = json(&out);
    assert_eq!(found["results"][0]["path"], "pitfalls/oom-killed-pods.md", "{found}");

    // Again, with the token from the file `hf auth login` writes: every
    // file is in the cache and checks, so no byte is downloaded.
    std::fs::write(hf_home(&env).join("token"), "hf_from_file\n").unwrap();
    let before = hub.log().len();
    let again = json(&pull(&env, &hub, &["--json"], &[]));
    assert!(hows(&again).iter().all(|(_, how)| how == "cached"), "{again}");
    assert_eq!(again["made_count"], 0);
    let asked = &hub.log()[before..];
    assert!(asked.iter().all(|s| s.range.as_deref() == Some("bytes=0-0")), "{asked:?}");
    assert!(asked.iter().any(|s| s.authorization.as_deref() == Some("Bearer hf_from_file")));
}

#[test]
fn semantic_pull_resumes_a_download_cut_short() {
    let env = Env::new();
    // No config_sentence_transformers.json: the e5 prompts come from the name.
    let hub = Hub::serve(REPO, &model(), &["config.json", "tokenizer.json", "model.safetensors"]);
    hub.cut("model.safetensors");
    let line = refused(&pull(&env, &hub, &[], &[]));
    assert!(line.contains("model.safetensors") && line.contains("MiB kept"), "{line}");
    assert!(!installed(&env).exists(), "a failed pull installed a model");
    let part = cached(&env).join("blobs").join(format!("{}.part", hub.etag("model.safetensors")));
    let kept = std::fs::metadata(&part).expect("the part downloaded is kept").len();
    assert!(kept > 0);

    hub.mend();
    let before = hub.log().len();
    let v = json(&pull(&env, &hub, &["--json"], &[]));
    let hows = hows(&v);
    assert!(hows.contains(&("model.safetensors".into(), "resumed".into())), "{hows:?}");
    assert!(hows.contains(&("tokenizer.json".into(), "cached".into())), "{hows:?}");
    // The rest was asked for, from where the part ends.
    let asked = &hub.log()[before..];
    let from = format!("bytes={kept}-");
    assert!(
        asked.iter().any(|s| s.method == "GET"
            && s.path.starts_with("/cdn/")
            && s.range.as_deref() == Some(&*from)),
        "{asked:?}"
    );
    assert!(!part.exists());
    assert_eq!(v["model_id"], model_id(&model()), "prompts included: {v}");
}

#[test]
fn semantic_pull_refuses_a_file_that_does_not_match_its_checksum() {
    let env = Env::new();
    // What is installed stays as it was.
    std::fs::create_dir_all(installed(&env)).unwrap();
    std::fs::write(installed(&env).join("config.json"), "{\"before\": 1}").unwrap();
    let hub = Hub::serve(REPO, &model(), &ALL);
    hub.corrupt("tokenizer.json");
    let line = refused(&pull(&env, &hub, &[], &[]));
    let etag = hub.etag("tokenizer.json");
    assert!(line.contains("tokenizer.json") && line.contains("checksum"), "{line}");
    assert!(line.contains(&format!("expected sha256 {etag}, got ")), "{line}");
    let blob = cached(&env).join("blobs").join(&etag);
    assert!(!blob.exists(), "the bad copy is removed");
    assert_eq!(
        std::fs::read_to_string(installed(&env).join("config.json")).unwrap(),
        "{\"before\": 1}"
    );
    // The weights were never asked for.
    assert!(!hub.log().iter().any(|s| s.path.ends_with("model.safetensors")));
    // A regular file (its etag a git blob id) is checked as well.
    hub.mend();
    hub.corrupt("config.json");
    std::fs::remove_dir_all(hf_home(&env)).unwrap();
    let line = refused(&pull(&env, &hub, &[], &[]));
    let expected = format!("expected git blob sha1 {}, got ", hub.etag("config.json"));
    assert!(line.contains("config.json") && line.contains(&expected), "{line}");
}

#[test]
fn semantic_pull_names_a_missing_repo_revision_or_file_or_endpoint_in_one_line() {
    let env = Env::new();
    let hub = Hub::serve(REPO, &model(), &["config.json"]);
    let line = refused(&pull(&env, &hub, &["nobody/nothing"], &[]));
    for part in ["nobody/nothing", "main", "config.json", "404", &hub.endpoint] {
        assert!(line.contains(part), "{part}: {line}");
    }
    let line = refused(&pull(&env, &hub, &["--revision", "v9"], &[]));
    assert!(line.contains(REPO) && line.contains("v9") && line.contains("404"), "{line}");
    // A repo without the tokenizer: the file is named.
    let line = refused(&pull(&env, &hub, &[], &[]));
    assert!(line.contains("tokenizer.json") && line.contains("404"), "{line}");
    // Not a repo id, not a revision: refused before anything is asked.
    let asked = hub.log().len();
    assert!(refused(&pull(&env, &hub, &["../etc"], &[])).contains("../etc"));
    assert!(refused(&pull(&env, &hub, &["--revision", "../../x"], &[])).contains("../../x"));
    assert_eq!(hub.log().len(), asked);
    // No Hub there: the endpoint is named.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = env
        .mem(["model", "pull"])
        .env("HF_ENDPOINT", format!("http://{closed}"))
        .env("HF_HOME", hf_home(&env))
        .env("MEM_MODEL", installed(&env))
        .output()
        .unwrap();
    let line = refused(&out);
    assert!(line.contains(&format!("cannot reach http://{closed}")), "{line}");
    assert!(!installed(&env).exists());
}

/// docs/semantic.md's `sh semantic` block runs as written, its `pull`
/// served by the stand-in; then its offline block, whose import installs
/// the same model (no vector to make again).
#[test]
fn semantic_the_documented_blocks_run_as_written() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/semantic.md")).unwrap();
    let block = |lang: &str| -> String {
        doc.split(&format!("```{lang}\n"))
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap_or_else(|| panic!("a ```{lang} block in docs/semantic.md"))
            .to_string()
    };
    let (online, offline) = (block("sh semantic"), block("sh semantic-offline"));
    assert!(online.contains("mem model pull") && offline.contains("mem model import"));
    let env = Env::with_fixture("demo");
    let hub = Hub::serve(REPO, &model(), &ALL);
    let wheel = var("MEM_TEST_WHEEL");
    let wheels = format!("{}/", wheel.parent().unwrap().display());
    let path = crate::env::path_with_mem();
    let mut ran = 0;
    for line in online.lines().chain(offline.lines()) {
        if !line.contains("mem ") || line.starts_with("cargo ") {
            continue;
        }
        let line = line.replace("/tmp/wheel/", &wheels);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(env.work())
            .env_clear()
            .env("PATH", &path)
            .env("HOME", env.tmp.path().join("home"))
            .env("MEM_GLOBAL_DIR", env.global())
            .env("HF_ENDPOINT", &hub.endpoint)
            .output()
            .unwrap();
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "documented line failed: {line}\n{stdout}{stderr}");
        if line.contains("model pull") {
            assert!(stdout.contains(&format!("pulled {REPO}@main")), "{stdout}");
            assert!(stdout.contains("made 30 vectors"), "{stdout}");
        }
        if line.contains("model status") {
            assert!(stdout.contains("semantic tier: on"), "{stdout}");
            assert!(stdout.contains("30 of 30 memories have vectors"), "{stdout}");
        }
        if line.contains("model import") {
            assert!(stdout.contains("made 0 vectors"), "the same model: {stdout}");
        }
        ran += 1;
    }
    assert!(ran >= 5, "{ran} lines");
    // The Hub's cache went where its clients keep it, under HOME.
    assert!(
        env.tmp
            .path()
            .join("home/.cache/huggingface/hub")
            .join("models--intfloat--multilingual-e5-small/refs/main")
            .is_file()
    );
}

#[test]
fn semantic_pull_writes_nowhere_but_the_cache_whatever_the_hub_says_the_second_time() {
    let env = Env::new();
    let hub = Hub::serve(REPO, &model(), &ALL);
    // Checked once, then named as a path out of the cache to the download.
    let outside = env.tmp.path().join("outside");
    hub.lie("config.json", outside.to_str().unwrap());
    let out = pull(&env, &hub, &["--json"], &[]);
    let written: Vec<_> = std::fs::read_dir(env.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("outside"))
        .collect();
    assert!(written.is_empty(), "written out of the cache: {written:?}");
    assert_eq!(json(&out)["model_id"], model_id(&model()));
    let asked = |name: &str| hub.log().iter().filter(|s| s.path.ends_with(name)).count();
    assert_eq!(asked("/config.json"), 2, "asked about once, downloaded once: {:?}", hub.log());
}

#[test]
fn semantic_pull_names_a_cache_that_is_not_a_folder_before_asking_the_hub() {
    let env = Env::new();
    let hub = Hub::serve(REPO, &model(), &ALL);
    std::fs::write(hf_home(&env), "a file").unwrap();
    let out = pull(&env, &hub, &[], &[]);
    let line = refused(&out);
    let cache = hf_home(&env).join("hub");
    assert!(line.contains(&cache.display().to_string()), "{line}");
    let hint = String::from_utf8_lossy(&out.stderr).lines().nth(1).unwrap_or("").to_string();
    assert!(hint.contains("hint: set HF_HOME"), "{hint}");
    assert!(hub.log().is_empty(), "{:?}", hub.log());
}
