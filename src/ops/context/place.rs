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
use super::report::{Candidate, Placed, Plan, Report, Section};

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
    // Rank order; an entry that does not fit is left out with every
    // lower-ranked entry of its section. What is placed is kept in `placed`
    // (plans, entries, routing) to be undone from the end if the footer
    // does not fit.
    let mut at = Progress {
        budget: report.budget,
        used: report.frame_tokens(),
        full_sections: HashSet::new(),
        left_out_paths: Vec::new(),
        left_out: 0,
        name_checks: 0,
        rules_need: 0,
        placed: Vec::new(),
    };
    for c in candidates {
        let key = section_key(&c);
        match c {
            Candidate::Plan(plan) => at.plan(report, plan, key),
            Candidate::Routing => at.routing(report, src, &mut |d| trusted(d, held_back)),
            Candidate::Memory(section, d) => {
                at.memory(report, src, (section, d, key), &mut |d| trusted(d, held_back))
            }
        }
    }
    Placing {
        rules: at.rules_need,
        left_out: at.left_out,
        names: at.left_out_paths,
        placed: at.placed,
    }
}

/// The section a candidate fills up with: once one of its entries does
/// not fit, the rest are left out.
fn section_key(c: &Candidate) -> u8 {
    match c {
        Candidate::Plan(_) | Candidate::Memory(Section::Rule, _) => 0u8,
        Candidate::Memory(Section::Pinned, _) => 1,
        Candidate::Routing => 2,
        Candidate::Memory(Section::File, _) => 3,
        Candidate::Memory(Section::Match, _) => 4,
    }
}

/// Placing so far.
struct Progress {
    budget: usize,
    /// Tokens used.
    used: usize,
    /// Sections where an entry did not fit.
    full_sections: HashSet<u8>,
    left_out_paths: Vec<String>,
    left_out: usize,
    /// Left-out names checked against what the user trusted.
    name_checks: usize,
    /// Tokens the hard rules (and plans) need in all.
    rules_need: usize,
    placed: Vec<Placed>,
}

impl Progress {
    fn fits(&self, cost: usize) -> bool {
        self.used + cost <= self.budget
    }

    fn plan(&mut self, report: &mut Report, plan: Plan, key: u8) {
        let cost = report.cost_plan(&plan);
        self.rules_need += cost;
        if !self.full_sections.contains(&key) && self.fits(cost) {
            self.used += cost;
            report.plans.push(plan);
            self.placed.push(Placed::Plan);
            return;
        }
        self.full_sections.insert(key);
        report.rules_over_budget = Some(0);
        let name = match plan.root {
            Scope::Project => "ROOT.md (plan)",
            Scope::Global => "global ROOT.md (plan)",
        };
        self.left_out += 1;
        if self.left_out_paths.len() < 3 {
            self.left_out_paths.push(name.to_string());
        }
    }

    fn routing(
        &mut self,
        report: &mut Report,
        src: &Sources,
        trusted: &mut dyn FnMut(usize) -> Option<Memory>,
    ) {
        // Costed from the index first: a table that cannot fit is left out
        // without reading a file.
        let room = self.budget.saturating_sub(self.used);
        let (count, cost) = report.cost_routing_of(src.visible, src.memories, room);
        if count == 0 {
            return;
        }
        if !self.fits(cost) {
            report.left_out.routing = true;
            report.left_out.triggers = count;
            return;
        }
        let rows = routing_rows(src.visible, src.memories, trusted);
        let cost = report.cost_routing(&rows);
        if rows.is_empty() {
            return;
        }
        if self.fits(cost) {
            self.used += cost;
            report.routing = rows;
            self.placed.push(Placed::Routing);
        } else {
            report.left_out.routing = true;
            report.left_out.triggers = rows.len();
        }
    }

    fn memory(
        &mut self,
        report: &mut Report,
        src: &Sources,
        (section, d, key): (Section, usize, u8),
        trusted: &mut dyn FnMut(usize) -> Option<Memory>,
    ) {
        if self.full_sections.contains(&key) {
            // Left out: counted (and costed, for the rules) from the index,
            // never read; only a name that is printed is checked first, so
            // no untrusted file is named as a memory.
            if section == Section::Rule {
                let e = entry(section, &src.memories[d], src.ctx, true, src.uses);
                self.rules_need += report.cost_entry(&e);
            }
            self.left_out += 1;
            if self.left_out_paths.len() < 3 && self.name_checks < 16 {
                self.name_checks += 1;
                if let Some(m) = trusted(d) {
                    self.left_out_paths.push(m.file());
                }
            }
            return;
        }
        let Some(m) = trusted(d) else { return };
        let body = section == Section::Rule || src.full;
        let e = entry(section, &m, src.ctx, body, src.uses);
        let cost = report.cost_entry(&e);
        if section == Section::Rule {
            self.rules_need += cost;
        }
        if self.fits(cost) {
            self.used += cost;
            report.entries.push(e);
            self.placed.push(Placed::Entry);
            return;
        }
        self.full_sections.insert(key);
        self.left_out += 1;
        if self.left_out_paths.len() < 3 {
            self.left_out_paths.push(m.file());
        }
        if section == Section::Rule {
            report.rules_over_budget = Some(0);
        }
    }
}
