//! Gathering the block's candidates: the roots the user trusted, which
//! memories may be shown, the resident ones, the files' and the query's
//! matches, each in rank order.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::base::error::Result;
use crate::cache::{Library, index_all_read};
use crate::model::glob;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::settings::Context;
use crate::store::session;
use crate::store::state;
use crate::store::trust::{Gate, RootMd};
use crate::store::usage::Uses;

use super::options::Options;
use super::parts::best_matches;
use super::report::{Candidate, Plan, Section};

/// The roots the block reads: the global root, and the project root when
/// the user trusted it (its gate says how far); untrusted ones are named.
pub(super) struct Gated<'a> {
    pub(super) roots: Vec<&'a Root>,
    pub(super) gate: Gate,
    pub(super) untrusted: Vec<PathBuf>,
}

fn gated_roots(ctx: &Context) -> Result<Gated<'_>> {
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
    Ok(Gated { roots, gate, untrusted })
}

/// What the block is built from: the memories of the roots read, which of
/// them may be shown, their use, and the session's record.
pub(super) struct Read<'a> {
    pub(super) ctx: &'a Context,
    pub(super) options: &'a Options,
    pub(super) gated: Gated<'a>,
    /// Shared: a watching process keeps them while nothing changes.
    pub(super) memories: std::sync::Arc<Vec<Memory>>,
    pub(super) lib: std::sync::Arc<Library>,
    pub(super) project: Option<&'a Root>,
    pub(super) role: Option<&'a String>,
    pub(super) visible: Vec<usize>,
    /// (project document, global document): a global memory a project file
    /// the user did not trust no longer hides.
    pub(super) unshadowed: Vec<(usize, usize)>,
    pub(super) states: Vec<(Scope, Arc<state::State>)>,
    pub(super) uses: Uses,
    pub(super) shown: Option<session::Shown>,
    /// The session starts over: it was shown nothing yet.
    pub(super) fresh: bool,
}

impl Read<'_> {
    /// Not superseded, and the role's to see.
    fn shows(&self, m: &Memory) -> bool {
        !m.is_superseded() && crate::ops::visibility::visible_to(m, self.role)
    }

    /// At or above the relevance asked for, in effect.
    fn relevant(&self, m: &Memory) -> bool {
        self.uses.of(m).effective >= self.options.min_relevance
    }

    /// Not shown to the session yet.
    fn new_to_session(&self, m: &Memory) -> bool {
        !self.shown.as_ref().is_some_and(|s| s.contains(m.scope, &m.file(), m.updated))
    }
}

/// Read the roots and what decides what may be shown.
pub(super) fn read<'a>(ctx: &'a Context, options: &'a Options) -> Result<Read<'a>> {
    let gated = gated_roots(ctx)?;
    let (memories, lib) = index_all_read(&gated.roots);
    let project = gated.roots.iter().find(|r| r.scope == Scope::Project).copied();
    let states: Vec<(Scope, Arc<state::State>)> =
        gated.roots.iter().map(|r| (r.scope, state::load_shared(&r.dir).0)).collect();
    let uses = Uses::from_states(&states, ctx.now_ms);
    // A session start (not a resume) starts over: the agent holds nothing yet.
    let fresh = !options.prompt_mode && options.source != Some(session::Source::Resume);
    // Locked until what this run shows is recorded (`after_print`).
    let shown = options.session.as_deref().map(|id| session::Shown::open(&gated.roots, id, fresh));
    let mut read = Read {
        ctx,
        options,
        gated,
        memories,
        lib,
        project,
        role: options.role.as_ref().or(ctx.role.as_ref()),
        visible: Vec::new(),
        unshadowed: Vec::new(),
        states,
        uses,
        shown,
        fresh,
    };
    read.visible = (0..read.memories.len())
        .filter(|&d| read.lib.corpus.is_live(d) && read.shows(&read.memories[d]))
        .collect();
    read.unshadowed = unshadowed(&read);
    for &(p, d) in &read.unshadowed {
        read.visible.retain(|&v| v != p);
        read.visible.push(d);
    }
    Ok(read)
}

/// A project file the user did not trust hides no global memory: the
/// (project, global) pairs where the global memory shows instead.
fn unshadowed(read: &Read) -> Vec<(usize, usize)> {
    let (memories, lib) = (&read.memories, &read.lib);
    let mut out = Vec::new();
    let (Some(project), Gate::Files(_)) = (read.project, &read.gated.gate) else { return out };
    for d in (0..memories.len()).filter(|&d| !lib.corpus.is_live(d)) {
        let m = &memories[d];
        let Some(p) = lib.docs.find(Scope::Project, &m.path.category, &m.path.slug) else {
            continue;
        };
        let global_file = m.path.under(&read.ctx.roots.global.dir);
        if m.scope == Scope::Global
            && read.shows(m)
            && lib.corpus.is_live(p)
            && global_file.is_file()
            && read.gated.gate.memory(project, &memories[p].path).is_none()
        {
            out.push((p, d));
        }
    }
    out
}

/// At session start: each root's plan, the rules, the pinned memories and
/// the routing table, in that order; what the user did not trust of them
/// goes to `held_back`.
pub(super) fn resident(read: &Read, held_back: &mut Vec<String>) -> Vec<Candidate> {
    let (memories, gate) = (&read.memories, &read.gated.gate);
    let mut candidates = Vec::new();
    for root in &read.gated.roots {
        let prose = match root.scope {
            Scope::Project => gate.root_md(root),
            Scope::Global => Gate::All.root_md(root),
        };
        match prose {
            RootMd::Trusted(text) => {
                if let Some(text) = super::plan::plan(&text) {
                    candidates.push(Candidate::Plan(Plan { root: root.scope, text }));
                }
            }
            RootMd::HeldBack => held_back.push("ROOT.md".to_string()),
            RootMd::Missing => {}
        }
    }
    let rules: Vec<usize> =
        read.visible.iter().copied().filter(|&d| memories[d].is_rule()).collect();
    let rules = by_use(read, rules);
    let pinned: Vec<usize> = read
        .visible
        .iter()
        .copied()
        .filter(|&d| memories[d].pinned && !memories[d].is_rule() && read.relevant(&memories[d]))
        .collect();
    let pinned = by_use(read, pinned);
    candidates.extend(rules.into_iter().map(|d| Candidate::Memory(Section::Rule, d)));
    candidates.extend(pinned.into_iter().map(|d| Candidate::Memory(Section::Pinned, d)));
    candidates.push(Candidate::Routing);
    held_back.extend(no_longer_resident(read, &candidates));
    held_back.extend(read.unshadowed.iter().map(|&(p, _)| memories[p].file()));
    candidates
}

/// Rules, then pinned; within each, by last use, then by last update, then
/// by file (`category/slug.md`, compared as written but never written out).
fn by_use(read: &Read, docs: Vec<usize>) -> Vec<usize> {
    let memories = &read.memories;
    let mut keyed: Vec<(std::cmp::Reverse<i64>, std::cmp::Reverse<i64>, usize)> = docs
        .into_iter()
        .map(|d| {
            let m = &memories[d];
            let last = read.uses.hits(m).last;
            (std::cmp::Reverse(last.max(m.updated)), std::cmp::Reverse(m.updated), d)
        })
        .collect();
    let file = |d: usize| {
        let p = &memories[d].path;
        p.category.bytes().chain(*b"/").chain(p.slug.bytes()).chain(*b".md")
    };
    keyed.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| file(a.2).cmp(file(b.2))));
    keyed.into_iter().map(|(_, _, d)| d).collect()
}

/// A memory resident when trusted that is not resident now, through a
/// change from outside mem (`superseded_by`, `role`, a kind): named.
fn no_longer_resident(read: &Read, candidates: &[Candidate]) -> Vec<String> {
    let (memories, gate) = (&read.memories, &read.gated.gate);
    let Some(project) = read.project else { return Vec::new() };
    // By category and slug: `category/slug.md` without writing it out.
    let now: HashSet<(&str, &str)> = candidates
        .iter()
        .filter_map(|c| match c {
            Candidate::Memory(_, d) if memories[*d].scope == Scope::Project => {
                let p = &memories[*d].path;
                Some((p.category.as_str(), p.slug.as_str()))
            }
            _ => None,
        })
        .collect();
    let resident = |path: &str| {
        let (category, file) = path.split_once('/')?;
        now.contains(&(category, file.strip_suffix(".md")?)).then_some(())
    };
    let mut out = Vec::new();
    for path in gate.resident().filter(|p| resident(p).is_none()) {
        let Ok(rel) = crate::model::relpath::RelPath::parse(path) else { continue };
        if rel.under(&project.dir).symlink_metadata().is_ok()
            && gate.memory(project, &rel).is_none()
        {
            out.push(path.clone());
        }
    }
    out
}

/// The memories the files given match, then the best matches for the
/// query, each once and only if new to the session.
pub(super) fn add_matches(read: &Read, candidates: &mut Vec<Candidate>) {
    let memories = &read.memories;
    let mut seen: HashSet<usize> = candidates
        .iter()
        .filter_map(|c| if let Candidate::Memory(_, d) = c { Some(*d) } else { None })
        .collect();
    for &d in &read.visible {
        let m = &memories[d];
        if read.options.files.iter().any(|f| m.paths.iter().any(|p| glob::matches(p, f)))
            && read.relevant(m)
            && read.new_to_session(m)
            && seen.insert(d)
        {
            candidates.push(Candidate::Memory(Section::File, d));
        }
    }
    let query = read.options.query.as_deref().filter(|q| !q.trim().is_empty());
    if let Some(q) = query {
        let matches = |_, m: &Memory| read.shows(m) && read.relevant(m);
        for d in best_matches(read.ctx, &read.states, memories, &read.lib, q, &matches) {
            if read.new_to_session(&memories[d]) && seen.insert(d) {
                candidates.push(Candidate::Memory(Section::Match, d));
            }
        }
    }
}

/// A project memory reaches the agent only as the bytes the user trusted:
/// read again, checked against its digest, and parsed from what was
/// checked; any other is read for its body, which the index does not keep.
/// None (and the path in `held_back`) when the user did not trust it.
pub(super) fn trusted_memory(read: &Read, d: usize, held_back: &mut Vec<String>) -> Option<Memory> {
    let m = &read.memories[d];
    let gate = &read.gated.gate;
    if m.scope != Scope::Project || matches!(gate, Gate::All) {
        // A file gone since is what the index says.
        let root = read.gated.roots.iter().find(|r| r.scope == m.scope);
        let loaded = root.and_then(|r| {
            crate::store::scan::load(m.scope, m.path.clone(), &m.path.under(&r.dir)).ok()
        });
        return Some(loaded.map_or_else(|| m.clone(), |(full, _)| full));
    }
    let found = read.project.and_then(|root| gate.memory(root, &m.path));
    if found.is_none() {
        held_back.push(m.file());
    }
    found
}
