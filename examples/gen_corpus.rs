//! A deterministic synthetic memory tree, for benchmarks.
//!
//! ```text
//! cargo run --release --example gen_corpus -- --count 10000 --seed 42 OUT_DIR
//! cargo run --release --example gen_corpus -- --count 1000 --force /tmp/mem-bench/1000
//! ```
//!
//! Writes `OUT_DIR/.memory/ROOT.md` (a title, the `registry` and `routing`
//! marker regions, and a `<!-- gen_corpus count=N seed=S -->` stamp) plus
//! `--count` memory files (default 10000, seed default 42) spread over twelve
//! categories (`rules`, `decisions`, `pitfalls`, `facts`, …, `security`).
//!
//! The text is built from the word and phrase lists below: about half of the
//! files are Chinese with English technical terms mixed in ("部署脚本用 pnpm
//! 而不是 npm"), half English. Each file has `id`, `kind`, `summary`,
//! `created` / `updated` (epoch ms in `[1780000000000, 1795000000000)`);
//! about 30% have `load_when`, 20% `tags`, 10% `highlight`, 2% `pinned`.
//! The body is `# Title` plus 2–5 paragraphs; files average about 1.3 KiB.
//!
//! Output depends only on the seed and the file index (each file has its own
//! PRNG stream), so the same `--seed` and `--count` give byte-identical trees,
//! and a smaller tree is a prefix of a larger one with the same seed.
//!
//! An existing `OUT_DIR/.memory` is refused (exit 2) unless `--force` is given;
//! `--force` deletes it first, but only when its `ROOT.md` carries the
//! `gen_corpus` stamp, so a real memory tree is never removed.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const CATEGORIES: &[(&str, &str)] = &[
    ("rules", "rule"),
    ("decisions", "decision"),
    ("pitfalls", "pitfall"),
    ("facts", "fact"),
    ("references", "reference"),
    ("preferences", "preference"),
    ("ops", ""),
    ("frontend", ""),
    ("backend", ""),
    ("infra", ""),
    ("data", ""),
    ("security", ""),
];

/// Kinds for the categories that have no fixed kind.
const FREE_KINDS: &[&str] = &["fact", "lesson", "pitfall", "decision", "reference"];

const STAMP: &str = "<!-- gen_corpus";

/// Tools, products and formats: kept in English in both languages.
const TECH: &[&str] = &[
    "PostgreSQL",
    "MySQL",
    "SQLite",
    "Redis",
    "Kafka",
    "RabbitMQ",
    "nginx",
    "Envoy",
    "k8s",
    "Helm",
    "Terraform",
    "Ansible",
    "Docker",
    "pnpm",
    "npm",
    "yarn",
    "Node.js",
    "Deno",
    "TypeScript",
    "React",
    "Vue",
    "Next.js",
    "Vite",
    "webpack",
    "Rust",
    "Go",
    "Python",
    "Django",
    "FastAPI",
    "gRPC",
    "GraphQL",
    "OpenAPI",
    "Prometheus",
    "Grafana",
    "Loki",
    "Sentry",
    "OpenTelemetry",
    "Jaeger",
    "Vault",
    "S3",
    "CloudFront",
    "Elasticsearch",
    "ClickHouse",
    "BigQuery",
    "Airflow",
    "dbt",
    "Playwright",
    "Jest",
    "Vitest",
    "GitHub Actions",
    "ArgoCD",
    "Istio",
    "systemd",
    "cron",
    "Celery",
    "pgbouncer",
    "Drizzle",
    "Prisma",
    "Tailwind",
    "Storybook",
];

/// English topics (nouns); the first word of each also feeds slugs and tags.
const TOPICS_EN: &[&str] = &[
    "deploy",
    "migration",
    "cache",
    "timeout",
    "retry policy",
    "rollback",
    "rollout",
    "connection pool",
    "index",
    "schema",
    "job queue",
    "worker",
    "cron job",
    "feature flag",
    "rate limit",
    "session store",
    "access token",
    "TLS certificate",
    "secret",
    "backup",
    "read replica",
    "failover",
    "log level",
    "alert",
    "dashboard",
    "trace sampling",
    "build",
    "lockfile",
    "bundle size",
    "release",
    "hotfix",
    "health check",
    "load balancer",
    "DNS record",
    "webhook",
    "pagination",
    "checkout flow",
    "invoice export",
    "search index",
    "batch job",
    "CI pipeline",
    "test fixture",
    "snapshot test",
    "staging environment",
    "canary",
    "quota",
    "memory limit",
    "disk usage",
    "error budget",
    "on-call rotation",
];

/// Chinese topics, parallel in spirit to `TOPICS_EN`.
const TOPICS_ZH: &[&str] = &[
    "部署",
    "数据库",
    "迁移",
    "缓存",
    "超时",
    "监控",
    "日志",
    "回滚",
    "重试",
    "连接池",
    "索引",
    "队列",
    "告警",
    "发布",
    "灰度",
    "配置",
    "密钥",
    "证书",
    "备份",
    "主从切换",
    "限流",
    "熔断",
    "压测",
    "构建",
    "依赖",
    "锁文件",
    "定时任务",
    "消息队列",
    "接口",
    "鉴权",
    "权限",
    "会话",
    "订单",
    "支付",
    "搜索",
    "分页",
    "时区",
    "编码",
    "内存",
    "磁盘",
    "网络",
    "域名",
    "负载均衡",
    "健康检查",
    "单元测试",
    "快照",
    "预发环境",
    "代码评审",
    "文档",
    "值班",
];

const PROBLEMS_EN: &[&str] = &[
    "silently drops messages",
    "times out under load",
    "returns stale data",
    "leaks connections",
    "fails only on a cold start",
    "double-charges the customer",
    "breaks the build on Windows",
    "loses the trailing newline",
    "spikes the p99 latency",
    "runs out of file descriptors",
    "deadlocks under concurrent writes",
    "ignores the configured timeout",
    "retries forever",
    "logs the secret in plain text",
    "skips the pending migration",
    "corrupts the lockfile",
    "floods the alert channel",
    "mixes up time zones",
    "caches the error response",
    "serves the old bundle",
    "hangs on shutdown",
    "exhausts the connection pool",
    "drops the last page of results",
    "reports the wrong region",
];

const FIXES_EN: &[&str] = &[
    "pin the version in the lockfile",
    "set an explicit timeout",
    "add an idempotency key",
    "drain the queue before the rollout",
    "run the migration as a separate job",
    "invalidate the cache on every write",
    "send reports to the read replica",
    "raise the pool size to 20 and add a queue timeout",
    "rotate the secret through Vault",
    "gate the change behind a feature flag",
    "roll out to the canary first",
    "add a health check that touches the database",
    "store timestamps as timestamptz",
    "retry with exponential backoff and a cap",
    "fail the build on any warning",
    "move the job to the nightly window",
    "split the batch into chunks of 500",
    "turn on request tracing for that route",
    "keep the old column until the backfill is done",
    "use a dedicated service account",
];

const CONTEXTS_EN: &[&str] = &[
    "in production",
    "on staging",
    "in CI",
    "on the ARM runners",
    "after the Friday release",
    "during the nightly batch",
    "on a cold cache",
    "behind the VPN",
    "at peak traffic",
    "during a k8s rollout",
    "on developer laptops",
    "in the EU region",
];

const REASONS_EN: &[&str] = &[
    "it is what the rest of the team already knows",
    "the managed offering removes a pager rotation",
    "the old setup cost us two incidents last quarter",
    "it keeps the diff reviewable",
    "the latency budget leaves no room for a second hop",
    "the license of the alternative changed",
    "it works offline on a laptop",
    "the vendor support answer took three weeks",
    "the benchmark showed a 4x difference",
    "security review asked for it",
];

const PROBLEMS_ZH: &[&str] = &[
    "偶尔超时",
    "数据不一致",
    "连接泄漏",
    "内存暴涨",
    "日志刷屏",
    "构建失败",
    "返回旧数据",
    "重复扣款",
    "时区错乱",
    "丢消息",
    "出现死锁",
    "启动很慢",
    "引发告警风暴",
    "证书过期",
    "把磁盘写满",
    "回滚失败",
    "重试停不下来",
    "把密钥打进日志",
    "漏跑迁移",
    "锁文件冲突",
];

const FIXES_ZH: &[&str] = &[
    "加上显式超时",
    "先灰度再全量",
    "把迁移单独跑",
    "写入时清缓存",
    "用只读副本跑报表",
    "锁定依赖版本",
    "加幂等键",
    "先排空队列再发布",
    "把密钥放进 Vault",
    "重启前先摘流量",
    "加健康检查",
    "按 500 条分批处理",
    "开启链路追踪",
    "改成指数退避重试",
    "把任务挪到夜间窗口",
    "旧字段保留到回填完成",
    "统一用 UTC 存时间",
    "给服务单独建账号",
];

const CONTEXTS_ZH: &[&str] = &[
    "生产环境",
    "预发环境",
    "CI 里",
    "本地开发时",
    "高峰期",
    "夜间批处理时",
    "冷启动时",
    "k8s rollout 期间",
    "周五发布之后",
    "跨机房切换时",
];

const CAUSES_ZH: &[&str] = &[
    "默认配置没有超时",
    "两个服务用了不同的时区",
    "缓存没有随写入失效",
    "连接池太小",
    "依赖版本没锁住",
    "重试没有上限",
    "健康检查只看进程不看数据库",
    "迁移和发布在同一个 Job 里",
    "日志级别开成了 debug",
    "证书续期脚本没跑",
    "批量任务一次读了全表",
];

/// Code-ish snippets that appear in inline code spans.
const SNIPPETS: &[&str] = &[
    "kubectl rollout status deploy/api",
    "pnpm install --frozen-lockfile",
    "SET statement_timeout = '5s'",
    "scripts/deploy.sh --env staging",
    "redis-cli --latency",
    "VACUUM ANALYZE orders",
    "terraform plan -out plan.bin",
    "helm rollback api 0",
    "docker compose up -d db",
    "pg_dump --format=custom",
    "curl -sf localhost:8080/healthz",
    "git bisect run make test",
    "EXPLAIN (ANALYZE, BUFFERS)",
    "max_connections = 200",
    "NODE_OPTIONS=--max-old-space-size=4096",
];

/// splitmix64: tiny, fast and good enough for synthetic text.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Self {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xD134_2543_DE82_EF95));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant here.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    /// True with probability `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.below(list.len() as u64) as usize]
    }

    /// Two different entries of `list`.
    fn pick2<'a>(&mut self, list: &[&'a str]) -> (&'a str, &'a str) {
        let a = self.below(list.len() as u64) as usize;
        let b = (a + 1 + self.below(list.len() as u64 - 1) as usize) % list.len();
        (list[a], list[b])
    }
}

struct Args {
    count: usize,
    seed: u64,
    force: bool,
    out: PathBuf,
}

const USAGE: &str = "usage: gen_corpus [--count N] [--seed S] [--force] OUT_DIR";

fn parse_args() -> Result<Args, String> {
    let mut count = 10_000usize;
    let mut seed = 42u64;
    let mut force = false;
    let mut out = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--count" | "-n" => {
                let v = it.next().ok_or("--count needs a value")?;
                count = v.parse().map_err(|_| format!("--count: not a number: {v}"))?;
            }
            "--seed" => {
                let v = it.next().ok_or("--seed needs a value")?;
                seed = v.parse().map_err(|_| format!("--seed: not a number: {v}"))?;
            }
            "--force" => force = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            s if s.starts_with('-') && s != "-" => return Err(format!("unknown option {s}")),
            _ if out.is_some() => return Err(format!("unexpected argument {arg}")),
            _ => out = Some(PathBuf::from(arg)),
        }
    }
    let out = out.ok_or("missing OUT_DIR")?;
    Ok(Args { count, seed, force, out })
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `[a-z0-9-]` words of `s`, for slugs and tags.
fn slug_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// A YAML scalar: plain when that is unambiguous, else double-quoted.
fn yaml_scalar(s: &str) -> String {
    let first = s.chars().next().unwrap_or(' ');
    let risky = s.is_empty()
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.ends_with(' ')
        || s.parse::<f64>().is_ok()
        || matches!(s, "true" | "false" | "null" | "yes" | "no" | "~");
    if !risky {
        return s.to_string();
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            _ => q.push(c),
        }
    }
    q.push('"');
    q
}

fn sentence_en(r: &mut Rng) -> String {
    let (t1, t2) = r.pick2(TECH);
    let (p1, p2) = r.pick2(TOPICS_EN);
    match r.below(12) {
        0 => format!("The {p1} on {t1} {} {}.", r.pick(PROBLEMS_EN), r.pick(CONTEXTS_EN)),
        1 => format!("Fix: {}; we verified it {}.", r.pick(FIXES_EN), r.pick(CONTEXTS_EN)),
        2 => format!("Always {} before any {p1} that touches {t1}.", r.pick(FIXES_EN)),
        3 => format!(
            "The {t1} {p1} defaults to {} seconds, which is too short for the {p2}.",
            r.range(2, 60)
        ),
        4 => format!("We use {t1} instead of {t2} for the {p1}, because {}.", r.pick(REASONS_EN)),
        5 => format!(
            "Root cause: the {p1} {} whenever the {p2} {}.",
            r.pick(PROBLEMS_EN),
            r.pick(PROBLEMS_EN)
        ),
        6 => format!("To check it, run `{}` and watch the {t1} dashboard.", r.pick(SNIPPETS)),
        7 => format!(
            "This cost us {} minutes of downtime {}, so do not skip the {p1} review.",
            r.range(5, 240),
            r.pick(CONTEXTS_EN)
        ),
        8 => {
            format!("Owner of the {p1} is the platform team; ask in #{} first.", slug_words(p2)[0])
        }
        9 => format!(
            "If the {p1} {}, {} and page the on-call engineer.",
            r.pick(PROBLEMS_EN),
            r.pick(FIXES_EN)
        ),
        10 => {
            format!("{t1} {} is the version we run; {t2} stays on the old major.", r.range(2, 17))
        }
        _ => format!("Remember that the {p1} and the {p2} share the same {t1} instance."),
    }
}

fn sentence_zh(r: &mut Rng) -> String {
    let (t1, t2) = r.pick2(TECH);
    let (z1, z2) = r.pick2(TOPICS_ZH);
    match r.below(13) {
        0 => format!("{z1}脚本用 {t1} 而不是 {t2}。"),
        1 => format!(
            "{t1} 的{z1}在{}{}，原因是{}。",
            r.pick(CONTEXTS_ZH),
            r.pick(PROBLEMS_ZH),
            r.pick(CAUSES_ZH)
        ),
        2 => format!("以后{z1}之前先{}，不要跳过这一步。", r.pick(FIXES_ZH)),
        3 => format!(
            "{t1} 的 {} 默认是 {} 秒，{}要改成 {} 秒。",
            r.pick(TOPICS_EN),
            r.range(2, 30),
            r.pick(CONTEXTS_ZH),
            r.range(30, 120)
        ),
        4 => format!("排查{z1}问题时先看 {t1} 的日志和 Grafana 面板，再看{z2}。"),
        5 => format!(
            "这条规则是在一次{z1}事故之后定下的：{}，影响了 {} 分钟。",
            r.pick(PROBLEMS_ZH),
            r.range(5, 180)
        ),
        6 => format!("验证方法：执行 `{}`，确认{z1}正常。", r.pick(SNIPPETS)),
        7 => format!("{z1}和{z2}共用同一个 {t1} 实例，改配置前要通知两边。"),
        8 => format!("我们选 {t1} 做{z1}，主要是因为团队熟悉，而且 {t2} 的运维成本太高。"),
        9 => format!(
            "{}{z1}{}的时候，{}。",
            r.pick(CONTEXTS_ZH),
            r.pick(PROBLEMS_ZH),
            r.pick(FIXES_ZH)
        ),
        10 => format!("负责人是平台组，{z1}相关的改动要在代码评审里 @ 他们。"),
        11 => format!("{t1} {} 升级后{z1}行为变了，记得先在预发环境跑一遍。", r.range(2, 17)),
        _ => format!("不要在{}手工改{z1}，所有变更都走 {t1} 流水线。", r.pick(CONTEXTS_ZH)),
    }
}

fn title_en(r: &mut Rng) -> String {
    let (t1, t2) = r.pick2(TECH);
    let p = r.pick(TOPICS_EN);
    match r.below(6) {
        0 => format!("{} on {t1}", capitalize(p)),
        1 => format!("Why we use {t1} for the {p}"),
        2 => format!("{t1} {p} {}", r.pick(PROBLEMS_EN)),
        3 => format!("Use {t1} instead of {t2} for the {p}"),
        4 => format!("{} checklist", capitalize(p)),
        _ => format!("{} {} {}", capitalize(p), r.pick(PROBLEMS_EN), r.pick(CONTEXTS_EN)),
    }
}

fn title_zh(r: &mut Rng) -> String {
    let (t1, t2) = r.pick2(TECH);
    let z = r.pick(TOPICS_ZH);
    match r.below(5) {
        0 => format!("{t1} {z}{}", r.pick(PROBLEMS_ZH)),
        1 => format!("{z}用 {t1} 而不是 {t2}"),
        2 => format!("{z}前先{}", r.pick(FIXES_ZH)),
        3 => format!("{}{z}注意事项", r.pick(CONTEXTS_ZH)),
        _ => format!("为什么{z}选 {t1}"),
    }
}

fn paragraph(r: &mut Rng, zh: bool) -> String {
    // One paragraph in five is a short bullet list, the rest prose.
    if r.chance(20) {
        let mut p = String::new();
        for i in 0..r.range(2, 5) {
            if i > 0 {
                p.push('\n');
            }
            p.push_str("- ");
            p.push_str(&if zh && !r.chance(15) { sentence_zh(r) } else { sentence_en(r) });
        }
        return p;
    }
    let n = r.range(2, 5);
    let mut p = String::new();
    let mut prev_en = false;
    for i in 0..n {
        // Chinese files switch to an English sentence now and then.
        let en = !zh || r.chance(10);
        let s = if en { sentence_en(r) } else { sentence_zh(r) };
        if i > 0 && (en || prev_en) {
            p.push(' ');
        }
        p.push_str(&s);
        prev_en = en;
    }
    p
}

fn load_when_phrase(r: &mut Rng, zh: bool) -> String {
    match (zh, r.below(3)) {
        (true, 0) => format!("{}{}", r.pick(TOPICS_ZH), r.pick(PROBLEMS_ZH)),
        (true, 1) => format!("{} {}", r.pick(TECH), r.pick(TOPICS_ZH)),
        (true, _) => r.pick(TOPICS_ZH).to_string(),
        (false, 0) => format!("{} {}", r.pick(TECH).to_lowercase(), r.pick(TOPICS_EN)),
        (false, 1) => format!("{} {}", r.pick(TOPICS_EN), r.pick(PROBLEMS_EN)),
        (false, _) => r.pick(TOPICS_EN).to_string(),
    }
}

/// One memory: its relative path and its text.
fn memory(seed: u64, index: usize) -> (String, String, String) {
    let r = &mut Rng::new(seed, index as u64);
    let (category, fixed_kind) = CATEGORIES[r.below(CATEGORIES.len() as u64) as usize];
    let kind = if fixed_kind.is_empty() { r.pick(FREE_KINDS) } else { fixed_kind };
    let zh = r.chance(50);

    // Slug from an English topic and a tool, so Chinese files get one too.
    let mut words = slug_words(r.pick(TOPICS_EN));
    words.extend(slug_words(r.pick(TECH)));
    words.truncate(4);
    let slug = format!("{}-{index}", words.join("-"));

    let title = if zh { title_zh(r) } else { title_en(r) };
    let summary = if zh { sentence_zh(r) } else { sentence_en(r) };
    let min = 1_780_000_000_000u64;
    let span = 15_000_000_000u64;
    let created = min + r.below(span);
    let updated = if r.chance(40) { created } else { created + r.below(min + span - created) };

    let mut t = String::with_capacity(1600);
    t.push_str("---\n");
    let _ = writeln!(t, "id: {category}/{slug}.md");
    let _ = writeln!(t, "kind: {kind}");
    let _ = writeln!(t, "summary: {}", yaml_scalar(&summary));
    if r.chance(10) {
        let h = if zh { r.pick(FIXES_ZH) } else { r.pick(FIXES_EN) };
        let _ = writeln!(t, "highlight: {}", yaml_scalar(h));
    }
    let _ = writeln!(t, "created: {created}");
    let _ = writeln!(t, "updated: {updated}");
    if r.chance(30) {
        t.push_str("load_when:\n");
        for _ in 0..r.range(1, 2) {
            let phrase = load_when_phrase(r, zh);
            let _ = writeln!(t, "  - {}", yaml_scalar(&phrase));
        }
    }
    if r.chance(2) {
        t.push_str("pinned: true\n");
    }
    if r.chance(20) {
        let mut tags: Vec<String> = Vec::new();
        for _ in 0..r.range(1, 3) {
            let tag = if r.chance(50) {
                slug_words(r.pick(TECH)).join("-")
            } else {
                slug_words(r.pick(TOPICS_EN)).join("-")
            };
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        let _ = writeln!(t, "tags: [{}]", tags.join(", "));
    }
    t.push_str("---\n");
    let _ = writeln!(t, "# {title}");
    for _ in 0..r.range(2, 5) {
        t.push('\n');
        t.push_str(&paragraph(r, zh));
        t.push('\n');
    }
    // Half of the files point at an earlier memory (the path need not exist).
    if index > 0 && r.chance(50) {
        let other = r.below(index as u64);
        let (cat, _) = CATEGORIES[r.below(CATEGORIES.len() as u64) as usize];
        let link = slug_words(r.pick(TOPICS_EN)).join("-");
        let label = if zh { "相关记录：" } else { "See also: " };
        let _ = writeln!(t, "\n{label}`{cat}/{link}-{other}.md`");
    }
    (category.to_string(), slug, t)
}

fn root_md(args: &Args) -> String {
    let mut t = String::new();
    t.push_str("# Project memory: synthetic benchmark corpus\n\n");
    let _ = writeln!(t, "{STAMP} count={} seed={} -->\n", args.count, args.seed);
    t.push_str("## Goals\n");
    t.push_str("- A realistic, mixed Chinese and English memory tree for benchmarks.\n");
    t.push_str("- 部署、数据库、缓存、超时：内容由 gen_corpus 随机组合生成，不是真实规则。\n\n");
    t.push_str("## Categories\n<!-- auto:begin registry -->\n<!-- auto:end -->\n\n");
    t.push_str("## Routing\n<!-- auto:begin routing -->\n<!-- auto:end -->\n");
    t
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(args: &Args) -> Result<(usize, u64), (u8, String)> {
    let root = args.out.join(".memory");
    let io = |e: String| (1u8, e);
    if root.exists() {
        if !args.force {
            return Err((
                2,
                format!("{} already exists; pass --force to replace it", root.display()),
            ));
        }
        let stamped = fs::read_to_string(root.join("ROOT.md")).is_ok_and(|s| s.contains(STAMP));
        if !stamped {
            return Err((
                2,
                format!(
                    "{} was not written by gen_corpus (no stamp in ROOT.md); refusing to delete it",
                    root.display()
                ),
            ));
        }
        fs::remove_dir_all(&root).map_err(|e| (1, format!("{}: {e}", root.display())))?;
    }
    for (category, _) in CATEGORIES {
        let dir = root.join(category);
        fs::create_dir_all(&dir).map_err(|e| (1, format!("{}: {e}", dir.display())))?;
    }
    let root_text = root_md(args);
    write(&root.join("ROOT.md"), &root_text).map_err(io)?;
    let mut bytes = root_text.len() as u64;
    for i in 0..args.count {
        let (category, slug, text) = memory(args.seed, i);
        write(&root.join(category).join(format!("{slug}.md")), &text).map_err(io)?;
        bytes += text.len() as u64;
    }
    Ok((args.count, bytes))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gen_corpus: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok((files, bytes)) => {
            println!(
                "gen_corpus: wrote {files} memory files + ROOT.md, {bytes} bytes (avg {} B/file), seed {}, to {}",
                bytes / (files.max(1) as u64),
                args.seed,
                args.out.join(".memory").display()
            );
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            eprintln!("gen_corpus: {e}");
            ExitCode::from(code)
        }
    }
}
