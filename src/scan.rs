//! Walk a root and read its memories. A file that cannot be read is a
//! [`Problem`] in the result, never an abort, and never rewritten.
//!
//! Layout is fixed by the spec: `<root>/<category>/<slug>.md`. Hidden entries,
//! `ROOT.md` and `index.md` are never memories; anything else that looks like
//! one but is misplaced is reported, not silently skipped.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::frontmatter::Document;
use crate::memory::Memory;
use crate::relpath::{RelPath, check_category, check_slug};
use crate::roots::{Root, Scope};
use crate::time::epoch_ms;

/// Files larger than this are reported and skipped.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A file that could not be used as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    /// True when the file was skipped; false for a field that was defaulted.
    pub skipped: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.message)?;
        if self.skipped {
            f.write_str(" (skipped)")?;
        }
        Ok(())
    }
}

/// Everything read from one root.
#[derive(Debug, Default)]
pub struct Scan {
    pub memories: Vec<Memory>,
    pub problems: Vec<Problem>,
}

/// The memories of all active roots, with shadowing resolved.
#[derive(Debug, Default)]
pub struct Tree {
    /// Visible memories: project first, then global, each sorted by path.
    pub memories: Vec<Memory>,
    /// Global memories hidden by a project memory at the same path.
    pub shadowed: Vec<Memory>,
    pub problems: Vec<Problem>,
}

/// Read every memory of `roots` (project before global) and resolve shadowing.
pub fn scan_all(roots: &[&Root]) -> Tree {
    let mut tree = Tree::default();
    let mut seen = BTreeMap::new();
    for root in roots {
        let scan = scan_root(root);
        tree.problems.extend(scan.problems);
        for memory in scan.memories {
            if seen.contains_key(&memory.path) {
                tree.shadowed.push(memory);
            } else {
                seen.insert(memory.path.clone(), root.scope);
                tree.memories.push(memory);
            }
        }
    }
    tree
}

/// Read every memory file of one root.
pub fn scan_root(root: &Root) -> Scan {
    let (files, problems) = walk(root);
    let mut scan = load_files(root.scope, &files);
    scan.problems.extend(problems);
    scan.problems.sort_by(|a, b| a.path.cmp(&b.path));
    scan
}

/// A memory file found by [`walk`], with what identifies its version.
#[derive(Debug, Clone)]
pub struct FileEntry {
    pub rel: RelPath,
    pub path: PathBuf,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: u64,
}

/// List a root's memory files (sorted by category, then file name) and the
/// misplaced entries, without reading any file. Category folders are listed
/// on every core: on a warm cache the `stat` of each file is the cost.
pub fn walk(root: &Root) -> (Vec<FileEntry>, Vec<Problem>) {
    let mut problems = Vec::new();
    let Ok(entries) = fs::read_dir(&root.dir) else { return (Vec::new(), problems) };
    let mut top: Vec<fs::DirEntry> = entries.flatten().collect();
    top.sort_by_key(fs::DirEntry::file_name);
    let mut categories = Vec::new();
    for entry in top {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let kind = entry.file_type().ok();
        if name.starts_with('.') {
            continue;
        }
        if kind.is_some_and(|k| k.is_dir()) {
            if check_category(&name).is_ok() {
                categories.push((name, path));
            } else {
                problems.push(skip(
                    &path,
                    "folder name is not a valid category; its files are not read",
                ));
            }
        } else if kind.is_some_and(|k| k.is_symlink()) && path.is_dir() {
            problems.push(skip(
                &path,
                "symlinked folder is not followed; move the folder into the root",
            ));
        } else if name.ends_with(".md") && name != "ROOT.md" {
            problems.push(skip(
                &path,
                "memory is not inside a category folder; move it to <category>/",
            ));
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = categories.len().div_ceil(threads).max(1);
    let parts: Vec<(Vec<FileEntry>, Vec<Problem>)> = std::thread::scope(|s| {
        let workers: Vec<_> = categories
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut out = (Vec::new(), Vec::new());
                    for (category, dir) in part {
                        walk_category(category, dir, &mut out.0, &mut out.1);
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
    });
    let mut files = Vec::new();
    for (f, p) in parts {
        files.extend(f);
        problems.extend(p);
    }
    (files, problems)
}

/// The memory files of one category folder.
fn walk_category(
    category: &str,
    dir: &Path,
    files: &mut Vec<FileEntry>,
    problems: &mut Vec<Problem>,
) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return problems.push(skip(dir, &e.to_string())),
    };
    let mut entries: Vec<fs::DirEntry> = entries.flatten().collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            problems.push(skip(&entry.path(), "file name is not valid UTF-8"));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().ok();
        let symlink = kind.is_some_and(|k| k.is_symlink());
        if kind.is_some_and(|k| k.is_dir()) || (symlink && path.is_dir()) {
            problems.push(skip(
                &path,
                "nested folder is not scanned: memories live at <category>/<slug>.md",
            ));
            continue;
        }
        let Some(slug) = name.strip_suffix(".md") else { continue };
        if slug == "index" {
            continue;
        }
        if check_slug(slug).is_err() {
            problems.push(skip(&path, "file name is not a valid slug (A-Z a-z 0-9 . _ -, max 64)"));
            continue;
        }
        let meta = if symlink { fs::metadata(&path) } else { entry.metadata() };
        match meta {
            Ok(meta) => files.push(FileEntry {
                rel: RelPath { category: category.to_string(), slug: slug.to_string() },
                size: meta.len(),
                mtime_ns: meta.modified().map_or(0, |t| {
                    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
                }),
                path,
            }),
            Err(e) => problems.push(skip(&path, &e.to_string())),
        }
    }
}

/// Read and parse `files` on every core; memories keep the order of `files`.
pub fn load_files(scope: Scope, files: &[FileEntry]) -> Scan {
    load_files_counted(scope, files, &std::sync::atomic::AtomicUsize::new(0))
}

/// [`load_files`], advancing `done` as files are read (for a progress line).
pub fn load_files_counted(
    scope: Scope,
    files: &[FileEntry],
    done: &std::sync::atomic::AtomicUsize,
) -> Scan {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = files.len().div_ceil(threads).max(256);
    let parts: Vec<Scan> = std::thread::scope(|s| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut scan = Scan::default();
                    for f in part {
                        read_memory(scope, f.rel.clone(), &f.path, &mut scan);
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    scan
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
    });
    let mut scan = Scan::default();
    for part in parts {
        scan.memories.extend(part.memories);
        scan.problems.extend(part.problems);
    }
    scan
}

fn read_memory(scope: Scope, rel: RelPath, path: &Path, scan: &mut Scan) {
    match load(scope, rel, path) {
        Ok((memory, fields)) => {
            scan.problems.extend(fields.into_iter().map(|message| Problem {
                path: path.to_path_buf(),
                line: None,
                message,
                skipped: false,
            }));
            scan.memories.push(memory);
        }
        Err(problem) => scan.problems.push(problem),
    }
}

/// Read and parse one memory file.
pub fn load(scope: Scope, rel: RelPath, path: &Path) -> Result<(Memory, Vec<String>), Problem> {
    let mut file = fs::File::open(path).map_err(|e| skip(path, &e.to_string()))?;
    let meta = file.metadata().map_err(|e| skip(path, &e.to_string()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(skip(path, &format!("file is {} bytes, over the 1 MiB limit", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.read_to_end(&mut bytes).map_err(|e| skip(path, &e.to_string()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| skip(path, "file is not valid UTF-8; save it as UTF-8"))?;
    let doc = Document::parse(&text).map_err(|e| Problem {
        path: path.to_path_buf(),
        line: Some(e.line),
        message: e.message,
        skipped: true,
    })?;
    let mtime = meta.modified().map(epoch_ms).unwrap_or(0);
    Ok(Memory::from_document(rel, scope, &doc, mtime))
}

fn skip(path: &Path, message: &str) -> Problem {
    Problem { path: path.to_path_buf(), line: None, message: message.to_string(), skipped: true }
}
