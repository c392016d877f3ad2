//! Export: every memory with its frontmatter, body and hit state, as one
//! JSON document (with a schema version) or one readable Markdown file; or
//! the project's rules and pinned memories written where agent hosts that
//! only read files look ([`hostfiles`](super::hostfiles)). Export → import
//! into an empty root → export gives identical JSON (see
//! [`import`](super::import)).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::ops::exchange::{Export, Exported, SCHEMA, to_json};
use crate::ops::filter::Filter;
use crate::ops::hostfiles::{Host, Outcome};
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::walk;
use crate::store::state;
use crate::store::write::write_atomic;

/// What to export, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The document's format, or the host whose files to write.
    pub format: Format,
    /// Write to this file instead of returning the text (a host's format:
    /// instead of the project's file; cursor-rules: into this folder).
    pub output: Option<PathBuf>,
    /// A host's format: write nothing; report what is stale, with a diff.
    pub check: bool,
    /// Which memories (json and markdown only).
    pub filter: Filter,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    Json,
    Markdown,
    AgentsMd,
    ClaudeMd,
    CursorRules,
}

impl Format {
    /// The host whose rule files this format writes, if it is one.
    pub fn host(self) -> Option<Host> {
        match self {
            Format::AgentsMd => Some(Host::AgentsMd),
            Format::ClaudeMd => Some(Host::ClaudeMd),
            Format::CursorRules => Some(Host::CursorRules),
            Format::Json | Format::Markdown => None,
        }
    }
}

/// What `mem export --format agents-md|claude-md|cursor-rules` did.
#[derive(Debug, Serialize)]
pub struct HostReport {
    /// Not an export document: `mem import` does not read it.
    pub schema: &'static str,
    pub check: bool,
    pub stale: bool,
    #[serde(flatten)]
    pub outcome: Outcome,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Write (or check) a host's rule files.
pub fn run_host(ctx: &Context, args: &Options, host: Host) -> Result<HostReport> {
    if args.filter.is_set() {
        return Err(Error::input(format!(
            "--format {} writes every rule and pinned memory; filters do not apply",
            format_name(args.format)
        ))
        .hint("leave out --category, --kind, --tag and --role"));
    }
    let outcome = crate::ops::hostfiles::export(ctx, host, args.output.as_deref(), args.check)?;
    let stale = outcome.files.iter().any(|f| f.action != "unchanged");
    let warnings = if outcome.held_back.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "left out, changed since you trusted them: {}; review them with `mem trust`, then export again",
            outcome.held_back.join(", ")
        )]
    };
    Ok(HostReport { schema: "mem-export-files/1", check: args.check, stale, outcome, warnings })
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "json",
        Format::Markdown => "markdown",
        Format::AgentsMd => "agents-md",
        Format::ClaudeMd => "claude-md",
        Format::CursorRules => "cursor-rules",
    }
}

impl crate::output::Report for HostReport {
    fn human(&self, style: &Style) -> String {
        let mut out = String::new();
        for f in &self.outcome.files {
            if self.check {
                out.push_str(&f.diff);
            }
            let verb = match (self.check, f.action) {
                (true, "unchanged") => "fresh",
                (true, "created") => "would create",
                (true, "updated") => "would update",
                (true, _) => "would remove",
                (false, action) => action,
            };
            out.push_str(&format!("{verb} {}\n", style.path(&f.file.display().to_string())));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn notice(&self) -> Option<String> {
        (self.check && self.stale).then(|| "stale: run the same command without --check".into())
    }

    fn exit_code(&self) -> i32 {
        i32::from(self.check && self.stale)
    }
}

/// What export produced.
#[derive(Debug, Serialize)]
pub struct Report {
    #[serde(flatten)]
    pub export: Export,
    #[serde(skip)]
    text: String,
    #[serde(skip)]
    written: Option<PathBuf>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Export as JSON or Markdown.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    if args.check || args.format.host().is_some() {
        return Err(Error::input(
            "--check goes with --format agents-md, claude-md or cursor-rules",
        )
        .hint("compare an export file with `diff` instead"));
    }
    if ctx.json && args.format == Format::Markdown {
        return Err(Error::input("--json and --format markdown ask for two formats")
            .hint("choose one: `--format json` is the export's JSON"));
    }
    let mut memories = Vec::new();
    let mut warnings = Vec::new();
    let roots = ctx.read_roots()?;
    let filter = &args.filter;
    filter.check_category(&roots)?;
    for root in roots {
        let hits = state::load(&root.dir).0.hits;
        let uses = crate::store::usage::Uses::load(&[root], ctx.now_ms);
        let (files, problems) = walk(root);
        warnings.extend(problems.iter().map(ToString::to_string));
        for f in files {
            match read_doc(&root.dir, &f.path) {
                // JSON keys are text: a frontmatter that is not `text: value`
                // throughout would come back without it, so it stays out.
                Ok(doc)
                    if serde_json::to_value(&doc.meta).is_err()
                        || doc.meta.keys().any(|k| k.as_str().is_none()) =>
                {
                    warnings.push(format!(
                        "{}: a frontmatter key is not text, which JSON cannot keep (not exported)",
                        f.rel.file()
                    ));
                }
                Ok(doc)
                    if filter.is_set() && {
                        let mtime_ms = (f.mtime_ns / 1_000_000) as i64;
                        let m = Memory::from_document(f.rel.clone(), root.scope, &doc, mtime_ms).0;
                        !filter.matches(&m, &uses)
                    } => {}
                Ok(doc) => memories.push(Exported {
                    root: root.scope,
                    path: f.rel.file(),
                    frontmatter: to_json(&doc.meta),
                    body: doc.body,
                    hits: hits.get(&f.rel.file()).copied(),
                }),
                Err(e) => warnings.push(format!("{e} (not exported)")),
            }
        }
    }
    let export = Export { schema: SCHEMA.into(), memories, warnings: Vec::new() };
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&export).unwrap_or_default() + "\n",
        Format::Markdown => markdown(&export),
        // Sent to run_host before anything is read.
        Format::AgentsMd | Format::ClaudeMd | Format::CursorRules => String::new(),
    };
    let written = match &args.output {
        Some(path) => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let target = dir
                .join(path.file_name().ok_or_else(|| Error::input("--output needs a file name"))?);
            refuse_special(&target)?;
            write_atomic(dir, &target, text.as_bytes())?;
            Some(target)
        }
        None => None,
    };
    Ok(Report { export, text, written, warnings })
}

/// `--output` names a regular file or nothing yet: a link, a folder, a
/// FIFO, a socket or a device there is refused before anything is read
/// into it, and never replaced (the write itself checks again).
fn refuse_special(target: &Path) -> Result<()> {
    let Ok(meta) = target.symlink_metadata() else { return Ok(()) };
    let kind = meta.file_type();
    let what = if kind.is_symlink() {
        "a symlink"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_file() {
        return Ok(());
    } else {
        special_kind(&kind)
    };
    Err(Error::input(format!(
        "--output {} is {what}; mem export writes only to a new or regular file",
        crate::base::text::one_line(&target.display().to_string())
    ))
    .hint("give a new or regular file's path, or write to stdout: `mem export > PATH`"))
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_kind: &std::fs::FileType) -> &'static str {
    "not a regular file"
}

fn read_doc(root: &Path, path: &Path) -> Result<Document> {
    let text = crate::store::files::text(root, path)?
        .ok_or_else(|| Error::not_found(format!("{}: no such file", path.display())).about(path))?;
    Document::parse(&text).map_err(|e| {
        Error::input(format!("{}:{}: {}", path.display(), e.line, e.message)).about(path)
    })
}

fn markdown(export: &Export) -> String {
    let mut out = format!("# Memory export\n\n{} memories.\n", export.memories.len());
    for m in &export.memories {
        let yaml = yaml_serde::to_string(&m.frontmatter).unwrap_or_default();
        let hits = m.hits.map_or("never recalled".into(), |h| format!("{} hits", h.count));
        out.push_str(&format!(
            "\n## {} ({}, {hits})\n\n```yaml\n{yaml}```\n\n{}",
            m.path,
            m.root.name(),
            m.body
        ));
        if !m.body.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        match &self.written {
            Some(path) => {
                format!("exported {} memories to {}\n", self.export.memories.len(), path.display())
            }
            None => self.text.clone(),
        }
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
