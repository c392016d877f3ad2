//! git as mem uses it: running it, the mark of the hook `mem hook install`
//! adds, and what a commit will hold: a memory root as git's index has it,
//! exported to a temporary folder, so `mem compile --check --staged` (the
//! pre-commit hook) judges the staged files, not the working tree.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use crate::base::error::{Error, Result};
use crate::model::roots::Root;

/// The line that marks a hook as mem's own (`mem hook install` writes
/// it, `mem hook uninstall` and `mem doctor` look for it).
pub const HOOK_MARK: &str = "# Installed by `mem hook install`; `mem hook uninstall` removes it.";

/// Run git in `dir`; stdout trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git").current_dir(dir).args(args).output().map_err(|e| {
        Error::input(format!("cannot run git: {e}")).hint("install git and make sure it is on PATH")
    })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(Error::input(format!("git {}: {why}", args.join(" ")))
            .hint("run this inside a git repository"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A root's staged files in a temporary folder (removed when dropped).
pub struct Staged {
    /// The root as staged: its `dir` is inside the temporary folder.
    pub root: Root,
    _dir: tempfile::TempDir,
}

/// Whether `dir` is inside a git work tree (so a commit can hold it).
pub fn in_repository(dir: &std::path::Path) -> bool {
    git(dir, &["rev-parse", "--is-inside-work-tree"]).is_ok_and(|out| out == "true")
}

/// Export the staged files of `root` (regular files only: a staged link is
/// left out, as the hook's checks never follow one out of the root).
pub fn staged(root: &Root) -> Result<Staged> {
    let top = PathBuf::from(git(&root.dir, &["rev-parse", "--show-toplevel"])?);
    let canonical = |p: &Path| p.canonicalize().map_err(|e| Error::io(p, e));
    let rel = canonical(&root.dir)?.strip_prefix(canonical(&top)?).map(Path::to_path_buf).map_err(
        |_| {
            Error::input(format!("{} is not inside its git repository", root.dir.display()))
                .about(&root.dir)
        },
    )?;
    let rel_text = rel.to_string_lossy().into_owned();
    let listing = git(&top, &["ls-files", "-z", "--stage", "--", &rel_text])?;
    let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("a temporary folder"), e))?;
    let staged_root = dir.path().join("root");
    std::fs::create_dir_all(&staged_root).map_err(|e| Error::io(&staged_root, e))?;
    // `<mode> <object> <stage>\t<path>` per entry; only stage 0 and regular
    // files (a conflicted path is stale whatever it holds).
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        let Some((head, path)) = entry.split_once('\t') else { continue };
        let mut fields = head.split(' ');
        let (mode, object, stage) = (fields.next(), fields.next(), fields.next());
        if !matches!(mode, Some("100644" | "100755")) || stage != Some("0") {
            continue;
        }
        let Ok(inner) = Path::new(path).strip_prefix(&rel) else { continue };
        // Paths come from git; still, nothing is written outside the folder.
        if inner.components().any(|c| !matches!(c, Component::Normal(_))) {
            continue;
        }
        files.push((object.unwrap_or_default().to_string(), staged_root.join(inner)));
    }
    for ((_, target), content) in files.iter().zip(blobs(&top, &files)?) {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(target, content).map_err(|e| Error::io(target, e))?;
    }
    Ok(Staged { root: Root { scope: root.scope, dir: staged_root }, _dir: dir })
}

/// The contents of the staged objects of `files`, in order, read through
/// one `git cat-file --batch`.
fn blobs(top: &Path, files: &[(String, PathBuf)]) -> Result<Vec<Vec<u8>>> {
    let cannot = |e: std::io::Error| {
        Error::input(format!("cannot run git cat-file: {e}"))
            .hint("install git and make sure it is on PATH")
    };
    let mut child = Command::new("git")
        .current_dir(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(cannot)?;
    let mut stdin = child.stdin.take().expect("piped");
    let names: String = files.iter().map(|(object, _)| format!("{object}\n")).collect();
    // Written on its own thread: git answers while it reads.
    let writer = std::thread::spawn(move || stdin.write_all(names.as_bytes()));
    let mut out = Vec::new();
    child.stdout.take().expect("piped").read_to_end(&mut out).map_err(cannot)?;
    writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)).map_err(cannot)?;
    child.wait().map_err(cannot)?;
    let damaged = || Error::input("git cat-file gave an answer mem cannot read");
    let mut at = &out[..];
    let mut contents = Vec::with_capacity(files.len());
    for _ in files {
        let end = at.iter().position(|&b| b == b'\n').ok_or_else(damaged)?;
        let header = std::str::from_utf8(&at[..end]).map_err(|_| damaged())?;
        let size: usize =
            header.rsplit(' ').next().and_then(|s| s.parse().ok()).ok_or_else(damaged)?;
        let body = at.get(end + 1..end + 1 + size).ok_or_else(damaged)?;
        contents.push(body.to_vec());
        at = at.get(end + 2 + size..).unwrap_or(&[]);
    }
    Ok(contents)
}
