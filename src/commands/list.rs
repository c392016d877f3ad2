//! `mem list`: the memories of the selected roots, filtered and sorted.

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::base::text::flat;
use crate::model::memory::Memory;
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::Problem;

/// List memories.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem list\n  mem list --category decisions --sort recent -n 5\n  mem list --kind pitfall --json\n  mem list --tag postgres --role reviewer"
)]
pub struct Args {
    /// Only this category
    #[arg(long, short)]
    pub category: Option<String>,
    /// Only this kind (fact, rule, decision, …)
    #[arg(long, short)]
    pub kind: Option<String>,
    /// Only memories with this tag (case does not matter)
    #[arg(long, short)]
    pub tag: Option<String>,
    /// Only memories for this agent role (`role:` in their frontmatter)
    #[arg(long, short)]
    pub role: Option<String>,
    /// Order of the list
    #[arg(long, value_enum, default_value = "name")]
    pub sort: Sort,
    /// At most this many, after sorting
    #[arg(short = 'n', long = "limit", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
}

/// List orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    /// Most recently updated first
    Recent,
    /// By path
    Name,
}

/// The listed memories.
#[derive(Debug, Serialize)]
pub struct Report {
    pub memories: Vec<Memory>,
    pub problems: Vec<Problem>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Scan, filter, sort.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    // Metadata only: through the index, reading just the files that changed.
    let roots = ctx.read_roots()?;
    let tree = crate::index::scan_all(&roots);
    if let Some(category) = &args.category {
        let known = tree.memories.iter().any(|m| &m.path.category == category)
            || roots.iter().any(|r| r.dir.join(category).is_dir());
        if !known {
            let have: std::collections::BTreeSet<&str> =
                tree.memories.iter().map(|m| m.path.category.as_str()).collect();
            let have: Vec<&str> = have.into_iter().collect();
            return Err(Error::not_found(format!(
                "no category `{category}` in the selected roots"
            ))
            .hint(format!("the categories are: {}", have.join(", "))));
        }
    }
    let filtered =
        args.category.is_some() || args.kind.is_some() || args.tag.is_some() || args.role.is_some();
    let mut memories: Vec<Memory> = tree
        .memories
        .into_iter()
        .filter(|m| args.category.as_ref().is_none_or(|c| &m.path.category == c))
        .filter(|m| args.kind.as_ref().is_none_or(|k| m.kind.eq_ignore_ascii_case(k)))
        .filter(|m| {
            args.tag.as_ref().is_none_or(|t| m.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
        })
        .filter(|m| args.role.as_ref().is_none_or(|r| m.role.as_ref() == Some(r)))
        .collect();
    if memories.is_empty() && filtered {
        return Err(Error::not_found("no memory matches these filters")
            .hint("try fewer filters, or `mem list` for everything"));
    }
    match args.sort {
        Sort::Name => memories.sort_by(|a, b| a.path.cmp(&b.path).then(a.scope.cmp(&b.scope))),
        Sort::Recent => {
            memories.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.path.cmp(&b.path)))
        }
    }
    if let Some(limit) = args.limit {
        memories.truncate(limit as usize);
    }
    let warnings = tree.problems.iter().map(ToString::to_string).collect();
    Ok(Report { memories, problems: tree.problems, warnings })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if self.memories.is_empty() {
            return "no memories (add one with `mem remember <category>/<slug> TEXT`)\n".into();
        }
        let width = self.memories.iter().map(|m| m.file().len()).max().unwrap_or(0);
        let both = self.memories.iter().any(|m| m.scope != self.memories[0].scope);
        let mut out = String::new();
        for m in &self.memories {
            let file = m.file();
            let pad = " ".repeat(width - file.len());
            let scope = if both { format!("{:<8}", m.scope.name()) } else { String::new() };
            let mut line = format!(
                "{scope}{}{pad}  {:<10}  {}",
                style.path(&file),
                flat(&m.kind),
                flat(&m.title)
            );
            if m.pinned {
                line.push_str("  [pinned]");
            }
            if let Some(by) = &m.superseded_by {
                line = style.dim(&format!("{line}  (superseded by {by})"));
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
