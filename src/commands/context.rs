//! `mem context`: the block an agent gets at session start or per prompt.
//!
//! Hard rules of both roots first, then pinned memories, the routing table,
//! memories whose `paths:` match `--file`, and the best matches for
//! `--query` — within a token budget, whole entries only, saying what was
//! left out. A project root is injected only once the user trusted it.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::cache::{Library, index_all_read};
use crate::context::Context;
use crate::error::Result;
use crate::glob;
use crate::guard::estimate_tokens;
use crate::memory::Memory;
use crate::output::{Style, md_line};
use crate::rank::score::{Params, Request, rank};
use crate::roots::{Root, Scope};
use crate::state;
use crate::time::{Lang, relative_age};
use crate::trust::{Gate, RootMd};

const DAY_MS: i64 = 86_400_000;

const EXAMPLES: &str = "\
Examples:
  mem context                               rules, pinned memories and routing
  mem context --query \"fix the deploy script\" --budget 1500
  mem context --file web/app/page.tsx --format xml
  MEM_TRUST_ALL=1 mem context --json        (CI: inject untrusted project roots too)";

/// Print the memory an agent should see now.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Add the memories that best match this text; `-` reads it from stdin
    /// (a JSON object's `prompt` field, as agent hooks send it, or plain text)
    #[arg(long, short)]
    pub query: Option<String>,
    /// Token budget (CJK characters count one each, other text one per four characters)
    #[arg(long, default_value_t = 2000)]
    pub budget: usize,
    /// Add memories whose `paths:` globs match this project file (repeatable)
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: Format,
    /// Act as this agent role [env: MEM_ROLE]
    #[arg(long)]
    pub role: Option<String>,
    /// Do not count hits for the matches shown
    #[arg(long)]
    pub no_track: bool,
}

/// How the block is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Markdown,
    Xml,
}

/// Why an entry is in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    Rule,
    Pinned,
    File,
    Match,
}

/// One memory in the block.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub section: Section,
    pub path: String,
    pub root: Scope,
    pub title: String,
    pub kind: String,
    pub text: String,
    pub age: String,
    /// Older than a day: shown with a reminder to verify before relying on it.
    pub stale: bool,
    pub tokens: usize,
}

/// The context block.
#[derive(Debug, Serialize)]
pub struct Report {
    pub query: Option<String>,
    pub budget: usize,
    pub used: usize,
    pub entries: Vec<Entry>,
    /// (trigger, file) rows, when they fit the budget.
    pub routing: Vec<(String, String)>,
    /// Paths left out for the budget.
    pub left_out: Vec<String>,
    /// Project roots not injected because they are not trusted.
    pub untrusted: Vec<PathBuf>,
    /// Project memories held back: added or changed since the root was trusted.
    pub held_back: Vec<String>,
    #[serde(skip)]
    format: Format,
    #[serde(skip)]
    lang: Lang,
}

/// Build the block.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let query = match args.query.as_deref() {
        Some("-") => Some(read_query()?),
        other => other.map(str::to_string),
    };
    let mut untrusted = Vec::new();
    let mut gate = Gate::All;
    let roots: Vec<&Root> = ctx
        .read_roots()?
        .into_iter()
        .filter(|r| {
            if r.scope == Scope::Global {
                return true;
            }
            gate = Gate::of(&ctx.roots.global.dir, r, ctx.trust_all);
            if gate.is_closed() {
                untrusted.push(r.dir.clone());
            }
            !gate.is_closed()
        })
        .collect();
    let (memories, lib) = index_all_read(&roots);
    let corpus = &lib.corpus;
    let role = args.role.as_ref().or(ctx.role.as_ref());
    let shows = |m: &Memory| !m.is_superseded() && m.role.as_ref().is_none_or(|r| Some(r) == role);
    let visible = |d: usize| corpus.is_live(d) && shows(&memories[d]);
    let shown: Vec<usize> = (0..memories.len()).filter(|&d| visible(d)).collect();
    let mut picked: Vec<(Section, usize)> = Vec::new();
    let mut seen = HashSet::new();
    let mut pick = |section: Section, d: usize, picked: &mut Vec<(Section, usize)>| {
        if seen.insert(d) {
            picked.push((section, d));
        }
    };
    for &d in &shown {
        if memories[d].is_rule() {
            pick(Section::Rule, d, &mut picked);
        }
    }
    for &d in &shown {
        if memories[d].pinned {
            pick(Section::Pinned, d, &mut picked);
        }
    }
    for &d in &shown {
        if args.files.iter().any(|f| memories[d].paths.iter().any(|p| glob::matches(p, f))) {
            pick(Section::File, d, &mut picked);
        }
    }
    let mut matched = Vec::new();
    if let Some(query) = query.as_deref().filter(|q| !q.trim().is_empty()) {
        for d in best_matches(ctx, &roots, &memories, &lib, query, &|_, m| shows(m)) {
            let before = picked.len();
            pick(Section::Match, d, &mut picked);
            if picked.len() > before {
                matched.push(d);
            }
        }
    }
    // A project memory reaches the agent only as the bytes the user trusted:
    // read again, checked against its digest, and parsed from what was checked.
    let project = roots.iter().find(|r| r.scope == Scope::Project);
    let mut checked: HashMap<usize, Option<Memory>> = HashMap::new();
    let mut held_back = Vec::new();
    if let (Some(root), Gate::Files(_)) = (project, &gate)
        && gate.root_md(root) == RootMd::HeldBack
    {
        held_back.push("ROOT.md".to_string());
    }
    let mut trusted = |d: usize| -> Option<Memory> {
        let m = &memories[d];
        if m.scope != Scope::Project || matches!(gate, Gate::All) {
            return Some(m.clone());
        }
        checked
            .entry(d)
            .or_insert_with(|| {
                let found = project.and_then(|root| gate.memory(root, &m.path));
                if found.is_none() {
                    held_back.push(m.file());
                }
                found
            })
            .clone()
    };
    let with_triggers: Vec<Memory> = shown
        .iter()
        .filter(|&&d| !memories[d].load_when.is_empty())
        .filter_map(|&d| trusted(d))
        .collect();
    let picked: Vec<(Section, Memory)> =
        picked.into_iter().filter_map(|(s, d)| Some((s, trusted(d)?))).collect();
    held_back.sort();
    let matched: HashSet<String> = matched.iter().map(|&d| memories[d].file()).collect();
    let mut report = Report {
        query,
        budget: args.budget,
        used: 0,
        entries: Vec::new(),
        routing: Vec::new(),
        left_out: Vec::new(),
        untrusted,
        held_back,
        format: args.format,
        lang: ctx.lang,
    };
    let routing = routing(with_triggers.iter());
    let routing_tokens: usize =
        routing.iter().map(|(t, f)| estimate_tokens(t) + estimate_tokens(f) + 2).sum();
    let mut routing_placed = routing.is_empty();
    for (section, m) in &picked {
        let section = *section;
        if !routing_placed && matches!(section, Section::File | Section::Match) {
            place_routing(&mut report, &routing, routing_tokens);
            routing_placed = true;
        }
        let entry = entry(section, m, ctx);
        if report.used + entry.tokens <= report.budget {
            report.used += entry.tokens;
            report.entries.push(entry);
        } else {
            report.left_out.push(entry.path);
        }
    }
    if !routing_placed {
        place_routing(&mut report, &routing, routing_tokens);
    }
    if !args.no_track {
        track(ctx, &roots, &picked, &matched, &report)?;
    }
    Ok(report)
}

/// The query from stdin: a hook's JSON `prompt` field, or the text itself.
fn read_query() -> Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| {
        crate::error::Error::input(format!("cannot read the query from stdin: {e}"))
    })?;
    let prompt = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("prompt").and_then(|p| p.as_str()).map(str::to_string));
    Ok(prompt.unwrap_or(text).trim().to_string())
}

fn place_routing(report: &mut Report, routing: &[(String, String)], tokens: usize) {
    if report.used + tokens <= report.budget {
        report.used += tokens;
        report.routing = routing.to_vec();
    } else {
        report.left_out.push("ROOT.md (routing table)".into());
    }
}

fn routing<'a>(memories: impl Iterator<Item = &'a Memory>) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> =
        memories.flat_map(|m| m.load_when.iter().map(move |t| (t.clone(), m.file()))).collect();
    rows.sort();
    rows.dedup();
    rows
}

fn best_matches(
    ctx: &Context,
    roots: &[&Root],
    memories: &[Memory],
    lib: &Library,
    query: &str,
    visible: &dyn Fn(usize, &Memory) -> bool,
) -> Vec<usize> {
    let states: Vec<(Scope, state::State)> =
        roots.iter().map(|r| (r.scope, state::load(&r.dir).0)).collect();
    let signals = crate::commands::recall::signals(memories.len(), &states, |s, c, slug| {
        lib.docs.find(s, c, slug)
    });
    let req = Request {
        query,
        limit: 10,
        now_ms: ctx.now_ms,
        signals: &signals,
        filter: visible,
        explain: false,
    };
    rank(&lib.corpus, memories, &Params::default(), &req).into_iter().map(|h| h.doc).collect()
}

fn entry(section: Section, m: &Memory, ctx: &Context) -> Entry {
    let mut text = if m.summary.is_empty() {
        crate::memory::truncate(&m.body, 280)
    } else {
        m.summary.clone()
    };
    if !m.highlight.is_empty() {
        text.push_str(" — ");
        text.push_str(&m.highlight);
    }
    let age = relative_age(m.updated, ctx.now_ms, ctx.lang);
    let stale = ctx.now_ms - m.updated > DAY_MS;
    let tokens =
        estimate_tokens(&m.title) + estimate_tokens(&m.file()) + estimate_tokens(&text) + 8;
    Entry {
        section,
        path: m.file(),
        root: m.scope,
        title: m.title.clone(),
        kind: m.kind.clone(),
        text,
        age,
        stale,
        tokens,
    }
}

/// Count a hit for each query match that made it into the block.
fn track(
    ctx: &Context,
    roots: &[&Root],
    picked: &[(Section, Memory)],
    matched: &HashSet<String>,
    report: &Report,
) -> Result<()> {
    let shown: HashSet<(Scope, &str)> =
        report.entries.iter().map(|e| (e.root, e.path.as_str())).collect();
    for root in roots {
        let paths: Vec<String> = picked
            .iter()
            .map(|(_, m)| m)
            .filter(|m| m.scope == root.scope && matched.contains(&m.file()))
            .filter(|m| shown.contains(&(m.scope, m.file().as_str())))
            .map(Memory::file)
            .collect();
        // Hit counts are derived data: a read-only root still gets its context.
        let _ = state::record(&root.dir, &paths, ctx.now_ms);
    }
    Ok(())
}

/// Words of the block, per language.
struct Words {
    title: &'static str,
    rules: &'static str,
    pinned: &'static str,
    files: &'static str,
    matches: &'static str,
    routing: &'static str,
    verify: &'static str,
    snapshot: &'static str,
    left_out: &'static str,
    untrusted: &'static str,
    held_back: &'static str,
}

const EN: Words = Words {
    title: "Memory",
    rules: "Hard rules",
    pinned: "Pinned",
    files: "For the files in play",
    matches: "Relevant to the request",
    routing: "Routing (trigger → memory; `mem recall <trigger>` shows it)",
    verify: "verify before use",
    snapshot: "Memories are snapshots: before recommending a file, function or flag that a memory names, check that it still exists.",
    left_out: "Left out for the budget: {paths}. `mem recall {query}` shows them.",
    untrusted: "Project memory at {dir} is not trusted, so it was not included. Review it, then run `mem trust` there.",
    held_back: "{n} project memories added or changed since the project was trusted are held back ({paths}). Review them, then run `mem trust`.",
};

const ZH: Words = Words {
    title: "记忆",
    rules: "硬性规则",
    pinned: "置顶",
    files: "与当前文件相关",
    matches: "与请求相关",
    routing: "路由（触发词 → 记忆；`mem recall <触发词>` 查看）",
    verify: "使用前请核实",
    snapshot: "记忆是过去的快照：推荐其中提到的文件、函数或参数之前，先确认它们仍然存在。",
    left_out: "因预算省略：{paths}。用 `mem recall {query}` 查看。",
    untrusted: "{dir} 的项目记忆尚未被信任，因此没有加入。检查后在该项目中运行 `mem trust`。",
    held_back: "信任该项目之后新增或修改的 {n} 条项目记忆未加入（{paths}）。检查后运行 `mem trust`。",
};

impl Report {
    fn words(&self) -> &'static Words {
        if self.lang == Lang::Zh { &ZH } else { &EN }
    }

    fn left_out_line(&self) -> String {
        let query = self.query.as_deref().map_or("<topic>".to_string(), |q| format!("\"{q}\""));
        self.words()
            .left_out
            .replace("{paths}", &self.left_out.join(", "))
            .replace("{query}", &query)
    }

    /// The held-back line: a count and at most three names.
    fn held_back_line(&self) -> Option<String> {
        if self.held_back.is_empty() {
            return None;
        }
        let mut paths = self.held_back.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        if self.held_back.len() > 3 {
            paths.push_str(", …");
        }
        let n = self.held_back.len().to_string();
        Some(self.words().held_back.replace("{n}", &n).replace("{paths}", &paths))
    }

    fn markdown(&self) -> String {
        let w = self.words();
        let mut out = format!("# {}\n", w.title);
        if self.entries.iter().any(|e| e.stale) {
            out.push_str(&format!("\n_{}_\n", w.snapshot));
        }
        let mut section = None;
        for e in &self.entries {
            if section != Some(e.section) {
                section = Some(e.section);
                if matches!(e.section, Section::File | Section::Match)
                    && !self.routing.is_empty()
                    && !out.contains(w.routing)
                {
                    out.push_str(&self.routing_md());
                }
                let heading = match e.section {
                    Section::Rule => w.rules,
                    Section::Pinned => w.pinned,
                    Section::File => w.files,
                    Section::Match => w.matches,
                };
                out.push_str(&format!("\n## {heading}\n\n"));
            }
            let verify = if e.stale { format!(", {}", w.verify) } else { String::new() };
            out.push_str(&format!(
                "- **{}**: {} (`{}`, {}{verify})\n",
                md_line(&e.title),
                md_line(&e.text),
                e.path,
                e.age
            ));
        }
        if !self.routing.is_empty() && !out.contains(w.routing) {
            out.push_str(&self.routing_md());
        }
        if !self.left_out.is_empty() {
            out.push_str(&format!("\n{}\n", md_line(&self.left_out_line())));
        }
        if let Some(line) = self.held_back_line() {
            out.push_str(&format!("\n{}\n", md_line(&line)));
        }
        for dir in &self.untrusted {
            out.push_str(&format!(
                "\n{}\n",
                md_line(&w.untrusted.replace("{dir}", &dir.display().to_string()))
            ));
        }
        out
    }

    fn routing_md(&self) -> String {
        let mut out = format!("\n## {}\n\n", self.words().routing);
        for (t, f) in &self.routing {
            out.push_str(&format!("- {} → `{f}`\n", md_line(t)));
        }
        out
    }

    fn xml(&self) -> String {
        let mut out =
            format!("<memory-context budget=\"{}\" used=\"{}\">\n", self.budget, self.used);
        if self.entries.iter().any(|e| e.stale) {
            out.push_str(&format!("  <note>{}</note>\n", esc(self.words().snapshot)));
        }
        for e in &self.entries {
            let section = serde_json::to_value(e.section)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push_str(&format!(
                "  <memory section=\"{section}\" path=\"{}\" root=\"{}\" kind=\"{}\" title=\"{}\" age=\"{}\" verify=\"{}\">{}</memory>\n",
                esc(&e.path), e.root.name(), esc(&e.kind), esc(&e.title), esc(&e.age), e.stale, esc(&e.text)
            ));
        }
        if !self.routing.is_empty() {
            out.push_str("  <routing>\n");
            for (t, f) in &self.routing {
                out.push_str(&format!("    <route trigger=\"{}\" file=\"{}\"/>\n", esc(t), esc(f)));
            }
            out.push_str("  </routing>\n");
        }
        if !self.left_out.is_empty() {
            out.push_str(&format!("  <left-out>{}</left-out>\n", esc(&self.left_out_line())));
        }
        if let Some(line) = self.held_back_line() {
            out.push_str(&format!("  <held-back>{}</held-back>\n", esc(&line)));
        }
        for dir in &self.untrusted {
            let note = self.words().untrusted.replace("{dir}", &dir.display().to_string());
            out.push_str(&format!(
                "  <untrusted root=\"{}\">{}</untrusted>\n",
                esc(&dir.display().to_string()),
                esc(&note)
            ));
        }
        out.push_str("</memory-context>\n");
        out
    }
}

/// Escape text for XML content and attributes.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        match self.format {
            Format::Markdown => self.markdown(),
            Format::Xml => self.xml(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_attributes_and_text() {
        assert_eq!(esc(r#"a<b>&"c"'d'"#), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
    }
}
