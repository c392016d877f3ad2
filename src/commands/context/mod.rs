//! `mem context`: the block an agent gets at session start, after its
//! context is compacted, and per prompt.
//!
//! At session start, resident first, from both roots (project first, the
//! project winning on the same path): each ROOT.md's hand-written plan, every
//! hard rule with its whole body, pinned memories, the routing table; then
//! memories whose `paths:` match `--file` and the best matches for
//! `--query`. Per prompt (`--query -` with a hook's session id), only
//! matches the session has not been shown. The budget caps every line
//! printed; a project root's text reaches the agent only as far as the user
//! trusted it (see [`crate::trust`]).

mod input;
mod plan;
mod render;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::text::estimate_tokens;
use crate::base::time::{Lang, relative_age};
use crate::context::Context;
use crate::glob;
use crate::index::{Library, index_all_read};
use crate::memory::Memory;
use crate::output::Style;
use crate::rank::score::{Params, Request, rank};
use crate::roots::{Root, Scope};
use crate::session;
use crate::state::{self, Hits};
use crate::trust::{Gate, RootMd};

use crate::base::time::DAY_MS;
/// The budget at session start.
pub const SESSION_BUDGET: usize = 2000;
/// The budget per prompt (`--query -`): matches only, a few of them.
pub const PROMPT_BUDGET: usize = 400;
/// Query matches considered.
const MATCHES: usize = 10;

const EXAMPLES: &str = "\
Examples:
  mem context                               plan, rules, pinned memories and routing
  mem context --query \"fix the deploy script\" --budget 1500
  mem context --file web/app/page.tsx --format xml
  echo '{\"session_id\":\"s1\",\"source\":\"startup\"}' | mem context --hook
  echo '{\"session_id\":\"s1\",\"prompt\":\"why is checkout slow\"}' | mem context --query -
  MEM_TRUST_ALL=1 mem context --json        (CI: inject untrusted project roots too)

With a session id (from --hook or --query - JSON, or --session), a prompt
gets only memories that session was not shown yet; after `compact` or `clear`
it starts over. Nothing to say prints nothing.";

/// Print the memory an agent should see now.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Add the memories that best match this text; `-` reads the prompt from
    /// stdin (a hook's JSON with `prompt`, `session_id`, `cwd`, or plain text):
    /// with a session id, only matches that session was not shown yet
    #[arg(long, short)]
    pub query: Option<String>,
    /// Token cap on everything printed (CJK characters count one each, other
    /// text one per four characters) [default: 2000; 400 with --query -]
    #[arg(long)]
    pub budget: Option<usize>,
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
    /// Pinned memories with their whole body (rules always have theirs)
    #[arg(long)]
    pub full: bool,
    /// Read a session-start hook's JSON from stdin (`session_id`, `source`:
    /// startup, resume, clear, compact; `cwd`)
    #[arg(long, conflicts_with = "query")]
    pub hook: bool,
    /// The agent session this block is for (what it was shown is remembered)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
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
    /// The whole body: every rule's, and pinned ones' with `--full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub age: String,
    /// Epoch ms of the version shown.
    pub updated: i64,
    /// Older than a day: shown with a reminder to verify before relying on it.
    pub stale: bool,
}

/// A root's ROOT.md plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub root: Scope,
    pub text: String,
}

/// What did not fit the budget.
#[derive(Debug, Default, Clone, Serialize)]
pub struct LeftOut {
    /// Memories left out.
    pub count: usize,
    /// The first few of them, in rank order.
    pub names: Vec<String>,
    /// The routing table was left out.
    pub routing: bool,
    /// Its triggers.
    pub triggers: usize,
}

/// The context block.
#[derive(Debug, Serialize)]
pub struct Report {
    pub query: Option<String>,
    pub session: Option<String>,
    pub budget: usize,
    /// Tokens of the block as printed.
    pub used: usize,
    pub plans: Vec<Plan>,
    pub entries: Vec<Entry>,
    /// (trigger, file) rows, when they fit the budget.
    pub routing: Vec<(String, String)>,
    pub left_out: LeftOut,
    /// Tokens the hard rules need, when they alone exceed the budget.
    pub rules_over_budget: Option<usize>,
    /// Project roots not injected because they are not trusted.
    pub untrusted: Vec<PathBuf>,
    /// Project files held back: added or changed since the root was trusted.
    pub held_back: Vec<String>,
    #[serde(skip)]
    format: Format,
    #[serde(skip)]
    lang: Lang,
    #[serde(skip)]
    json: bool,
    /// Per prompt: matches only, no title.
    #[serde(skip)]
    prompt_mode: bool,
    #[serde(skip)]
    pending: Option<Pending>,
}

/// One thing that may go into the block, in rank order.
enum Candidate {
    Plan(Plan),
    Memory(Section, usize),
    Routing,
}

/// Build the block.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let stdin_query = args.query.as_deref() == Some("-");
    let hook = if stdin_query || args.hook { Some(input::read(stdin_query)?) } else { None };
    let hook = hook.unwrap_or_default();
    let mut ctx = ctx.clone();
    if let Some(cwd) = &hook.cwd
        && !ctx.roots.project_named
    {
        ctx.roots.project =
            crate::roots::find_project(cwd).map(|dir| Root { scope: Scope::Project, dir });
    }
    let ctx = &ctx;
    let query = if stdin_query { hook.prompt.clone() } else { args.query.clone() };
    // The block repeats the query it answers, at most this much of it.
    let echo = query.as_ref().map(|q| crate::memory::truncate(q, 200));
    let session_id = args.session.clone().or(hook.session_id.clone());
    // Per prompt: matches only (the session start gave the rest).
    let prompt_mode = stdin_query;
    let budget = args.budget.unwrap_or(if stdin_query { PROMPT_BUDGET } else { SESSION_BUDGET });

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
    let role = args.role.as_ref().or(ctx.role.as_ref());
    let shows = |m: &Memory| !m.is_superseded() && m.role.as_ref().is_none_or(|r| Some(r) == role);
    let project = roots.iter().find(|r| r.scope == Scope::Project).copied();
    let mut visible: Vec<usize> =
        (0..memories.len()).filter(|&d| lib.corpus.is_live(d) && shows(&memories[d])).collect();
    // A project file the user did not trust hides no global memory.
    let mut unshadowed = Vec::new();
    if let (Some(project), Gate::Files(_)) = (project, &gate) {
        for d in (0..memories.len()).filter(|&d| !lib.corpus.is_live(d)) {
            let m = &memories[d];
            let Some(p) = lib.docs.find(Scope::Project, &m.path.category, &m.path.slug) else {
                continue;
            };
            let global_file = m.path.under(&ctx.roots.global.dir);
            if m.scope == Scope::Global
                && shows(m)
                && lib.corpus.is_live(p)
                && global_file.is_file()
                && gate.memory(project, &memories[p].path).is_none()
            {
                unshadowed.push((p, d));
            }
        }
    }
    for &(p, d) in &unshadowed {
        visible.retain(|&v| v != p);
        visible.push(d);
    }
    let states: Vec<(Scope, state::State)> =
        roots.iter().map(|r| (r.scope, state::load(&r.dir).0)).collect();
    let hits = |m: &Memory| {
        states
            .iter()
            .find(|(s, _)| *s == m.scope)
            .and_then(|(_, st)| st.hits.get(&m.file()))
            .copied()
    };

    // What the session was shown already (nothing, when it starts over).
    // A session start (not a resume) starts over: the agent holds nothing yet.
    let fresh = !prompt_mode && hook.source != Some(session::Source::Resume);
    // Locked until what this run shows is recorded (`after_print`).
    let shown = session_id.as_deref().map(|id| session::Shown::open(&roots, id, fresh));
    let new_to_session =
        |m: &Memory| !shown.as_ref().is_some_and(|s| s.contains(m.scope, &m.file(), m.updated));

    let mut candidates = Vec::new();
    let mut held_back = Vec::new();
    if !prompt_mode {
        for root in &roots {
            let prose = match (root.scope, &gate) {
                (Scope::Project, _) => gate.root_md(root),
                (Scope::Global, _) => Gate::All.root_md(root),
            };
            match prose {
                RootMd::Trusted(text) => {
                    if let Some(text) = plan::plan(&text) {
                        candidates.push(Candidate::Plan(Plan { root: root.scope, text }));
                    }
                }
                RootMd::HeldBack => held_back.push("ROOT.md".to_string()),
                RootMd::Missing => {}
            }
        }
        // Rules, then pinned; within each, by last use, then by last update.
        let rank_key = |&d: &usize| {
            let m = &memories[d];
            let last = hits(m).map_or(0, |h: Hits| h.last);
            (std::cmp::Reverse(last.max(m.updated)), std::cmp::Reverse(m.updated), m.file())
        };
        let mut rules: Vec<usize> =
            visible.iter().copied().filter(|&d| memories[d].is_rule()).collect();
        rules.sort_by_cached_key(rank_key);
        let mut pinned: Vec<usize> = visible
            .iter()
            .copied()
            .filter(|&d| memories[d].pinned && !memories[d].is_rule())
            .collect();
        pinned.sort_by_cached_key(rank_key);
        candidates.extend(rules.into_iter().map(|d| Candidate::Memory(Section::Rule, d)));
        candidates.extend(pinned.into_iter().map(|d| Candidate::Memory(Section::Pinned, d)));
        candidates.push(Candidate::Routing);
        // A memory resident when trusted that is not resident now, through a
        // change from outside mem (`superseded_by`, `role`, a kind), is named.
        if let Some(project) = project {
            let now: HashSet<String> = candidates
                .iter()
                .filter_map(|c| match c {
                    Candidate::Memory(_, d) if memories[*d].scope == Scope::Project => {
                        Some(memories[*d].file())
                    }
                    _ => None,
                })
                .collect();
            for path in gate.resident().filter(|p| !now.contains(*p)) {
                let Ok(rel) = crate::relpath::RelPath::parse(path) else { continue };
                if rel.under(&project.dir).symlink_metadata().is_ok()
                    && gate.memory(project, &rel).is_none()
                {
                    held_back.push(path.clone());
                }
            }
        }
        held_back.extend(unshadowed.iter().map(|&(p, _)| memories[p].file()));
    }
    let mut seen: HashSet<usize> = candidates
        .iter()
        .filter_map(|c| if let Candidate::Memory(_, d) = c { Some(*d) } else { None })
        .collect();
    for &d in &visible {
        let m = &memories[d];
        if args.files.iter().any(|f| m.paths.iter().any(|p| glob::matches(p, f)))
            && new_to_session(m)
            && seen.insert(d)
        {
            candidates.push(Candidate::Memory(Section::File, d));
        }
    }
    if let Some(q) = query.as_deref().filter(|q| !q.trim().is_empty()) {
        for d in best_matches(ctx, &states, &memories, &lib, q, &|_, m| shows(m)) {
            if new_to_session(&memories[d]) && seen.insert(d) {
                candidates.push(Candidate::Memory(Section::Match, d));
            }
        }
    }

    // A project memory reaches the agent only as the bytes the user trusted:
    // read again, checked against its digest, and parsed from what was checked.
    let mut checked: HashMap<usize, Option<Memory>> = HashMap::new();
    let mut trusted = |d: usize, held_back: &mut Vec<String>| -> Option<Memory> {
        let m = &memories[d];
        checked
            .entry(d)
            .or_insert_with(|| {
                if m.scope != Scope::Project || matches!(gate, Gate::All) {
                    // Trusted as it is; read for its body, which the index
                    // does not keep (a file gone since is what the index says).
                    let root = roots.iter().find(|r| r.scope == m.scope);
                    let read = root.and_then(|r| {
                        crate::scan::load(m.scope, m.path.clone(), &m.path.under(&r.dir)).ok()
                    });
                    return Some(read.map_or_else(|| m.clone(), |(full, _)| full));
                }
                let found = project.and_then(|root| gate.memory(root, &m.path));
                if found.is_none() {
                    held_back.push(m.file());
                }
                found
            })
            .clone()
    };

    let mut report = Report {
        query: echo,
        session: session_id.clone(),
        budget,
        used: 0,
        plans: Vec::new(),
        entries: Vec::new(),
        routing: Vec::new(),
        left_out: LeftOut::default(),
        rules_over_budget: None,
        untrusted,
        held_back: Vec::new(),
        format: args.format,
        lang: ctx.lang,
        json: ctx.json,
        prompt_mode,
        pending: None,
    };
    // Rank order; an entry that does not fit is left out with every
    // lower-ranked entry of its section. What is placed is kept in `placed`
    // (plans, entries, routing) to be undone from the end if the footer
    // does not fit.
    let mut full_sections: HashSet<u8> = HashSet::new();
    let section_key = |c: &Candidate| match c {
        Candidate::Plan(_) | Candidate::Memory(Section::Rule, _) => 0u8,
        Candidate::Memory(Section::Pinned, _) => 1,
        Candidate::Routing => 2,
        Candidate::Memory(Section::File, _) => 3,
        Candidate::Memory(Section::Match, _) => 4,
    };
    let mut left_out_paths: Vec<String> = Vec::new();
    let (mut left_out, mut name_checks) = (0usize, 0usize);
    let mut rules_need = 0usize;
    let mut used = report.frame_tokens();
    let mut placed: Vec<Placed> = Vec::new();
    for c in candidates {
        let key = section_key(&c);
        match c {
            Candidate::Plan(plan) => {
                let cost = report.cost_plan(&plan);
                rules_need += cost;
                if !full_sections.contains(&key) && used + cost <= budget {
                    used += cost;
                    report.plans.push(plan);
                    placed.push(Placed::Plan);
                } else {
                    full_sections.insert(key);
                    report.rules_over_budget = Some(0);
                    let name = match plan.root {
                        Scope::Project => "ROOT.md (plan)",
                        Scope::Global => "global ROOT.md (plan)",
                    };
                    left_out += 1;
                    if left_out_paths.len() < 3 {
                        left_out_paths.push(name.to_string());
                    }
                }
            }
            Candidate::Routing => {
                // Costed from the index first: a table that cannot fit is
                // left out without reading a file.
                let (count, cost) = report.cost_routing_of(&visible, &memories);
                if count == 0 {
                    continue;
                }
                let fits = used + cost <= budget;
                if !fits {
                    report.left_out.routing = true;
                    report.left_out.triggers = count;
                    continue;
                }
                let rows = routing_rows(&visible, &memories, &mut |d| trusted(d, &mut held_back));
                let cost = report.cost_routing(&rows);
                if rows.is_empty() {
                    continue;
                }
                if used + cost <= budget {
                    used += cost;
                    report.routing = rows;
                    placed.push(Placed::Routing);
                } else {
                    report.left_out.routing = true;
                    report.left_out.triggers = rows.len();
                }
            }
            Candidate::Memory(section, d) => {
                if full_sections.contains(&key) {
                    // Left out: counted (and costed, for the rules) from the
                    // index, never read; only a name that is printed is
                    // checked first, so no untrusted file is named as a memory.
                    if section == Section::Rule {
                        rules_need += report.cost_entry(&entry(section, &memories[d], ctx, true));
                    }
                    left_out += 1;
                    if left_out_paths.len() < 3 && name_checks < 16 {
                        name_checks += 1;
                        if let Some(m) = trusted(d, &mut held_back) {
                            left_out_paths.push(m.file());
                        }
                    }
                    continue;
                }
                let Some(m) = trusted(d, &mut held_back) else { continue };
                let e = entry(section, &m, ctx, section == Section::Rule || args.full);
                let cost = report.cost_entry(&e);
                if section == Section::Rule {
                    rules_need += cost;
                }
                if used + cost <= budget {
                    used += cost;
                    report.entries.push(e);
                    placed.push(Placed::Entry);
                } else {
                    full_sections.insert(key);
                    left_out += 1;
                    if left_out_paths.len() < 3 {
                        left_out_paths.push(m.file());
                    }
                    if section == Section::Rule {
                        report.rules_over_budget = Some(0);
                    }
                }
            }
        }
    }
    if report.rules_over_budget.is_some() {
        report.rules_over_budget = Some(rules_need + report.frame_tokens());
    }
    held_back.sort();
    held_back.dedup();
    report.held_back = held_back;
    report.left_out.count = left_out;
    report.left_out.names = left_out_paths;
    // The footer counts too: undo from the end until the whole block fits.
    loop {
        if report.measure() <= budget || !report.undo(placed.pop()) {
            break;
        }
    }
    if report.used > budget {
        // Not even the frame fits: say nothing rather than break the promise.
        report.plans.clear();
        report.entries.clear();
        report.routing.clear();
        report.left_out = LeftOut::default();
        report.rules_over_budget = None;
        report.untrusted.clear();
        report.held_back.clear();
        report.used = 0;
    }

    // Counted and remembered once the block is printed (`after_print`):
    // a block the agent never got was not shown. The session stays locked
    // until then.
    report.pending = Some(Pending {
        roots: roots.iter().map(|r| (*r).clone()).collect(),
        shown,
        fresh,
        track: !args.no_track,
    });
    Ok(report)
}

/// What a printed block still has to record.
#[derive(Debug)]
struct Pending {
    roots: Vec<Root>,
    shown: Option<session::Shown>,
    fresh: bool,
    track: bool,
}

impl Report {
    /// Count hits and remember what the session was shown: called once the
    /// block was written whole.
    pub fn after_print(&self, ctx: &Context) {
        let Some(p) = &self.pending else { return };
        let roots: Vec<&Root> = p.roots.iter().collect();
        if p.track {
            track(ctx, &roots, self);
        }
        if let Some(shown) = &p.shown {
            let entries = self.entries.iter().map(|e| (e.root, e.path.as_str(), e.updated));
            shown.record(entries, p.fresh, ctx.now_ms);
        }
    }
}

/// What was placed, so that it can be taken back from the end.
enum Placed {
    Plan,
    Entry,
    Routing,
}

impl Report {
    /// The block as printed, in its format (or as JSON).
    /// Exactly what is printed: control and invisible characters already
    /// shown escaped, so what the budget measures is what the terminal or
    /// agent gets.
    fn text(&self) -> String {
        if self.json {
            if self.is_empty() {
                return String::new();
            }
            serde_json::to_string_pretty(self).unwrap_or_default()
        } else {
            crate::base::text::terminal_safe(&self.render(), false).into_owned()
        }
    }

    /// The block's tokens as printed, with `used` itself filled in.
    fn measure(&mut self) -> usize {
        for _ in 0..3 {
            let now = estimate_tokens(&self.text());
            if now == self.used {
                break;
            }
            self.used = now;
        }
        self.used
    }

    /// Take back the last thing placed; false when there was none.
    fn undo(&mut self, last: Option<Placed>) -> bool {
        match last {
            None => false,
            Some(Placed::Plan) => {
                if let Some(plan) = self.plans.pop() {
                    self.left_out.count += 1;
                    let name = match plan.root {
                        Scope::Project => "ROOT.md (plan)",
                        Scope::Global => "global ROOT.md (plan)",
                    };
                    if self.left_out.names.len() < 3 {
                        self.left_out.names.insert(0, name.to_string());
                    }
                }
                true
            }
            Some(Placed::Routing) => {
                self.left_out.routing = true;
                self.left_out.triggers = self.routing.len();
                self.routing.clear();
                true
            }
            Some(Placed::Entry) => {
                if let Some(e) = self.entries.pop() {
                    self.left_out.count += 1;
                    if self.left_out.names.len() < 3 {
                        self.left_out.names.insert(0, e.path);
                    }
                }
                true
            }
        }
    }

    /// Tokens of the frame: title, notes and footer with nothing placed yet.
    fn frame_tokens(&self) -> usize {
        let w = self.words();
        let mut text = format!("# {}\n_{}_\n{}\n", w.title, w.snapshot, w.more);
        for line in self.footer() {
            text.push_str(&line);
        }
        estimate_tokens(&text) + 16
    }

    fn cost_entry(&self, e: &Entry) -> usize {
        let text = if self.json {
            serde_json::to_string(e).unwrap_or_default()
        } else {
            format!(
                "## x\n- **{}**: {} (`{}`, {}, {}) {}",
                e.title,
                e.text,
                e.path,
                e.age,
                self.words().verify,
                e.body.as_deref().map_or(String::new(), crate::base::text::md_fence)
            )
        };
        estimate_tokens(&text) + if self.format == Format::Xml { 24 } else { 2 }
    }

    fn cost_plan(&self, p: &Plan) -> usize {
        estimate_tokens(&p.text) + estimate_tokens(self.words().plan_global) + 8
    }

    /// Rows and cost of the routing table as the index has it, before any
    /// file is read: a table that cannot fit is never built.
    fn cost_routing_of(&self, visible: &[usize], memories: &[Memory]) -> (usize, usize) {
        let per_row = if self.format == Format::Xml { 8 } else { 2 };
        let (mut rows, mut cost) = (0, estimate_tokens(self.words().routing));
        for m in visible.iter().map(|&d| &memories[d]) {
            let file = estimate_tokens(&m.path.category) + estimate_tokens(&m.path.slug) + 1;
            for t in &m.load_when {
                rows += 1;
                cost += estimate_tokens(t) + file + per_row;
            }
        }
        (rows, cost)
    }

    fn cost_routing(&self, rows: &[(String, String)]) -> usize {
        let per_row = if self.format == Format::Xml { 8 } else { 2 };
        estimate_tokens(self.words().routing)
            + rows
                .iter()
                .map(|(t, f)| estimate_tokens(t) + estimate_tokens(f) + per_row)
                .sum::<usize>()
    }
}

/// The routing table's rows, from the memories that may reach the agent.
fn routing_rows(
    visible: &[usize],
    memories: &[Memory],
    trusted: &mut dyn FnMut(usize) -> Option<Memory>,
) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for &d in visible {
        if memories[d].load_when.is_empty() {
            continue;
        }
        if let Some(m) = trusted(d) {
            rows.extend(m.load_when.iter().map(|t| (t.clone(), m.file())));
        }
    }
    rows.sort();
    rows.dedup();
    rows
}

fn best_matches(
    ctx: &Context,
    states: &[(Scope, state::State)],
    memories: &[Memory],
    lib: &Library,
    query: &str,
    visible: &dyn Fn(usize, &Memory) -> bool,
) -> Vec<usize> {
    let signals = crate::commands::recall::signals(memories.len(), states, |s, c, slug| {
        lib.docs.find(s, c, slug)
    });
    let req = Request {
        query,
        limit: MATCHES,
        now_ms: ctx.now_ms,
        signals: &signals,
        filter: visible,
        explain: false,
    };
    rank(&lib.corpus, memories, &Params::default(), &req).into_iter().map(|h| h.doc).collect()
}

fn entry(section: Section, m: &Memory, ctx: &Context, with_body: bool) -> Entry {
    let shows_body = with_body && !m.body.trim().is_empty();
    // A summary cut from the body says again what the body says in full.
    let mut text = if shows_body && m.summary_derived {
        String::new()
    } else if m.summary.is_empty() {
        crate::memory::truncate(&m.body, 280)
    } else {
        m.summary.clone()
    };
    if !m.highlight.is_empty() {
        if !text.is_empty() {
            text.push_str(" — ");
        }
        text.push_str(&m.highlight);
    }
    // Line breaks as `\n` whatever the file used (a CR would print escaped).
    let body = m.body.replace("\r\n", "\n").replace('\r', "\n");
    // The body's own first heading repeats the title shown just above it.
    let mut body = body.trim();
    if let Some(first) = body.lines().next()
        && first.starts_with('#')
        && first.trim_start_matches('#').trim() == m.title.trim()
    {
        body = body[first.len()..].trim();
    }
    Entry {
        section,
        path: m.file(),
        root: m.scope,
        title: m.title.clone(),
        kind: m.kind.clone(),
        text,
        body: (shows_body && !body.is_empty()).then(|| body.to_string()),
        updated: m.updated,
        age: relative_age(m.updated, ctx.now_ms, ctx.lang),
        stale: ctx.now_ms - m.updated > DAY_MS,
    }
}

/// Count a hit for each match that made it into the block.
fn track(ctx: &Context, roots: &[&Root], report: &Report) {
    for root in roots {
        let paths: Vec<String> = report
            .entries
            .iter()
            .filter(|e| e.root == root.scope && matches!(e.section, Section::File | Section::Match))
            .map(|e| e.path.clone())
            .collect();
        // Hit counts are derived data: a read-only root still gets its context.
        let _ = state::record(&root.dir, &paths, ctx.now_ms);
    }
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        self.text()
    }

    fn json_text(&self) -> Option<String> {
        let text = self.text();
        Some(if text.is_empty() { text } else { text + "\n" })
    }
}
