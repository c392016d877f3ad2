//! The trash: what `mem forget` and `mem clean --yes` put in each root's
//! `.trash/`, newest first, each with the command that brings it back.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::Result;
use crate::base::time::Clock;
use crate::model::relpath::{check_category, check_slug};
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::trashed_in;

/// How much of the trash to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// At most this many, newest first.
    pub limit: Option<u32>,
}

/// One trashed copy.
#[derive(Debug, Serialize)]
pub struct Trashed {
    pub root: Scope,
    /// The memory it was, `category/slug.md`.
    pub path: String,
    /// When it was trashed (epoch ms).
    pub trashed_at: i64,
    pub file: PathBuf,
}

/// The trash of the selected roots.
#[derive(Debug, Serialize)]
pub struct Report {
    pub trashed: Vec<Trashed>,
    #[serde(skip)]
    clock: Clock,
}

/// List `<root>/.trash/<category>/<slug>.<ms>.md`, newest first.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let mut trashed = Vec::new();
    for root in ctx.read_roots()? {
        // Folders and files as they are: a link is never followed out of
        // the root, and only regular files are trashed copies.
        let trash = root.dir.join(".trash");
        if !trash.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(categories) = std::fs::read_dir(&trash) else { continue };
        for category in categories.flatten() {
            let name = category.file_name().to_string_lossy().into_owned();
            if check_category(&name).is_err() {
                continue;
            }
            for copy in
                trashed_in(&category.path()).into_iter().filter(|c| check_slug(&c.slug).is_ok())
            {
                trashed.push(Trashed {
                    root: root.scope,
                    path: format!("{name}/{}.md", copy.slug),
                    trashed_at: copy.at_ms,
                    file: copy.path,
                });
            }
        }
    }
    trashed.sort_by(|a, b| b.trashed_at.cmp(&a.trashed_at).then_with(|| a.path.cmp(&b.path)));
    trashed.truncate(args.limit.map_or(usize::MAX, |n| n as usize));
    Ok(Report { trashed, clock: Clock { now_ms: ctx.now_ms, lang: ctx.lang } })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.trashed.is_empty() {
            return "the trash is empty\n".into();
        }
        let width = self.trashed.iter().map(|t| t.path.len()).max().unwrap_or(0);
        let mut out = String::new();
        for t in &self.trashed {
            let pad = " ".repeat(width - t.path.len());
            out.push_str(&format!(
                "{:<8}{}{pad}  trashed {}  mem restore {}\n",
                t.root.name(),
                style.path(&t.path),
                self.clock.when(t.trashed_at),
                t.path.trim_end_matches(".md")
            ));
        }
        out
    }
}
