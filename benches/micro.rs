//! Micro-benchmarks for the pure parts: tokenize, index, rank, compile.
//! `cargo bench --bench micro` prints the median of each over several runs;
//! every loop checks a count so the work cannot be optimised away.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use mem::model::compile::{Sources, plan};
use mem::model::frontmatter::Document;
use mem::model::memory::Memory;
use mem::model::relpath::RelPath;
use mem::model::roots::Scope;
use mem::rank::corpus::Corpus;
use mem::rank::score::{Params, Request, rank};
use mem::rank::tokenize::Tokenizer;

const WORDS: &[&str] = &[
    "部署",
    "脚本",
    "数据库",
    "迁移",
    "缓存",
    "超时",
    "监控",
    "日志",
    "deploy",
    "migration",
    "cache",
    "timeout",
    "pnpm",
    "PostgreSQL",
    "k8s",
    "rollout",
    "连接池",
    "回滚",
    "review",
    "flaky",
    "test",
];

/// A deterministic memory: a few sentences drawn from WORDS.
fn memory(i: usize) -> Memory {
    let pick = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    let body: String = (0..40).map(|k| format!("{} {}，", pick(k), pick(k + 3))).collect();
    let text = format!(
        "---\nsummary: {} {} {}\nload_when: [{}]\n---\n# {} {}\n\n{body}\n",
        pick(1),
        pick(2),
        pick(3),
        pick(4),
        pick(5),
        i
    );
    let doc = Document::parse(&text).expect("valid");
    let path = RelPath::parse(&format!("cat{}/m{i}", i % 12)).expect("valid");
    Memory::from_document(path, Scope::Project, &doc, 0).0
}

fn median(mut f: impl FnMut() -> usize, expect: usize) -> Duration {
    let mut times: Vec<Duration> = (0..9)
        .map(|_| {
            let t = Instant::now();
            let n = black_box(f());
            assert_eq!(n, expect, "the benchmark did not do its work");
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let memories: Vec<Memory> = (0..10_000).map(memory).collect();
    let tokenizer = Tokenizer::new();
    let text: String = memories.iter().take(1000).map(|m| m.body.as_str()).collect();
    let tokens = {
        let mut n = 0;
        tokenizer.tokens(&text, |_| n += 1);
        n
    };
    let t = median(
        || {
            let mut n = 0;
            tokenizer.tokens(&text, |_| n += 1);
            n
        },
        tokens,
    );
    println!("tokenize {} KiB of mixed text: {t:?} ({tokens} tokens)", text.len() / 1024);

    let t = median(|| Corpus::build(&memories).len(), memories.len());
    println!("index 10,000 memories: {t:?}");

    let corpus = Corpus::build(&memories);
    let filter = |_, _: &mem::model::memory::Memory| true;
    let req = Request {
        query: "部署 timeout 回滚",
        limit: 10,
        now_ms: 0,
        signals: &[],
        filter: &filter,
        explain: false,
    };
    let t = median(|| rank(&corpus, &memories, &Params::default(), &req).len(), 10);
    println!("rank one query over 10,000 memories: {t:?}");

    let indexes = BTreeMap::new();
    let root_md = "# Root\n\n<!-- auto:begin registry -->\n<!-- auto:end -->\n<!-- auto:begin routing -->\n<!-- auto:end -->\n";
    let sources = Sources { memories: &memories, root_md: Some(root_md), indexes: &indexes };
    let t = median(|| plan(&sources, false).changes.len(), 13);
    println!("compile 10,000 memories (12 indexes + ROOT.md): {t:?}");

    similarity();
    #[cfg(feature = "semantic")]
    vectors_file();
}

/// Reading a root's `vectors.bin` of 100,000 vectors: what each recall by
/// meaning paid before the vectors were kept, and what a process that read
/// the same file already pays (an open and a `stat`).
#[cfg(feature = "semantic")]
fn vectors_file() {
    use mem::semantic::vectors::Vectors;
    const N: usize = 100_000;
    const DIMS: usize = 384;
    let mut v = Vectors { model: "bench".into(), dims: DIMS, ..Vectors::default() };
    for i in 0..N as u64 {
        let mut x = vec![0f32; DIMS];
        x[(i as usize) % DIMS] = 1.0;
        v.by_key.insert(i, x);
    }
    let tmp = tempfile::tempdir().expect("a temporary folder");
    // Each at a new path, so each is read whole; only the read is timed.
    let mut reads: Vec<Duration> = (0..9)
        .map(|n| {
            let root = tmp.path().join(n.to_string());
            v.save(&root).expect("saved");
            let t = Instant::now();
            let count = black_box(Vectors::load(&root, "bench").0.by_key.len());
            let took = t.elapsed();
            assert_eq!(count, N, "the benchmark did not do its work");
            std::fs::remove_dir_all(&root).expect("removed");
            took
        })
        .collect();
    reads.sort();
    let first = reads[reads.len() / 2];
    let root = tmp.path().join("kept");
    v.save(&root).expect("saved");
    Vectors::load(&root, "bench");
    let kept = median(|| Vectors::load(&root, "bench").0.by_key.len(), N);
    println!(
        "a vectors file of 100,000 vectors of 384 dimensions: read {first:?}, \
         again while it is the same file {kept:?}"
    );
}

/// The tier's cosines over 100,000 vectors of 384 dimensions (the model's
/// size), raw and with the language offsets taken out (`rank::align`):
/// what a recall by meaning adds per memory.
fn similarity() {
    use mem::rank::align::Offsets;
    const N: usize = 100_000;
    const DIMS: usize = 384;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let vectors: Vec<(f32, Vec<f32>)> =
        (0..N).map(|i| ((i % 3) as f32 / 2.0, (0..DIMS).map(|_| next()).collect())).collect();
    let q: Vec<f32> = (0..DIMS).map(|_| next()).collect();
    // Raw: a dot product, as the model's vectors are of unit length.
    let dot = |v: &[f32]| q.iter().zip(v).map(|(a, b)| a * b).sum::<f32>();
    let raw = median(|| vectors.iter().filter(|(_, v)| dot(v) > -1e9).count(), N);
    let aligned = median(
        || {
            let off = Offsets::of(vectors.iter().map(|(w, v)| (*w, v.as_slice()))).expect("both");
            let q = off.query(&q, 0.0);
            vectors.iter().filter(|(w, v)| q.cosine(v, *w) > -2.0).count()
        },
        N,
    );
    let offsets = median(
        || usize::from(Offsets::of(vectors.iter().map(|(w, v)| (*w, v.as_slice()))).is_some()),
        1,
    );
    println!(
        "cosines of one query to 100,000 vectors: {raw:?} raw, {aligned:?} aligned \
         ({offsets:?} of it the languages' offsets)"
    );
}
