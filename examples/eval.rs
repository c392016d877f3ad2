//! Retrieval quality on a labelled set: a memory tree plus `queries.jsonl`.
//!
//! ```text
//! cargo run --release --example eval -- ../shared/bench-data/pyfaq-zh [more sets…]
//! cargo run --release --example eval -- --cli target/release/mem ../shared/bench-data/locomo
//! cargo run --release --features semantic --example eval -- --model ~/.local/share/mem/model SET
//! ```
//!
//! Each set is ranked in a copy of its memory (in `$MEM_EVAL_WORK/<set>`, kept
//! and reused, when set): in-process through the library's recall
//! (`mem::ops::recall`, what the CLI runs), hits not counted; with
//! `--cli BIN`, `BIN recall --json -n 10 --no-track -- <query>` per query, as a
//! user would; with `--mcp BIN`, one `BIN mcp` per set asked `memory_recall`
//! (limit 10, hits not counted) per query, a model (`$MEM_MODEL`) loaded once.
//! `--model DIR` (feature `semantic`) fuses the words with the model's
//! similarities as recall does; `--param fuse.weight=0.6` or `fuse.spread=0.08`
//! tries other constants, `--dump FILE` writes each query's lexical pool and
//! similarities as JSON lines, for tuning the fusion offline.
//!
//! The library mode ranks at `$MEM_NOW` (epoch ms; else the clock), or, with
//! `MEM_EVAL_NOW=scope-end`, each query a day after the last update of its
//! `scope` (LoCoMo: the end of its conversation), so the recency boost has
//! something to tell apart; `--param tiers=1` makes that boost weigh the tier
//! of the last use instead of a half-life.
//!
//! A query line is `{"id", "query", "relevant": ["cat/slug.md", …], "lang"}`,
//! optionally with `"type"` and `"grades": {"cat/slug.md": 2, …}` (2 the
//! answer, 1 partly useful). Prints R@5, R@10 and MRR@10 (from `relevant`),
//! nDCG@10 (gain 2^grade − 1, a relevant path without a grade being grade 1)
//! and the share of queries with no result, per language, per type and overall.

use std::path::{Path, PathBuf};
use std::process::Command;

use mem::cache::index_all;
use mem::model::roots::{Root, Roots, Scope};
use mem::ops::filter::Filter;
use mem::ops::recall;
use mem::rank::score::{Memories, Params, Recency};
#[cfg(feature = "semantic")]
use mem::rank::score::{Request, rank};
use mem::settings::{Context, ModelSetting, Selection};

#[path = "common/metrics.rs"]
mod metrics;
use metrics::{Query, Table, load_queries};

/// Ranks one query: the relevant-or-not paths, best first.
type Ranker<'a> = Box<dyn Fn(&Query) -> Vec<String> + 'a>;

const USAGE: &str = "usage: eval [--cli BIN | --mcp BIN] [--scope] [--misses] [--model DIR] \
                     [--param NAME=VALUE] [--dump FILE] SET_DIR...";

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut cli, mut mcp, mut model, mut dump) = (None, None, None, None);
    let (mut scoped, mut show_misses) = (false, false);
    let (mut sets, mut params) = (Vec::new(), Vec::<String>::new());
    let bin = |arg: Option<String>| -> PathBuf {
        let bin = arg.expect("--cli and --mcp need the mem binary");
        std::fs::canonicalize(&bin).unwrap_or_else(|e| panic!("{bin}: {e}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cli" => cli = Some(bin(args.next())),
            "--mcp" => mcp = Some(bin(args.next())),
            "--scope" => scoped = true,
            "--misses" => show_misses = true,
            "--param" => params.push(args.next().expect("--param needs name=value")),
            "--model" => model = Some(PathBuf::from(args.next().expect("--model needs a folder"))),
            "--dump" => dump = Some(PathBuf::from(args.next().expect("--dump needs a file"))),
            "-h" | "--help" => return eprintln!("{USAGE}"),
            _ => sets.push(PathBuf::from(arg)),
        }
    }
    if sets.is_empty() {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    println!("| set | lang / type | queries | R@5 | R@10 | MRR@10 | nDCG@10 | no result |");
    println!("|---|---|---|---|---|---|---|---|");
    for set in &sets {
        let name = set.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let queries = load_queries(&set.join("queries.jsonl"));
        let work = Work::new(set);
        let ranker: Ranker = match (&cli, &mcp) {
            (Some(bin), _) => Box::new(|q| cli_recall(bin, &work.dir, q, scoped)),
            (None, Some(bin)) => mcp_ranker(bin, &work.dir, scoped),
            (None, None) => {
                library_ranker(&work.dir, scoped, tuned(&params), semantic(&model, &params, &dump))
            }
        };
        let mut table = Table::default();
        for q in &queries {
            let ranked = ranker(q);
            if show_misses && !ranked.iter().take(5).any(|p| q.relevant.contains(p)) {
                let at = ranked.iter().position(|p| q.relevant.contains(p));
                let at = at.map_or("-".into(), |i| (i + 1).to_string());
                let top = &ranked[..ranked.len().min(3)];
                println!("miss [{at}] {} {} -> want {:?}, got {top:?}", q.id, q.query, q.relevant);
            }
            table.add(&ranked, q);
        }
        table.rows(&name).iter().for_each(|row| println!("{row}"));
    }
}

/// Params with `name=value` overrides, for trying constants: `k1=1.5`, `w.body=0.5`,
/// `b.body=0.6`, `pair=0.3`, `bigram=0.6`, `unigram=0.3`, `function_bigram=0.6`,
/// `derived_summary=1`, `coverage=0.5`; the recency boost: `recency=0.1`,
/// `half_life=30` (days), `tiers=1` (weigh the tier of the last use instead
/// of a half-life).
fn tuned(overrides: &[String]) -> Params {
    let mut p = Params::default();
    let fields = ["title", "summary", "highlight", "load_when", "tags", "path", "body"];
    for o in overrides {
        let (name, value) = o.split_once('=').expect("name=value");
        let v: f32 = value.parse().expect("a number");
        let field = |n: &str| fields.iter().position(|f| *f == n).expect("a field name");
        match name.split_once('.') {
            Some(("w", f)) => p.weight[field(f)] = v,
            Some(("b", f)) => p.b[field(f)] = v,
            _ if name == "k1" => p.k1 = v,
            _ if name == "pair" => p.pair = v,
            _ if name == "bigram" => p.bigram = v,
            _ if name == "unigram" => p.unigram = v,
            _ if name == "function_bigram" => p.function_bigram = v,
            _ if name == "derived_summary" => p.derived_summary = v,
            _ if name == "coverage" => p.coverage = v,
            _ if name == "recency" => p.recency = v,
            _ if name == "half_life" => p.half_life_days = f64::from(v),
            _ if name == "tiers" => {
                p.recency_by = if v > 0.0 { Recency::Tiers } else { Recency::HalfLife };
            }
            _ if name.starts_with("fuse.") => {}
            _ => panic!("unknown parameter {name}"),
        }
    }
    p
}

/// A copy of a set's `.memory/` to rank in: the index writes its cache beside
/// the memories, hits are counted there, and the sets are shared.
struct Work {
    /// The folder holding the copied `.memory/`.
    dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Work {
    fn new(set: &Path) -> Work {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let dir = std::env::var_os("MEM_EVAL_WORK")
            .map(|d| PathBuf::from(d).join(set.file_name().expect("a set folder")))
            .unwrap_or_else(|| tmp.path().to_path_buf());
        if !dir.join(".memory").exists() {
            copy_tree(&set.join(".memory"), &dir.join(".memory"));
        }
        Work { dir, _tmp: tmp }
    }
}

/// The semantic tier's settings for the library mode.
struct Semantic {
    dir: PathBuf,
    fuse: mem::rank::fuse::FuseParams,
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    dump: Option<std::cell::RefCell<std::fs::File>>,
}

fn semantic(
    model: &Option<PathBuf>,
    params: &[String],
    dump: &Option<PathBuf>,
) -> Option<Semantic> {
    let dir = model.clone()?;
    if !cfg!(feature = "semantic") {
        panic!("--model needs the semantic feature: --features semantic");
    }
    let mut fuse = mem::rank::fuse::FuseParams::default();
    for o in params {
        let (name, value) = o.split_once('=').expect("name=value");
        let v: f32 = value.parse().expect("a number");
        match name {
            "fuse.weight" => fuse.weight = v,
            "fuse.spread" => fuse.spread = v,
            "fuse.lead" => fuse.lead = v,
            "fuse.margin" => fuse.margin = v,
            "fuse.related" => fuse.related = v,
            "fuse.align" => fuse.align = v > 0.0,
            _ => {}
        }
    }
    let dump = dump.as_ref().map(|p| {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(p);
        std::cell::RefCell::new(file.unwrap_or_else(|e| panic!("{}: {e}", p.display())))
    });
    Some(Semantic { dir, fuse, dump })
}

/// What the library's recall runs in: the set's copy as the only root.
fn context(work: &Path, model: Option<&Path>) -> Context {
    let now_ms = std::env::var("MEM_NOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| mem::base::time::epoch_ms(std::time::SystemTime::now()));
    let root = |scope, dir| Root { scope, dir };
    Context {
        roots: Roots {
            // Never created, so never read.
            global: root(Scope::Global, work.join("no-global-root")),
            project: Some(root(Scope::Project, work.join(".memory"))),
            project_named: false,
            notes: Vec::new(),
        },
        selection: Selection::ProjectOnly,
        now_ms,
        json: true,
        color: false,
        quiet: true,
        cwd: work.to_path_buf(),
        lang: mem::base::time::Lang::En,
        role: None,
        trust_all: true,
        command: "recall",
        model: model.map_or(ModelSetting::Off, |dir| ModelSetting::Named(dir.to_path_buf())),
    }
}

/// Ranks through the library's recall (`mem::ops::recall`), as the CLI
/// does; hits are not counted.
fn library_ranker(
    work: &Path,
    scoped: bool,
    params: Params,
    semantic: Option<Semantic>,
) -> Ranker<'static> {
    let ctx = context(work, semantic.as_ref().map(|s| s.dir.as_path()));
    let root = ctx.roots.project.clone().expect("the set's root");
    let lib = index_all(&[&root]);
    for p in &lib.problems {
        eprintln!("warning: {p}");
    }
    // `MEM_EVAL_NOW=scope-end`: each query asked a day after the last
    // update of its scope (a LoCoMo conversation), as at the end of it.
    let scope_end = std::env::var("MEM_EVAL_NOW").is_ok_and(|v| v == "scope-end");
    let mut ends: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for m in (0..lib.docs.len()).filter_map(|d| lib.docs.memory(d)) {
        let end = ends.entry(m.path.category.clone()).or_insert(i64::MIN);
        *end = (*end).max(m.updated);
    }
    let tier = semantic.as_ref().map(|_| {
        let kept = mem::ops::tier::Kept::default();
        let (loaded, note) = kept.get(&ctx);
        assert!(loaded.is_some(), "{}", note.unwrap_or_default());
        #[cfg(feature = "semantic")]
        embed_all(loaded.expect("loaded"), &root, &lib);
        kept
    });
    let fuse = semantic.as_ref().map_or_else(Default::default, |s| s.fuse);
    Box::new(move |q: &Query| {
        let mut ctx = ctx.clone();
        if let (true, Some(end)) = (scope_end, q.scope.as_ref().and_then(|s| ends.get(s))) {
            ctx.now_ms = end + mem::base::time::DAY_MS;
        }
        let filter = Filter { category: q.scope.clone().filter(|_| scoped), ..Filter::default() };
        let options = recall::Options {
            filter,
            track: false,
            params: params.clone(),
            fuse,
            ..recall::Options::new(q.query.clone())
        };
        #[cfg(feature = "semantic")]
        if let (Some(kept), Some(dump)) = (&tier, semantic.as_ref().and_then(|s| s.dump.as_ref())) {
            let model = &kept.get(&ctx).0.expect("loaded").model;
            dump_query(dump, model, &root, &options, q, ctx.now_ms);
        }
        let report = recall::run_with(&ctx, &options, tier.as_ref())
            .unwrap_or_else(|e| panic!("{}: {e}", q.id));
        let paths: Vec<String> = report.results.into_iter().map(|f| f.path).collect();
        if std::env::var_os("MEM_EVAL_RANKS").is_some() {
            eprintln!("ranks\t{}\t{}", q.id, paths.join("\t"));
        }
        paths
    })
}

/// Every memory's vector, made before the first query (recall makes only a
/// few per query).
#[cfg(feature = "semantic")]
fn embed_all(tier: &mem::ops::tier::Tier, root: &Root, lib: &mem::cache::Library) {
    let mut known = mem::semantic::Known::load(&[root], &tier.model.id);
    let all: Vec<&mem::model::memory::Memory> =
        (0..lib.docs.len()).filter_map(|d| lib.docs.memory(d)).collect();
    let missing: Vec<&mem::model::memory::Memory> =
        all.iter().copied().filter(|m| known.get(m).is_none()).collect();
    known.fill(&tier.model, &missing, usize::MAX);
    known.save(&all).unwrap_or_else(|e| panic!("{e}"));
}

/// `--dump`: one JSON line per query with the lexical pool and the
/// similarities the fusion starts from (what recall does not return), for
/// tuning the fusion offline.
#[cfg(feature = "semantic")]
fn dump_query(
    dump: &std::cell::RefCell<std::fs::File>,
    model: &mem::semantic::embedder::Model,
    root: &Root,
    options: &recall::Options,
    q: &Query,
    now_ms: i64,
) {
    use std::io::Write as _;
    let lib = index_all(&[root]);
    let filter = |_, m: &mem::model::memory::Memory| {
        !m.is_superseded() && options.filter.category.as_ref().is_none_or(|c| &m.path.category == c)
    };
    let pool = Request {
        query: &q.query,
        limit: mem::rank::fuse::POOL,
        now_ms,
        signals: &[],
        filter: &filter,
        explain: false,
    };
    let pool_hits = rank(&lib.corpus, &lib.docs, &options.params, &pool);
    let eligible: Vec<(usize, &mem::model::memory::Memory)> = (0..lib.docs.len())
        .filter(|&d| lib.corpus.is_live(d))
        .filter_map(|d| lib.docs.memory(d).map(|m| (d, m)))
        .filter(|(d, m)| filter(*d, m))
        .collect();
    let known = mem::semantic::Known::load(&[root], &model.id);
    let (similar, _) =
        mem::semantic::similar(model, &known, &q.query, &eligible, options.fuse.align)
            .unwrap_or_else(|e| panic!("{e}"));
    let path = |d: usize| lib.docs.memory(d).map(|m| m.file()).unwrap_or_default();
    let mut top = similar.clone();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    // The 100 most similar, and every lexical match's similarity.
    let floor = top.get(99).map_or(f32::MIN, |t| t.1);
    top.retain(|t| t.1 >= floor || pool_hits.iter().any(|h| h.doc == t.0));
    let line = serde_json::json!({
        "query": q.query, "relevant": q.relevant, "lang": q.lang, "type": q.kind.as_deref().unwrap_or(""),
        "lexical": pool_hits.iter().map(|h| (path(h.doc), h.score, h.exact, &h.matched)).collect::<Vec<_>>(),
        "similar": top.iter().map(|&(d, s)| (path(d), s)).collect::<Vec<_>>(),
    });
    writeln!(dump.borrow_mut(), "{line}").expect("write the dump");
}

/// Copy the folders and files under `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for entry in entries.map(|e| e.expect("a folder entry")) {
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// `bin` run in `work` with no global root and nothing from the caller's
/// environment choosing the project.
fn mem(bin: &Path, work: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(work)
        .env("MEM_GLOBAL_DIR", std::env::temp_dir().join("mem-eval-no-global"))
        .env_remove("MEM_PROJECT_DIR");
    cmd
}

/// The paths of a recall's JSON results, best first.
fn paths(v: &serde_json::Value) -> Vec<String> {
    v["results"].as_array().map_or(Vec::new(), |rs| {
        rs.iter().filter_map(|r| r["path"].as_str().map(str::to_string)).collect()
    })
}

/// A running `mem mcp`, stopped when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `mem mcp` in `work`, answering `memory_recall` per query.
fn mcp_ranker(bin: &Path, work: &Path, scoped: bool) -> Ranker<'static> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    // With a model, every vector first (a recall makes only a few).
    let status = mem(bin, work).args(["model", "status", "--json"]).output().expect("run mem");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap_or_default();
    if status["ready"] == true {
        let made = mem(bin, work).args(["model", "embed"]).output().expect("run mem");
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    }
    let mut child = Server(
        mem(bin, work)
            .arg("mcp")
            .env("MEM_TRUST_ALL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run mem mcp"),
    );
    let mut stdin = child.0.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.0.stdout.take().expect("stdout"));
    let mut id = 0u64;
    let mut call = move |method: &str, params: serde_json::Value| -> serde_json::Value {
        id += 1;
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").expect("write to mem mcp");
        if method == "initialize" {
            let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            writeln!(stdin, "{note}").expect("write to mem mcp");
        }
        loop {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("read from mem mcp");
            assert!(!line.is_empty(), "mem mcp ended");
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
            if v["id"] == id {
                return v;
            }
        }
    };
    let hello = serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "eval", "version": "1"}});
    call("initialize", hello);
    let call = std::cell::RefCell::new(call);
    Box::new(move |q: &Query| {
        let _keep = &child;
        let mut args = serde_json::json!({"query": q.query, "limit": 10, "track": false});
        if let (true, Some(scope)) = (scoped, &q.scope) {
            args["category"] = scope.clone().into();
        }
        let reply = call.borrow_mut()(
            "tools/call",
            serde_json::json!({"name": "memory_recall", "arguments": args}),
        );
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("{}");
        paths(&serde_json::from_str(text).unwrap_or_default())
    })
}

fn cli_recall(bin: &Path, work: &Path, q: &Query, scoped: bool) -> Vec<String> {
    let mut cmd = mem(bin, work);
    cmd.args(["recall", "--json", "-n", "10", "--no-track"]);
    if let (true, Some(scope)) = (scoped, &q.scope) {
        cmd.args(["--category", scope]);
    }
    let out = cmd.args(["--", &q.query]).output().expect("run mem");
    if out.stdout.is_empty() {
        return Vec::new();
    }
    paths(&serde_json::from_slice(&out.stdout).expect("recall --json output"))
}
