//! Context: the block an agent gets at session start, after its context
//! is compacted, and per prompt.
//!
//! At session start, resident first, from both roots (project first, the
//! project winning on the same path): each ROOT.md's hand-written plan, every
//! hard rule with its whole body, pinned memories, the routing table; then
//! memories whose `paths:` match the files given and the best matches for
//! the query. Per prompt, only matches the session has not been shown. The
//! budget caps every line printed; a project root's text reaches the agent
//! only as far as the user trusted it (see [`crate::store::trust`]).
//!
//! [`run`] builds the block: `gather` reads the roots and lists the
//! candidates in rank order; `plan` takes ROOT.md's
//! hand-written plan, `report` holds the block as data, `parts` turns
//! memories into its entries and rows, `place` fits them to the budget,
//! `cost` measures them, `render` prints them.

mod cost;
mod gather;
mod options;
mod parts;
mod place;
pub mod plan;
mod render;
mod report;

pub use options::Options;
pub use report::{Entry, Format, LeftOut, Plan, Report, Section};

use std::collections::HashMap;

use crate::base::error::{Error, Result};
use crate::cache::Library;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::settings::Context;
use crate::store::trust::Gate;
use parts::track;
use report::{Candidate, Pending};

/// The budget at session start.
pub const SESSION_BUDGET: usize = crate::model::memory::RESIDENT_BUDGET;
/// The budget per prompt (`--query -`): matches only, a few of them.
pub const PROMPT_BUDGET: usize = 400;

/// The memory files of the injected roots that cannot be read, one warning
/// each; those of a project root the user trusted file by file are counted,
/// not quoted (their names and text are not trusted).
fn left_out_unreadable(lib: &Library, project: Option<&Root>, gate: &Gate) -> Vec<String> {
    let mut warnings: Vec<String> =
        lib.problems.iter().filter(|p| p.skipped).map(ToString::to_string).collect();
    if let Some(project) = project.filter(|_| !matches!(gate, Gate::All)) {
        crate::ops::visibility::scrub(&mut warnings, &project.dir);
    }
    warnings
}

/// `--json` and XML are two formats: bad input.
pub fn check_format(ctx: &Context, format: Format) -> Result<()> {
    if ctx.json && format == Format::Xml {
        return Err(Error::input("--json and --format xml ask for two formats").hint("choose one"));
    }
    Ok(())
}

/// Build the block.
pub fn run(ctx: &Context, options: &Options) -> Result<Report> {
    check_format(ctx, options.format)?;
    let mut ctx = ctx.clone();
    if let Some(cwd) = &options.cwd
        && !ctx.roots.project_named
    {
        ctx.roots.project =
            crate::model::roots::find_project(cwd).map(|dir| Root { scope: Scope::Project, dir });
    }
    let read = gather::read(&ctx, options)?;
    let mut held_back = Vec::new();
    let mut candidates = Vec::new();
    if !options.prompt_mode {
        candidates = gather::resident(&read, &mut held_back);
    }
    gather::add_matches(&read, &mut candidates);
    Ok(build(read, candidates, held_back))
}

/// Place the candidates within the budget and finish the report.
fn build(mut read: gather::Read, candidates: Vec<Candidate>, mut held_back: Vec<String>) -> Report {
    let (ctx, options) = (read.ctx, read.options);
    let read_ref = &read;
    let default_budget = if options.prompt_mode { PROMPT_BUDGET } else { SESSION_BUDGET };
    let budget = options.budget.unwrap_or(default_budget);
    let mut report = Report {
        // The block repeats the query it answers, at most this much of it.
        query: options.query.as_ref().map(|q| crate::model::memory::truncate(q, 200)),
        session: options.session.clone(),
        budget,
        used: 0,
        plans: Vec::new(),
        entries: Vec::new(),
        routing: Vec::new(),
        left_out: LeftOut::default(),
        rules_over_budget: None,
        untrusted: read.gated.untrusted.clone(),
        held_back: Vec::new(),
        format: options.format,
        lang: ctx.lang,
        json: ctx.json,
        prompt_mode: options.prompt_mode,
        pending: None,
        warnings: left_out_unreadable(&read.lib, read.project, &read.gated.gate),
    };
    let mut checked: HashMap<usize, Option<Memory>> = HashMap::new();
    let sources = place::Sources {
        ctx,
        visible: &read.visible,
        memories: &read.memories,
        full: options.full,
        uses: &read.uses,
    };
    let mut trusted = |d: usize, held_back: &mut Vec<String>| {
        checked.entry(d).or_insert_with(|| gather::trusted_memory(read_ref, d, held_back)).clone()
    };
    let mut needs = place::place(&mut report, candidates, &sources, &mut trusted, &mut held_back);
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
    if report.used > budget && !report.json {
        report.say_nothing();
    }
    // Counted and remembered once the block is printed (`after_print`):
    // a block the agent never got was not shown. The session stays locked
    // until then.
    report.pending = Some(Pending {
        roots: read.gated.roots.iter().map(|r| (*r).clone()).collect(),
        shown: read.shown.take(),
        fresh: read.fresh,
        track: options.track,
    });
    report
}

impl Report {
    /// Not even the frame fits: say nothing rather than break the promise;
    /// except that a script asking for JSON still gets its one object, with
    /// nothing placed and what was left out (every part was taken back),
    /// whose `used` is its own size, over the budget.
    fn say_nothing(&mut self) {
        self.plans.clear();
        self.entries.clear();
        self.routing.clear();
        self.left_out = LeftOut::default();
        self.rules_over_budget = None;
        self.untrusted.clear();
        self.held_back.clear();
        self.used = 0;
    }

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
