//! What the block costs: measured as printed, each part costed before it
//! is placed, the last part placed taken back when the footer does not fit.

use crate::base::text::{Tally, estimate_tokens};
use crate::model::memory::Memory;
use crate::model::roots::Scope;
use crate::output::Style;

use super::report::{Entry, Format, Placed, Plan, Report};

impl Report {
    /// The block as printed, in its format (or as JSON).
    /// Exactly what is printed: control and invisible characters already
    /// shown escaped, so what the budget measures is what the terminal or
    /// agent gets.
    pub(super) fn text(&self) -> String {
        if self.json {
            // Always one object, even with nothing in it; the envelope every
            // --json answer has, and the line break that ends it, measured
            // with the rest.
            let value = serde_json::to_value(self).unwrap_or_default();
            let warnings = crate::output::Report::warnings(self);
            let value = crate::output::envelope("context", value, warnings);
            serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
        } else {
            crate::base::text::terminal_safe(&self.render(), false).into_owned()
        }
    }

    /// The block's tokens as printed, with `used` itself filled in: in
    /// JSON the count prints its own digits, so it is taken again until it
    /// counts itself (it only grows, by a digit at most each time).
    pub(super) fn measure(&mut self) -> usize {
        loop {
            let now = estimate_tokens(&self.text());
            if now == self.used {
                return now;
            }
            self.used = now;
        }
    }

    /// Take back the last thing placed; false when there was none.
    pub(super) fn undo(&mut self, last: Option<Placed>) -> bool {
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
    pub(super) fn frame_tokens(&self) -> usize {
        let w = self.words();
        let mut text = format!("# {}\n_{}_\n{}\n", w.title, w.snapshot, w.more);
        for line in self.footer() {
            text.push_str(&line);
        }
        estimate_tokens(&text) + 16
    }

    pub(super) fn cost_entry(&self, e: &Entry) -> usize {
        let tokens = if self.json {
            estimate_tokens(&serde_json::to_string(e).unwrap_or_default())
        } else {
            // "## x\n- **{title}**: {text} (`{path}`, {age} · {tier}, {verify}) {body}",
            // counted piece by piece rather than put together.
            let mut t = Tally::default();
            t.add("## x\n- **").add(&e.title).add("**: ").add(&e.text).add(" (`").add(&e.path);
            t.add("`, ").add(&e.age).add(" · ").add(self.tier_word(e.tier)).add(", ");
            t.add(self.words().verify).add(") ");
            if let Some(body) = &e.body {
                t.add(&crate::base::text::md_fence(body));
            }
            t.tokens()
        };
        tokens + if self.format == Format::Xml { 24 } else { 2 }
    }

    pub(super) fn cost_plan(&self, p: &Plan) -> usize {
        estimate_tokens(&p.text) + estimate_tokens(self.words().plan_global) + 8
    }

    /// Rows and cost of the routing table as the index has it, before any
    /// file is read: a table that cannot fit is never built. The cost is
    /// counted up to just past `room` (it cannot fit then, whatever the
    /// rest costs); the rows are all counted.
    pub(super) fn cost_routing_of(
        &self,
        visible: &[usize],
        memories: &[Memory],
        room: usize,
    ) -> (usize, usize) {
        let per_row = if self.format == Format::Xml { 8 } else { 2 };
        let (mut rows, mut cost) = (0, estimate_tokens(self.words().routing));
        for m in visible.iter().map(|&d| &memories[d]) {
            if m.load_when.is_empty() {
                continue;
            }
            rows += m.load_when.len();
            if cost > room {
                continue;
            }
            let file = estimate_tokens(&m.path.category) + estimate_tokens(&m.path.slug) + 1;
            for t in &m.load_when {
                cost += estimate_tokens(t) + file + per_row;
            }
        }
        (rows, cost)
    }

    pub(super) fn cost_routing(&self, rows: &[(String, String)]) -> usize {
        let per_row = if self.format == Format::Xml { 8 } else { 2 };
        estimate_tokens(self.words().routing)
            + rows
                .iter()
                .map(|(t, f)| estimate_tokens(t) + estimate_tokens(f) + per_row)
                .sum::<usize>()
    }
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        self.text()
    }

    fn json_text(&self) -> Option<String> {
        Some(self.text())
    }

    /// Said on stderr too, for the person or the plugin that runs it: the
    /// block alone tells only the agent.
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn notice(&self) -> Option<String> {
        let dirs: Vec<String> = self.untrusted.iter().map(|d| d.display().to_string()).collect();
        (!dirs.is_empty()).then(|| {
            format!(
                "project memory at {} is not trusted, so it was left out: review it with `mem trust`",
                dirs.join(", ")
            )
        })
    }
}
