//! Trust: which of a project root's files may reach an agent. The user
//! reviews what is new or changed since the last trust ([`review`]), then
//! records it ([`approve`]), or stops trusting the root ([`revoke`]).
//! Nothing here asks: `mem trust` shows the review and asks on a terminal;
//! an agent (`mem mcp`) can never trust, only read what the user trusted.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::text::one_line;
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::Problem;
use crate::store::trust::{self, Reviewed};

/// How many paths of files gone since the last trust are listed by name.
const LISTED: usize = 40;

/// What changed.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The project root's folder (`dir` in JSON, as in `stats` and `inspect`).
    #[serde(rename = "dir")]
    pub root: PathBuf,
    pub trusted: bool,
    pub changed: bool,
    /// A different folder stands where a trusted root was (a new clone).
    pub other_root: bool,
    /// Files new or changed since the last trust.
    pub pending: Vec<Reviewed>,
    /// Files trusted before and gone since.
    pub removed: Vec<String>,
    /// Files that cannot be read, and so are never injected.
    pub unreadable: Vec<Problem>,
    /// Nothing was recorded: confirm with `--yes` (not on a terminal).
    pub unconfirmed: bool,
    /// The review was shown already (on a terminal, before asking).
    #[serde(skip)]
    pub shown: bool,
}

/// The project root's files compared with what was trusted: the report to
/// show, and what [`approve`] records (exactly what was reviewed, never a
/// later state of the files).
#[derive(Debug)]
pub struct Pending {
    pub report: Report,
    review: trust::Review,
}

/// Compare the project root's files with what the user trusted.
pub fn review(ctx: &Context) -> Result<Pending> {
    let root = ctx.project_root()?;
    let global = &ctx.roots.global.dir;
    let review = trust::review(global, root)?;
    let known = trust::load(global, root).is_some();
    let changed = !known || !review.pending.is_empty() || !review.removed.is_empty();
    let report = Report {
        root: review.canonical.clone(),
        trusted: false,
        changed,
        other_root: review.other_root,
        pending: review.pending.clone(),
        removed: review.removed.clone(),
        unreadable: review.unreadable.clone(),
        unconfirmed: false,
        shown: false,
    };
    Ok(Pending { report, review })
}

/// Trust the project root as `pending` reviewed it.
pub fn approve(ctx: &Context, pending: Pending) -> Result<Report> {
    let root = ctx.project_root()?;
    let global = &ctx.roots.global.dir;
    trust::record(global, root, &pending.review, ctx.now_ms)?;
    // What each file's digest is, kept so that later commands (the
    // pre-commit hook first) need not hash unchanged files to say what is
    // held back.
    crate::cache::held::standing_now(global, root, true);
    Ok(Report { trusted: true, ..pending.report })
}

/// Record nothing: the review was not confirmed.
pub fn decline(pending: Pending) -> Report {
    Report { unconfirmed: true, ..pending.report }
}

/// Stop trusting the project root.
pub fn revoke(ctx: &Context) -> Result<Report> {
    let root = ctx.project_root()?;
    let changed = trust::untrust(&ctx.roots.global.dir, root)?;
    Ok(Report {
        root: root.dir.clone(),
        trusted: false,
        changed,
        other_root: false,
        pending: Vec::new(),
        removed: Vec::new(),
        unreadable: Vec::new(),
        unconfirmed: false,
        shown: false,
    })
}

impl Report {
    /// What is about to be trusted, every text that can reach an agent:
    /// ROOT.md, rules and pinned memories in full; of any other memory what
    /// a prompt it matches injects (title, kind, summary, highlight) and its
    /// triggers, one block per memory. Counts first.
    pub fn review_text(&self, style: &Style) -> String {
        let mut out = String::new();
        if self.other_root {
            out.push_str(&format!(
                "{} is not the folder that was trusted at this path (a new clone?): every file is reviewed again\n",
                self.root.display()
            ));
        }
        let whole = self.pending.iter().filter(|r| r.text.is_some()).count();
        let matched = self.pending.len() - whole;
        out.push_str(&format!(
            "{} files new or changed in {}: {whole} shown whole (ROOT.md, rules, pinned), {matched} as a prompt that matches them injects them; {} gone; {} not read\n",
            self.pending.len(),
            self.root.display(),
            self.removed.len(),
            self.unreadable.len()
        ));
        let bar = style.dim("│");
        for r in &self.pending {
            out.push_str(&format!("{:<8} {}\n", r.status, style.path(&r.path)));
            if let Some(text) = &r.text {
                for line in text.lines() {
                    out.push_str(&format!("  {bar} {line}\n"));
                }
            }
            if let Some(m) = &r.injected {
                for (name, value) in [
                    ("title", &m.title),
                    ("kind", &m.kind),
                    ("summary", &m.summary),
                    ("highlight", &m.highlight),
                ] {
                    if !value.trim().is_empty() {
                        out.push_str(&format!("  {bar} {name}: {}\n", one_line(value)));
                    }
                }
            }
            if r.text.is_none() && !r.triggers.is_empty() {
                let triggers: Vec<String> =
                    r.triggers.iter().map(|t| format!("\"{}\"", one_line(t))).collect();
                out.push_str(&format!("  {bar} load_when: {}\n", triggers.join(", ")));
            }
        }
        for path in self.removed.iter().take(LISTED) {
            out.push_str(&format!("{:<8} {path}\n", "gone"));
        }
        if self.removed.len() > LISTED {
            out.push_str(&format!("… and {} more gone\n", self.removed.len() - LISTED));
        }
        for p in &self.unreadable {
            out.push_str(&format!("{:<8} {p} (never injected)\n", "not read"));
        }
        out
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let root = style.path(&self.root.display().to_string());
        let mut out = if self.shown { String::new() } else { self.review_text(style) };
        out.push_str(&match (self.trusted, self.changed, self.unconfirmed) {
            (_, _, true) => format!("nothing recorded for {root}\n"),
            (true, true, _) => format!(
                "trusted {root}\n  its rules and memories will be injected by `mem context` and `mem mcp`\n  a file changed from outside mem is held back until you trust it again\n"
            ),
            (true, false, _) => format!("{root} was already trusted as it is\n"),
            (false, true, _) => format!("no longer trusted: {root}\n"),
            (false, false, _) => format!("{root} was not trusted\n"),
        });
        out
    }

    fn notice(&self) -> Option<String> {
        self.unconfirmed.then(|| {
            "review the files above, then run `mem trust --yes` to record them".to_string()
        })
    }

    fn exit_code(&self) -> i32 {
        i32::from(self.unconfirmed)
    }
}
