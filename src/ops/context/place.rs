//! Placing the candidates within the budget, in rank order: an entry that
//! does not fit is left out with every lower-ranked entry of its section,
//! and what is left out is counted from the index, never read (only a name
//! that is printed is checked first, so no untrusted file is named).

use std::collections::HashSet;

use crate::model::memory::Memory;
use crate::model::roots::Scope;
use crate::settings::Context;
use crate::store::usage::Uses;

use super::parts::{entry, routing_rows};
use super::report::{Candidate, Placed, Report, Section};

/// What placing reads besides the report.
pub(super) struct Sources<'a> {
    pub ctx: &'a Context,
    /// The memories that may be shown, by document.
    pub visible: &'a [usize],
    pub memories: &'a [Memory],
    /// Pinned memories with their whole body.
    pub full: bool,
    /// Each memory's use, for the tier shown beside its age.
    pub uses: &'a Uses,
}

/// What placing left to the caller.
pub(super) struct Placing {
    /// Tokens the hard rules (and plans) need in all.
    pub rules: usize,
    /// Memories left out, and the first few names.
    pub left_out: usize,
    pub names: Vec<String>,
    /// What was placed, in order, to be taken back from the end.
    pub placed: Vec<Placed>,
}

/// Place `candidates` (in rank order) into `report` within its budget.
/// `trusted` gives a memory as the user trusted it (None when held back,
/// which it notes in `held_back`).
pub(super) fn place(
    report: &mut Report,
    candidates: Vec<Candidate>,
    src: &Sources,
    trusted: &mut dyn FnMut(usize, &mut Vec<String>) -> Option<Memory>,
    held_back: &mut Vec<String>,
) -> Placing {
    let budget = report.budget;
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
                let (count, cost) = report.cost_routing_of(src.visible, src.memories);
                if count == 0 {
                    continue;
                }
                let fits = used + cost <= budget;
                if !fits {
                    report.left_out.routing = true;
                    report.left_out.triggers = count;
                    continue;
                }
                let rows = routing_rows(src.visible, src.memories, &mut |d| trusted(d, held_back));
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
                        let e = entry(section, &src.memories[d], src.ctx, true, src.uses);
                        rules_need += report.cost_entry(&e);
                    }
                    left_out += 1;
                    if left_out_paths.len() < 3 && name_checks < 16 {
                        name_checks += 1;
                        if let Some(m) = trusted(d, held_back) {
                            left_out_paths.push(m.file());
                        }
                    }
                    continue;
                }
                let Some(m) = trusted(d, held_back) else { continue };
                let body = section == Section::Rule || src.full;
                let e = entry(section, &m, src.ctx, body, src.uses);
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
    Placing { rules: rules_need, left_out, names: left_out_paths, placed }
}
