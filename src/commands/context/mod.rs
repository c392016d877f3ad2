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
//! trusted it (see [`crate::store::trust`]).
//!
//! `run` gathers the candidates in rank order; `input` reads a hook's JSON,
//! `plan` takes ROOT.md's hand-written plan, `report` holds the block as
//! data, `parts` turns memories into its entries and rows, `place` fits
//! them to the budget, `cost` measures them, `render` prints them.

mod cost;
mod input;
mod parts;
mod place;
pub mod plan;
mod render;
mod report;

pub use report::{Entry, Format, LeftOut, Plan, Report, Section};

use std::collections::{HashMap, HashSet};

use crate::base::error::Result;
use crate::index::index_all_read;
use crate::model::glob;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::model::usage::Relevance;
use crate::settings::Context;
use crate::store::session;
use crate::store::state;
use crate::store::trust::{Gate, RootMd};
use crate::store::usage::Uses;
use parts::{best_matches, track};
use report::{Candidate, Pending};

/// The budget at session start.
pub const SESSION_BUDGET: usize = crate::model::memory::RESIDENT_BUDGET;
/// The budget per prompt (`--query -`): matches only, a few of them.
pub const PROMPT_BUDGET: usize = 400;

const EXAMPLES: &str = "\
Examples:
  mem context                               plan, rules, pinned memories and routing
  mem context --query \"fix the deploy script\" --budget 1500
  mem context --file web/app/page.tsx --format xml
  mem context --query \"deploy\" --min-relevance low   matches however long unused
  echo '{\"session_id\":\"s1\",\"source\":\"startup\"}' | mem context --hook
  echo '{\"session_id\":\"s1\",\"prompt\":\"why is checkout slow\"}' | mem context --query -
  MEM_TRUST_ALL=1 mem context --json        (CI: inject untrusted project roots too)

With a session id (from --hook or --query - JSON, or --session), a prompt
gets only memories that session was not shown yet; after `compact` or `clear`
it starts over. Pinned memories and matches go in at or above
--min-relevance (a memory unused for 30 days counts one level lower);
rules always. Nothing to say prints nothing.";

/// The memory files of the injected roots that cannot be read, one warning
/// each; those of a project root the user trusted file by file are counted,
/// not quoted (their names and text are not trusted).
fn left_out_unreadable(
    lib: &crate::index::Library,
    project: Option<&Root>,
    gate: &Gate,
) -> Vec<String> {
    let mut warnings: Vec<String> =
        lib.problems.iter().filter(|p| p.skipped).map(ToString::to_string).collect();
    if let Some(project) = project.filter(|_| !matches!(gate, Gate::All)) {
        crate::commands::agent::scrub(&mut warnings, &project.dir);
    }
    warnings
}

/// Print the memory an agent should see now.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Add the memories that best match this text; `-` reads the prompt from
    /// stdin (a hook's JSON with `prompt`, `session_id`, `cwd`, or plain text):
    /// with a session id, only matches that session was not shown yet
    #[arg(long)]
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
    /// Pinned memories and matches only at or above this relevance in
    /// effect (declared, one step lower per 30 days without use); rules
    /// always
    #[arg(long, value_name = "LEVEL", default_value = "medium", value_parser = crate::commands::filter::relevance_parser())]
    pub min_relevance: Relevance,
}

/// Build the block.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    if ctx.json && args.format == Format::Xml {
        return Err(crate::base::error::Error::input(
            "--json and --format xml ask for two formats",
        )
        .hint("choose one"));
    }
    let stdin_query = args.query.as_deref() == Some("-");
    let hook = if stdin_query || args.hook { Some(input::read(stdin_query)?) } else { None };
    let hook = hook.unwrap_or_default();
    let mut ctx = ctx.clone();
    if let Some(cwd) = &hook.cwd
        && !ctx.roots.project_named
    {
        ctx.roots.project =
            crate::model::roots::find_project(cwd).map(|dir| Root { scope: Scope::Project, dir });
    }
    let ctx = &ctx;
    let query = if stdin_query { hook.prompt.clone() } else { args.query.clone() };
    // The block repeats the query it answers, at most this much of it.
    let echo = query.as_ref().map(|q| crate::model::memory::truncate(q, 200));
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
    let uses = Uses::from_states(&states, ctx.now_ms);
    // Pinned memories and matches reach the agent at or above the level.
    let relevant = |m: &Memory| uses.of(m).effective >= args.min_relevance;

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
            let last = uses.hits(m).last;
            (std::cmp::Reverse(last.max(m.updated)), std::cmp::Reverse(m.updated), m.file())
        };
        let mut rules: Vec<usize> =
            visible.iter().copied().filter(|&d| memories[d].is_rule()).collect();
        rules.sort_by_cached_key(rank_key);
        let mut pinned: Vec<usize> = visible
            .iter()
            .copied()
            .filter(|&d| memories[d].pinned && !memories[d].is_rule() && relevant(&memories[d]))
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
                let Ok(rel) = crate::model::relpath::RelPath::parse(path) else { continue };
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
            && relevant(m)
            && new_to_session(m)
            && seen.insert(d)
        {
            candidates.push(Candidate::Memory(Section::File, d));
        }
    }
    if let Some(q) = query.as_deref().filter(|q| !q.trim().is_empty()) {
        let matches = |_, m: &Memory| shows(m) && relevant(m);
        for d in best_matches(ctx, &states, &memories, &lib, q, &matches) {
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
                        crate::store::scan::load(m.scope, m.path.clone(), &m.path.under(&r.dir))
                            .ok()
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
        warnings: left_out_unreadable(&lib, project, &gate),
    };
    let mut needs = place::place(
        &mut report,
        candidates,
        &place::Sources {
            ctx,
            visible: &visible,
            memories: &memories,
            full: args.full,
            uses: &uses,
        },
        &mut |d, held_back| trusted(d, held_back),
        &mut held_back,
    );
    if report.rules_over_budget.is_some() {
        report.rules_over_budget = Some(needs.rules + report.frame_tokens());
    }
    held_back.sort();
    held_back.dedup();
    report.held_back = held_back;
    report.left_out.count = needs.left_out;
    report.left_out.names = needs.names;
    // The footer counts too: undo from the end until the whole block fits.
    loop {
        if report.measure() <= budget || !report.undo(needs.placed.pop()) {
            break;
        }
    }
    // Not even the frame fits: say nothing rather than break the promise;
    // except that a script asking for JSON still gets its one object, with
    // nothing placed and what was left out (every part was taken back
    // above), whose `used` is its own size, over the budget.
    if report.used > budget && !report.json {
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
