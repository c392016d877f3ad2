//! Inspect: without a path, the roots and their health; with one, a memory
//! with its metadata, version chain and saved versions.

use crate::base::time::Clock;
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::base::secrets;
use crate::base::text::flat;
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::model::usage::Usage;
use crate::ops::history::{Version, versions};
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::{Problem, Tree, walk};
use crate::store::state::{self, Hits};

/// What to inspect.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A memory, as `category/slug`; none for the roots and their health.
    pub path: Option<String>,
    /// Look for credentials in every memory file instead.
    pub secrets: bool,
    /// As the agent of `$MEM_ROLE` sees the roots (`mem mcp`): another
    /// role's private memories are not counted or named.
    pub as_agent: bool,
}

/// A suspected credential in a memory file.
#[derive(Debug, Serialize)]
pub struct SecretFinding {
    pub file: PathBuf,
    pub line: usize,
    pub what: &'static str,
}

/// A root as inspect sees it.
#[derive(Debug, Serialize)]
pub struct RootInfo {
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    pub dir: PathBuf,
    pub exists: bool,
    /// How many memories (`memory_count` in JSON: `memories` is a list
    /// everywhere).
    #[serde(rename = "memory_count")]
    pub memories: usize,
    pub categories: BTreeMap<String, usize>,
    /// For the project root: the lines `mem init` writes into `.gitignore`
    /// that its `.gitignore` lacks (`mem init --update-gitignore` adds them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gitignore_lacks: Vec<String>,
}

/// The overview.
#[derive(Debug, Serialize)]
pub struct Overview {
    pub roots: Vec<RootInfo>,
    pub shadowed: Vec<String>,
    pub problems: Vec<Problem>,
    /// What was left out of this overview, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Files held back from agents, or a root never trusted here.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// One link of a version chain.
#[derive(Debug, Serialize)]
pub struct Link {
    pub path: String,
    pub title: Option<String>,
}

/// One memory in full.
#[derive(Debug, Serialize)]
pub struct Detail {
    pub memory: Memory,
    pub file: PathBuf,
    /// The frontmatter as written, every key included.
    pub frontmatter: yaml_serde::Mapping,
    pub body: String,
    /// Older versions this one replaces, nearest first.
    #[serde(rename = "supersedes_chain")]
    pub supersedes: Vec<Link>,
    /// Newer versions that replace this one, nearest first.
    #[serde(rename = "superseded_by_chain")]
    pub superseded_by: Vec<Link>,
    /// Saved versions (`versions` in JSON, as in `mem history`).
    #[serde(rename = "versions")]
    pub history: Vec<Version>,
    /// A global memory at the same path, hidden by this one.
    pub shadows: Option<PathBuf>,
    /// The draft an edit of this memory kept because it could not be saved.
    pub draft: Option<PathBuf>,
    /// Recall hits from the root's `.state.json`.
    pub hits: Hits,
    /// When it was last used, its tier and its relevance in effect (the
    /// memory's `relevance` is the level it declares).
    #[serde(flatten)]
    pub usage: Usage,
    #[serde(skip)]
    clock: Clock,
}

/// What inspect shows.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Report {
    Overview(Overview),
    Detail(Box<Detail>),
    Secrets { secrets: Vec<SecretFinding> },
}

/// Build the overview or the detail.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let roots = ctx.read_roots()?;
    if args.secrets {
        return Ok(Report::Secrets { secrets: find_secrets(&roots) });
    }
    // Metadata through the index; a detail reads its own file.
    let mut tree = crate::cache::scan_all(&roots);
    if args.as_agent {
        let role = ctx.role.as_ref();
        tree.memories.retain(|m| crate::ops::visibility::visible_to(m, role));
        tree.shadowed.retain(|m| crate::ops::visibility::visible_to(m, role));
    }
    match &args.path {
        None => {
            let mut overview = overview(ctx, tree);
            if !args.as_agent {
                overview.warnings.extend(crate::ops::visibility::standing_warning(ctx));
            }
            Ok(Report::Overview(overview))
        }
        Some(path) => detail(ctx, &tree, &RelPath::parse(path)?, args.as_agent)
            .map(|d| Report::Detail(Box::new(d))),
    }
}

/// Every memory file of `roots` scanned for credentials (raw text, so files
/// that do not parse, and misplaced ones, are checked too).
fn find_secrets(roots: &[&Root]) -> Vec<SecretFinding> {
    let mut out = Vec::new();
    for root in roots {
        let (files, problems) = walk(root);
        let misplaced = problems.into_iter().map(|p| p.path).filter(|p| p.is_file());
        for path in files.into_iter().map(|f| f.path).chain(misplaced) {
            let Ok(Some(text)) = crate::store::files::text(&root.dir, &path) else { continue };
            for f in secrets::scan(&text) {
                out.push(SecretFinding { file: path.clone(), line: f.line, what: f.what });
            }
        }
    }
    out
}

fn overview(ctx: &Context, tree: Tree) -> Overview {
    let roots = ctx
        .selected()
        .into_iter()
        .map(|root| {
            let mut categories = BTreeMap::new();
            let mine = tree.memories.iter().chain(&tree.shadowed).filter(|m| m.scope == root.scope);
            let mut memories = 0;
            for m in mine {
                *categories.entry(m.path.category.clone()).or_insert(0) += 1;
                memories += 1;
            }
            let gitignore_lacks = match root.scope == Scope::Project && root.exists() {
                true => crate::store::gitignore::gitignore_lacks(&root.dir),
                false => Vec::new(),
            };
            RootInfo {
                scope: root.scope,
                dir: root.dir.clone(),
                exists: root.exists(),
                memories,
                categories,
                gitignore_lacks,
            }
        })
        .collect();
    let shadowed = tree.shadowed.iter().map(Memory::file).collect();
    let mut problems = tree.problems;
    for root in ctx.selected().into_iter().filter(|r| r.exists()) {
        problems.extend(crate::store::write::leftovers(&root.dir).into_iter().map(|path| Problem {
            path,
            line: None,
            message: "temp file of an interrupted write; the next write in this folder removes it once it is 5 minutes old".into(),
            skipped: true,
            target: None,
        }));
        problems.extend(crate::store::write::drafts(&root.dir).into_iter().map(|(rel, path)| Problem {
            path,
            line: None,
            message: format!(
                "draft of {rel} kept by an edit that could not be saved: `mem edit {rel}` goes on with it, `mem edit {rel} --discard` drops it"
            ),
            skipped: true,
            target: None,
        }));
    }
    Overview { roots, shadowed, problems, notes: Vec::new(), warnings: Vec::new() }
}

fn detail(ctx: &Context, tree: &Tree, rel: &RelPath, as_agent: bool) -> Result<Detail> {
    let Some(memory) = tree.memories.iter().find(|m| &m.path == rel) else {
        if let Some(p) = tree.problems.iter().find(|p| p.path.ends_with(rel.file())) {
            return Err(Error::input(p.to_string())
                .about(&p.path)
                .hint("fix the file by hand; mem left it as it is"));
        }
        return Err(crate::ops::naming::no_such_memory(ctx, rel, as_agent));
    };
    let (root, file) =
        ctx.locate(rel)?.ok_or_else(|| Error::not_found(format!("{rel} vanished")))?;
    let recorded = state::load(&root.dir).0;
    let hits = recorded.hits.get(&rel.file()).copied().unwrap_or_default();
    let watched = recorded.began().unwrap_or(ctx.now_ms);
    let text = crate::store::files::text(&root.dir, &file)?
        .ok_or_else(|| Error::not_found(format!("{rel} vanished")))?;
    let doc = Document::parse(&text).map_err(|e| Error::input(e.message).about(&file))?;
    let find = |p: &str| tree.memories.iter().find(|m| m.file() == p);
    let chain = |next: fn(&Memory) -> Option<&String>| {
        let mut links = Vec::new();
        let mut at = next(memory).cloned();
        while let Some(path) = at.filter(|p| links.len() < 32 && *p != memory.file()) {
            let found = find(&path);
            links.push(Link { path: path.clone(), title: found.map(|m| m.title.clone()) });
            at = found.and_then(next).cloned();
        }
        links
    };
    let supersedes = chain(|m| m.supersedes.as_ref());
    let superseded_by = chain(|m| m.superseded_by.as_ref());
    let history =
        versions(ctx, rel)?.into_iter().filter(|v| v.0 == memory.scope).map(|v| v.1).collect();
    let shadows =
        tree.shadowed.iter().find(|m| &m.path == rel).map(|_| rel.under(&ctx.roots.global.dir));
    let draft = crate::store::write::draft_path(&root.dir, rel);
    let draft = draft.symlink_metadata().is_ok_and(|m| m.is_file()).then_some(draft);
    Ok(Detail {
        draft,
        memory: memory.clone(),
        file,
        frontmatter: doc.meta,
        body: doc.body,
        supersedes,
        superseded_by,
        history,
        shadows,
        hits,
        usage: crate::store::usage::usage(memory, hits.last, watched, ctx.now_ms),
        clock: Clock { now_ms: ctx.now_ms, lang: ctx.lang },
    })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        match self {
            Report::Overview(o) => human_overview(o, style),
            Report::Detail(d) => human_detail(d, style),
            Report::Secrets { secrets } if secrets.is_empty() => "no credentials found\n".into(),
            Report::Secrets { secrets } => secrets
                .iter()
                .map(|f| {
                    format!(
                        "{}:{}: looks like {}\n",
                        style.path(&f.file.display().to_string()),
                        f.line,
                        f.what
                    )
                })
                .collect(),
        }
    }

    fn warnings(&self) -> &[String] {
        match self {
            Report::Overview(o) => &o.warnings,
            _ => &[],
        }
    }

    fn exit_code(&self) -> i32 {
        match self {
            Report::Secrets { secrets } if !secrets.is_empty() => 1,
            _ => 0,
        }
    }
}

fn human_overview(o: &Overview, style: &Style) -> String {
    let mut out = String::new();
    for r in &o.roots {
        let state =
            if r.exists { format!("{} memories", r.memories) } else { "not created".into() };
        out.push_str(&format!(
            "{:<8} {}  ({state})\n",
            style.bold(r.scope.name()),
            r.dir.display()
        ));
        for (cat, n) in &r.categories {
            out.push_str(&format!("  {cat:<20} {n}\n"));
        }
        if !r.gitignore_lacks.is_empty() {
            out.push_str(&format!(
                "  its .gitignore lacks {}: `mem init --update-gitignore` adds {}\n",
                r.gitignore_lacks.join(", "),
                if r.gitignore_lacks.len() == 1 { "it" } else { "them" },
            ));
        }
    }
    if !o.shadowed.is_empty() {
        out.push_str(&format!(
            "\nshadowed (global copy hidden by the project copy): {}\n",
            o.shadowed.len()
        ));
        for s in &o.shadowed {
            out.push_str(&format!("  {}\n", style.path(s)));
        }
    }
    if o.problems.is_empty() {
        out.push_str("\nno problems\n");
    } else {
        out.push_str(&format!("\nproblems: {}\n", o.problems.len()));
        for p in &o.problems {
            out.push_str(&format!("  {}\n", style.warn(&p.to_string())));
        }
    }
    out
}

fn human_detail(d: &Detail, style: &Style) -> String {
    let m = &d.memory;
    let mut out = format!("{}  {}\n", style.path(&m.file()), style.bold(&flat(&m.title)));
    let mut row = |k: &str, v: String| {
        if !v.is_empty() {
            out.push_str(&format!("  {k:<14}{}\n", flat(&v)));
        }
    };
    row("root", format!("{} ({})", m.scope.name(), d.file.display()));
    row("kind", m.kind.clone());
    row("summary", m.summary.clone());
    row("highlight", m.highlight.clone());
    row("created", d.clock.when(m.created));
    row("updated", d.clock.when(m.updated));
    row("load_when", m.load_when.join(", "));
    row("tags", m.tags.join(", "));
    row("pinned", if m.pinned { "yes".into() } else { String::new() });
    let fact = crate::model::usage::relevance_fact(&d.usage);
    row("relevance", fact.trim_start_matches("relevance ").to_string());
    let used = crate::base::time::relative_age(d.usage.last_used, d.clock.now_ms, d.clock.lang);
    row("tier", format!("{} (last used {used})", d.usage.tier));
    row("sessions", m.source_sessions.join(", "));
    row("role", m.role.clone().unwrap_or_default());
    let links = |ls: &[Link]| ls.iter().map(|l| l.path.clone()).collect::<Vec<_>>().join(" → ");
    row("supersedes", links(&d.supersedes));
    row("superseded_by", links(&d.superseded_by));
    row("shadows", d.shadows.as_ref().map(|p| p.display().to_string()).unwrap_or_default());
    if let Some(draft) = &d.draft {
        row(
            "draft",
            format!(
                "{} (an edit that could not be saved: `mem edit {}` goes on with it)",
                draft.display(),
                m.file()
            ),
        );
    }
    if d.hits.count > 0 {
        row("hits", format!("{} (last {})", d.hits.count, d.clock.when(d.hits.last)));
    }
    row(
        "history",
        d.history
            .iter()
            .map(|v| crate::base::time::local_minute(v.updated))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(&format!("\n{}", d.body));
    if !d.body.ends_with('\n') {
        out.push('\n');
    }
    out
}
