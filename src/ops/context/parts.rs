//! Memories turned into the block's parts: entries, the routing table's
//! rows, the best matches for a query, and the hits counted once printed.

use crate::base::time::{DAY_MS, relative_age};
use crate::cache::Library;
use crate::model::memory::Memory;
use crate::model::roots::{Root, Scope};
use crate::rank::score::{Params, Request, rank};
use crate::settings::Context;
use crate::store::state;
use crate::store::usage::Uses;

use super::report::{Entry, Report, Section};

/// Query matches considered.
const MATCHES: usize = 10;

/// The routing table's rows, from the memories that may reach the agent.
pub(super) fn routing_rows(
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

pub(super) fn best_matches(
    ctx: &Context,
    states: &[(Scope, std::sync::Arc<state::State>)],
    memories: &[Memory],
    lib: &Library,
    query: &str,
    visible: &dyn Fn(usize, &Memory) -> bool,
) -> Vec<usize> {
    let signals =
        crate::ops::recall::signals(memories.len(), states, |s, c, slug| lib.docs.find(s, c, slug));
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

pub(super) fn entry(
    section: Section,
    m: &Memory,
    ctx: &Context,
    with_body: bool,
    uses: &Uses,
) -> Entry {
    let shows_body = with_body && !m.body.trim().is_empty();
    // A summary cut from the body says again what the body says in full.
    let mut text = if shows_body && m.summary_derived { String::new() } else { m.match_summary() };
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
        tier: uses.of(m).tier,
        stale: ctx.now_ms - m.updated > DAY_MS,
    }
}

/// Count a hit for each match that made it into the block.
pub(super) fn track(ctx: &Context, roots: &[&Root], report: &Report) {
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
