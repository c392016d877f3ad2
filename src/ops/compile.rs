//! Compile: regenerate every `index.md` and the generated regions of
//! `ROOT.md`, writing only files whose bytes change. A check writes
//! nothing, keeps a diff and is stale (exit 1) when anything would change.
//! Every verb that writes a memory calls [`refresh`] on its root.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::cache;
use crate::cache::stamp;
use crate::model::compile::{Change, Note, Sources, plan};
use crate::model::relpath::check_category;
use crate::model::roots::{Root, Scope};
use crate::output::Style;
use crate::settings::Context;
use crate::store::scan::Listing;
use crate::store::write::{remove_file, write_atomic};

/// What `mem compile` is asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Write nothing; report what would change (stale: exit 1).
    pub check: bool,
    /// Append the `registry` / `routing` sections to a ROOT.md without them.
    pub fix_markers: bool,
    /// With `check`: judge the files staged for the next commit (git's
    /// index), not the working tree.
    pub staged: bool,
}

/// One root's outcome.
#[derive(Debug, Serialize)]
pub struct RootReport {
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    pub dir: PathBuf,
    /// Files written (or, with --check, that would be).
    pub written: Vec<String>,
    /// Files removed (or that would be).
    pub removed: Vec<String>,
    pub notes: Vec<NoteReport>,
    #[serde(skip)]
    diff: String,
    /// The root's memory files as this run listed them.
    #[serde(skip)]
    listings: Vec<Listing>,
}

/// A file left alone.
#[derive(Debug, Serialize)]
pub struct NoteReport {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
    /// The generated text cannot be written (broken markers): exit 2.
    pub error: bool,
    /// A memory file that cannot be read or parsed, left out of the
    /// indexes: `--check` fails on it (exit 1), so a hook refuses it.
    pub skipped: bool,
}

/// The whole run.
#[derive(Debug, Serialize)]
pub struct Report {
    pub check: bool,
    /// What was judged is what is staged for the next commit.
    pub staged: bool,
    pub stale: bool,
    pub roots: Vec<RootReport>,
    #[serde(skip)]
    warnings: Vec<String>,
}

/// Compile every selected root.
pub fn run(ctx: &Context, args: &Options) -> Result<Report> {
    let roots = ctx.read_roots()?;
    if roots.is_empty() {
        return Err(Error::input("no memory root to compile").hint("run `mem init` first"));
    }
    let mut reports = Vec::new();
    let mut also_said = Vec::new();
    for root in roots {
        let _lock =
            if args.check { None } else { Some(crate::store::write::lock_root(&root.dir)?) };
        let root_md =
            |r: &Root| crate::store::files::text(&r.dir, &r.dir.join("ROOT.md")).ok().flatten();
        let before =
            (args.fix_markers && root.scope == Scope::Project).then(|| root_md(root)).flatten();
        if args.check && crate::store::pending::interrupted(root) {
            also_said.push(format!(
                "{}: {}; {}",
                root.dir.display(),
                crate::store::pending::CAUSE,
                crate::store::pending::FIX
            ));
        }
        if args.staged && crate::ops::git::in_repository(&root.dir) {
            reports.push(compile_staged(root)?);
            continue;
        }
        if args.staged {
            // No commit holds it (the global root, usually): judged on disk.
            also_said.push(format!(
                "the {} root {} is not in a git repository: checked as it is on disk",
                root.scope.name(),
                root.dir.display()
            ));
        }
        reports.push(compile_root(root, args.check, args.fix_markers)?);
        // Sections mem added to ROOT.md keep it trusted, as any write through mem does.
        if let (Some(before), Some(after)) = (before, root_md(root)) {
            crate::store::trust::wrote_root_md(&ctx.roots.global.dir, root, &before, &after);
        }
    }
    let stale = reports.iter().any(|r| !r.written.is_empty() || !r.removed.is_empty());
    let mut warnings: Vec<String> =
        reports.iter().flat_map(|r| r.notes.iter().map(move |n| note_line(&r.dir, n))).collect();
    warnings.extend(also_said);
    // The project root as listed here (not what is staged: the files on disk
    // are what is held back).
    let listed = reports
        .iter()
        .find(|r| r.scope == Scope::Project && !args.staged)
        .map(|r| r.listings.as_slice());
    warnings.extend(crate::ops::visibility::held_back_warning(ctx, listed, !args.check));
    Ok(Report { check: args.check, staged: args.staged, stale, roots: reports, warnings })
}

/// `path` as `git add` in the current folder takes it: `.` parts left out,
/// and relative to the current folder when it is inside it.
fn relative(path: &std::path::Path) -> String {
    let clean: PathBuf = path.components().filter(|c| *c != std::path::Component::CurDir).collect();
    let here = std::env::current_dir().unwrap_or_default();
    clean.strip_prefix(&here).unwrap_or(&clean).display().to_string()
}

/// `--check --staged`: check `root` as git's index holds it; the report
/// names the root's own files.
fn compile_staged(root: &Root) -> Result<RootReport> {
    let staged = crate::ops::git::staged(root)?;
    let mut report = compile_root(&staged.root, true, false)?;
    let (from, to) = (staged.root.dir.display().to_string(), root.dir.display().to_string());
    report.diff = report.diff.replace(&from, &to);
    report.dir = root.dir.clone();
    Ok(report)
}

/// Recompile one root after a write; returns the files changed and notes as text.
pub fn refresh(root: &Root) -> Result<(Vec<String>, Vec<String>)> {
    refresh_listed(root).map(|(changed, notes, _)| (changed, notes))
}

/// [`refresh`], also returning the root's memory files as it listed them.
pub fn refresh_listed(root: &Root) -> Result<(Vec<String>, Vec<String>, Vec<Listing>)> {
    let report = compile_root(root, false, false)?;
    let notes = report.notes.iter().map(|n| note_line(&root.dir, n)).collect();
    let mut changed = report.written;
    changed.extend(report.removed);
    Ok((changed, notes, report.listings))
}

/// The generated files of `root` that `mem compile` would change, and the
/// notes it would print (broken markers, hand-written indexes).
pub fn stale(root: &Root) -> Result<(Vec<String>, Vec<NoteReport>)> {
    let report = compile_root(root, true, false)?;
    let mut files = report.written;
    files.extend(report.removed);
    Ok((files, report.notes))
}

fn compile_root(root: &Root, check: bool, fix_markers: bool) -> Result<RootReport> {
    let mut report = RootReport {
        scope: root.scope,
        dir: root.dir.clone(),
        written: Vec::new(),
        removed: Vec::new(),
        notes: Vec::new(),
        diff: String::new(),
        listings: Vec::new(),
    };
    let listed_at = crate::base::time::now_ns();
    // `--check` writes nothing, not even what it learnt of the folders.
    let (listings, listed) = crate::cache::snapshot::list(root, !check);
    // Nothing changed since a compile that left nothing to do: done.
    if !fix_markers && stamp::up_to_date(root, &listings) {
        if !check {
            crate::store::pending::clear(root);
        }
        report.listings = listings;
        return Ok(report);
    }
    // Frontmatter alone decides the generated text, and the index cache holds
    // it for every unchanged file: only changed files are read.
    let scan = cache::memories(root, &listings);
    let memories = scan.memories;
    // A file that cannot be read is left out of the indexes: said, so it
    // does not vanish in silence.
    // A memory that cannot be read fails a check: no commit should hold
    // what no command can read back. A misplaced file is only said.
    let listed = listed.iter().map(|p| (p, false));
    for (p, skipped) in listed.chain(scan.problems.iter().map(|p| (p, true))) {
        if !p.skipped {
            continue;
        }
        let path = p.path.strip_prefix(&root.dir).unwrap_or(&p.path);
        report.notes.push(NoteReport {
            path: path.display().to_string(),
            line: p.line,
            message: format!("left out of the indexes: {}", p.message),
            error: false,
            skipped,
        });
    }
    let root_md = crate::store::files::text(&root.dir, &root.dir.join("ROOT.md"))?;
    let indexes = read_indexes(root)?;
    let sources = Sources { memories: &memories, root_md: root_md.as_deref(), indexes: &indexes };
    let plan = plan(&sources, fix_markers);
    report.notes.extend(plan.notes.into_iter().map(note_report));
    for change in plan.changes {
        let target = root.dir.join(change.path());
        let (before, after) = match &change {
            Change::Write { before, after, .. } => {
                (before.as_deref().unwrap_or(""), after.as_str())
            }
            Change::Remove { before, .. } => (before.as_str(), ""),
        };
        report.diff.push_str(&unified(root, change.path(), before, after));
        match &change {
            Change::Write { path, after, .. } => {
                // Never write what no command could read back.
                if after.len() as u64 > crate::store::files::MAX_GENERATED_BYTES {
                    return Err(Error::input(format!(
                        "{}: the generated text would be {} MiB, over the {} MiB a generated file may hold",
                        target.display(),
                        after.len() >> 20,
                        crate::store::files::MAX_GENERATED_BYTES >> 20
                    ))
                    .about(&target)
                    .hint("split the category, or move load_when triggers into fewer memories"));
                }
                if !check {
                    write_atomic(&root.dir, &target, after.as_bytes())?;
                }
                report.written.push(path.clone());
            }
            Change::Remove { path, .. } => {
                if !check {
                    remove_file(&root.dir, &target)?;
                }
                report.removed.push(path.clone());
            }
        }
    }
    if !check && !fix_markers && report.notes.is_empty() {
        stamp::record(root, &listings, listed_at);
    }
    if !check {
        crate::store::pending::clear(root);
    }
    report.listings = listings;
    Ok(report)
}

fn unified(root: &Root, path: &str, before: &str, after: &str) -> String {
    // `a/.memory/ROOT.md` from inside the project, the whole path outside it.
    crate::base::text::unified_diff(&relative(&root.dir.join(path)), before, after)
}

/// The existing `index.md` of every category folder.
fn read_indexes(root: &Root) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = fs::read_dir(&root.dir) else { return Ok(out) };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if check_category(&name).is_err() || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if let Some(text) = crate::store::files::text(&root.dir, &entry.path().join("index.md"))? {
            out.insert(name, text);
        }
    }
    Ok(out)
}

fn note_report(n: Note) -> NoteReport {
    NoteReport { path: n.path, line: n.line, message: n.message, error: n.error, skipped: false }
}

fn note_line(dir: &std::path::Path, n: &NoteReport) -> String {
    let line = n.line.map(|l| format!(":{l}")).unwrap_or_default();
    format!("{}{line}: {}", dir.join(&n.path).display(), n.message)
}

impl Report {
    /// How many memory files could not be read or parsed.
    fn unreadable(&self) -> usize {
        self.roots.iter().flat_map(|r| &r.notes).filter(|n| n.skipped).count()
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = String::new();
        for r in &self.roots {
            if self.check {
                out.push_str(&r.diff);
                continue;
            }
            for w in &r.written {
                out.push_str(&format!(
                    "wrote   {}\n",
                    style.path(&r.dir.join(w).display().to_string())
                ));
            }
            for w in &r.removed {
                out.push_str(&format!(
                    "removed {}\n",
                    style.path(&r.dir.join(w).display().to_string())
                ));
            }
        }
        if !self.check && !self.stale {
            out.push_str("up to date\n");
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn notice(&self) -> Option<String> {
        let n: usize = self.roots.iter().map(|r| r.written.len() + r.removed.len()).sum();
        let files: Vec<String> = self
            .roots
            .iter()
            .flat_map(|r| r.written.iter().chain(&r.removed).map(|f| r.dir.join(f)))
            .map(|p| relative(&p))
            .collect();
        let unreadable = self.unreadable();
        let stale = (self.check && self.stale).then(|| match self.staged {
            true => format!(
                "{n} generated file(s) are stale in what is staged: run `mem compile`, then `git add {}`",
                files.join(" ")
            ),
            false => format!("{n} generated file(s) are stale; run `mem compile`"),
        });
        let unreadable = (self.check && unreadable > 0).then(|| match self.staged {
            true => format!(
                "{unreadable} staged memory file(s) cannot be read (named above): fix them, then `git add` them"
            ),
            false => format!("{unreadable} memory file(s) cannot be read (named above): fix them"),
        });
        match (unreadable, stale) {
            (Some(u), Some(s)) => Some(format!("{u}; {s}")),
            (u, s) => u.or(s),
        }
    }

    fn exit_code(&self) -> i32 {
        if self.roots.iter().any(|r| r.notes.iter().any(|n| n.error)) {
            2
        } else if self.check && (self.stale || self.unreadable() > 0) {
            1
        } else {
            0
        }
    }
}
