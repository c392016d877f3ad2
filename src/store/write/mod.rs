//! Every change to a file under a root: writes, moves, removals, locks.
//!
//! Every write is a temp file in the target's own folder, then a rename, so a
//! reader sees the old file or the new one, never half of either. The target
//! must lie inside its root, and no link on the way is followed: on Unix the
//! change is made through the target's folder, opened from the root down
//! with `O_NOFOLLOW` (the `at` module), so a folder swapped for a link meanwhile
//! cannot redirect it.

#[cfg(unix)]
mod at;

pub use at::{TEMP_MAX_AGE, is_temp_name};

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::base::time;
use crate::model::relpath::RelPath;
use crate::store::files::{self, Links, MAX_FILE_BYTES};

/// The temp files interrupted writes left in the folders of `root` (the
/// root, its categories and their saved versions' folders are not walked).
pub fn leftovers(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut look = |dir: &Path| {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            if is_temp_name(&entry.file_name().to_string_lossy()) {
                out.push(entry.path());
            }
        }
    };
    look(root);
    for entry in fs::read_dir(root).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            look(&entry.path());
        }
    }
    out.sort();
    out
}

/// `target` (under `root`) split into its folder, relative to the root, and
/// its file name.
fn split<'a>(root: &Path, target: &'a Path) -> Result<(&'a Path, &'a std::ffi::OsStr)> {
    let rel = inside(root, target)?;
    let name = rel.file_name().ok_or_else(|| outside(target))?;
    Ok((rel.parent().unwrap_or(Path::new("")), name))
}

/// Write `contents` to `target` (which must lie under `root`) atomically.
#[cfg(unix)]
pub fn write_atomic(root: &Path, target: &Path, contents: &[u8]) -> Result<()> {
    let (dir, name) = split(root, target)?;
    at::Dir::open(root, dir, true)?.write(name, contents)
}

/// [`write_atomic`] in two steps, for writes that must happen together or
/// not at all: all that needs room on the disk is done now, and
/// [`Staged::commit`] only renames.
#[cfg(unix)]
pub fn stage_atomic(root: &Path, target: &Path, contents: &[u8]) -> Result<Staged> {
    let (dir, name) = split(root, target)?;
    at::Dir::open(root, dir, true)?.stage(name, contents)
}

#[cfg(unix)]
pub use at::Staged;

/// Move `from` to `to`, both under `root`, by rename; refuses to replace a
/// file and to move a link.
#[cfg(unix)]
pub fn move_file(root: &Path, from: &Path, to: &Path) -> Result<()> {
    let (from_dir, from_name) = split(root, from)?;
    let (to_dir, to_name) = split(root, to)?;
    let source = at::Dir::open(root, from_dir, false)?;
    source.rename_to(from_name, &at::Dir::open(root, to_dir, true)?, to_name)
}

/// Remove `target`, which must lie under `root` and not be a symlink.
#[cfg(unix)]
pub fn remove_file(root: &Path, target: &Path) -> Result<()> {
    let (dir, name) = split(root, target)?;
    at::Dir::open(root, dir, false)?.remove(name)
}

/// Open (creating it if needed) the lock file `target` under `root`, never
/// through a symlink and never blocking on a FIFO.
#[cfg(unix)]
pub fn lock_file(root: &Path, target: &Path) -> Result<fs::File> {
    let (dir, name) = split(root, target)?;
    at::Dir::open(root, dir, true)?.lock_file(name)
}

/// Write `contents` to `target` (which must lie under `root`) atomically.
#[cfg(not(unix))]
pub fn write_atomic(root: &Path, target: &Path, contents: &[u8]) -> Result<()> {
    stage_atomic(root, target, contents)?.commit()
}

/// A file written beside its place and not yet in it (see [`stage_atomic`]).
#[cfg(not(unix))]
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

#[cfg(not(unix))]
impl Staged {
    /// Put the content in its place, over what is there.
    pub fn commit(self) -> Result<()> {
        let target = self.target;
        self.tmp.persist(&target).map_err(|e| Error::io(&target, e.error))?;
        Ok(())
    }
}

/// [`write_atomic`] in two steps (see the unix version).
#[cfg(not(unix))]
pub fn stage_atomic(root: &Path, target: &Path, contents: &[u8]) -> Result<Staged> {
    use std::io::Write;
    let parent = prepare(root, target)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".mem-")
        .suffix(".tmp")
        .tempfile_in(&parent)
        .map_err(|e| Error::io(&parent, e))?;
    tmp.write_all(contents).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    Ok(Staged { tmp, target: target.to_path_buf() })
}

/// Move `from` to `to`, both under `root`, by rename; refuses to replace a file.
#[cfg(not(unix))]
pub fn move_file(root: &Path, from: &Path, to: &Path) -> Result<()> {
    no_links(root, inside(root, from)?)?;
    prepare(root, to)?;
    if to.symlink_metadata().is_ok() {
        return Err(Error::input(format!("{} already exists", to.display())).about(to));
    }
    fs::rename(from, to).map_err(|e| Error::io(from, e))
}

/// Remove `target`, which must lie under `root` and not be a symlink.
#[cfg(not(unix))]
pub fn remove_file(root: &Path, target: &Path) -> Result<()> {
    prepare(root, target)?;
    fs::remove_file(target).map_err(|e| Error::io(target, e))
}

/// Open (creating it if needed) the lock file `target` under `root`.
#[cfg(not(unix))]
pub fn lock_file(root: &Path, target: &Path) -> Result<fs::File> {
    prepare(root, target)?;
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target)
        .map_err(|e| Error::io(target, e))
}

/// Check `target` stays under `root`, create its folder, return the folder.
#[cfg(not(unix))]
fn prepare(root: &Path, target: &Path) -> Result<PathBuf> {
    let rel = inside(root, target)?;
    let parent = target.parent().unwrap_or(root).to_path_buf();
    no_links(root, rel)?;
    fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    Ok(parent)
}

/// The write lock of a root, held until dropped.
#[derive(Debug)]
pub struct RootLock {
    #[cfg(unix)]
    _dir: std::os::fd::OwnedFd,
}

/// Take the write lock of `root`: every command that reads a memory,
/// changes it and writes it back holds it across all three, so parallel
/// writers apply one after another and none is lost. It is an advisory
/// lock on the root folder itself (nothing is created, nothing to ignore);
/// readers never take it.
pub fn lock_root(root: &Path) -> Result<RootLock> {
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir =
            rustix::fs::open(root, flags, Mode::empty()).map_err(|e| Error::io(root, e.into()))?;
        rustix::fs::flock(&dir, FlockOperation::LockExclusive)
            .map_err(|e| Error::io(root, e.into()))?;
        Ok(RootLock { _dir: dir })
    }
    #[cfg(not(unix))]
    {
        let _ = root;
        Ok(RootLock {})
    }
}

/// Whether a command holds the write lock of `root` now (asked without
/// waiting, and without keeping it).
pub fn root_locked(root: &Path) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let Ok(dir) = rustix::fs::open(root, flags, Mode::empty()) else { return false };
        rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err()
    }
    #[cfg(not(unix))]
    {
        let _ = root;
        false
    }
}

/// The write locks of several roots, taken project first: one order for
/// every command, so two commands never wait on each other.
pub fn lock_roots(roots: &[&crate::model::roots::Root]) -> Result<Vec<RootLock>> {
    let mut roots: Vec<&crate::model::roots::Root> = roots.to_vec();
    roots.sort_by_key(|r| r.scope);
    roots.dedup_by(|a, b| a.dir == b.dir);
    roots.iter().map(|r| lock_root(&r.dir)).collect()
}

/// Check that `target` may be written: under `root`, and no symlink on the
/// way to it (the file itself included).
pub fn check_target(root: &Path, target: &Path) -> Result<()> {
    no_links(root, inside(root, target)?)
}

/// Walk down from the root along `rel`: no component may be a symlink.
fn no_links(root: &Path, rel: &Path) -> Result<()> {
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if let Ok(meta) = at.symlink_metadata()
            && meta.file_type().is_symlink()
        {
            return Err(Error::input(format!(
                "{} is a symlink; mem does not write through links",
                at.display()
            ))
            .about(at)
            .hint("replace the link with a real folder or file inside the root"));
        }
    }
    Ok(())
}

/// `target` relative to `root`, refusing anything that could climb out.
fn inside<'a>(root: &Path, target: &'a Path) -> Result<&'a Path> {
    let rel = target.strip_prefix(root).map_err(|_| outside(target))?;
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(rel)
    } else {
        Err(outside(target))
    }
}

fn outside(target: &Path) -> Error {
    Error::input(format!("refusing to write {}: it is outside the memory root", target.display()))
        .about(target)
}

/// `<root>/<category>/.<slug>.draft.md`: the draft `mem edit` keeps when
/// what was typed cannot be saved yet.
pub fn draft_path(root: &Path, rel: &RelPath) -> PathBuf {
    root.join(&rel.category).join(format!(".{}.draft.md", rel.slug))
}

/// The drafts kept in `root`'s category folders (regular files only), by path.
pub fn drafts(root: &Path) -> Vec<(RelPath, PathBuf)> {
    let mut out = Vec::new();
    for folder in fs::read_dir(root).into_iter().flatten().flatten() {
        let category = folder.file_name().to_string_lossy().into_owned();
        if category.starts_with('.') || !folder.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for entry in fs::read_dir(folder.path()).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(slug) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".draft.md"))
            else {
                continue;
            };
            let Ok(rel) = RelPath::parse(&format!("{category}/{slug}")) else { continue };
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                out.push((rel, entry.path()));
            }
        }
    }
    out.sort();
    out
}

/// `<root>/.history/<category>/<slug>/`: saved versions of one memory.
pub fn history_dir(root: &Path, rel: &RelPath) -> PathBuf {
    root.join(".history").join(&rel.category).join(&rel.slug)
}

/// `<root>/.trash/<category>/`: forgotten memories, as `<slug>.<time>.md`.
pub fn trash_dir(root: &Path, rel: &RelPath) -> PathBuf {
    root.join(".trash").join(&rel.category)
}

/// One trashed copy: `<slug>.<time>.md` in a trash folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trashed {
    pub slug: String,
    /// When it was trashed (epoch ms).
    pub at_ms: i64,
    pub path: PathBuf,
}

/// Where `rel` goes in the trash when trashed at `ms`.
pub fn trash_file(root: &Path, rel: &RelPath, ms: i64) -> PathBuf {
    trash_dir(root, rel).join(format!("{}.{}.md", rel.slug, time::stamp(ms)))
}

/// The slug and time of a trashed copy's name: `<slug>.<stamp>.md`
/// (`deploy.2026-12-03T06-47-08.497Z.md`), or `<slug>.<ms>.md` as earlier
/// versions named it.
fn trashed_name(name: &str) -> Option<(&str, i64)> {
    let stem = name.strip_suffix(".md")?;
    let at = stem.len().checked_sub(25).filter(|&at| stem.is_char_boundary(at));
    if let Some(at) = at
        && stem[at..].starts_with('.')
        && let Some(ms) = time::parse_stamp(&stem[at + 1..])
    {
        return Some((&stem[..at], ms));
    }
    let (slug, ms) = stem.rsplit_once('.')?;
    Some((slug, ms.bytes().all(|b| b.is_ascii_digit()).then(|| ms.parse().ok())??))
}

/// The trashed copies in `dir` (a `.trash/<category>/` folder): regular
/// files named `<slug>.<time>.md` only. A link, a FIFO or a folder is never a
/// copy, and a linked `dir` holds none.
pub fn trashed_in(dir: &Path) -> Vec<Trashed> {
    if !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (slug, at_ms) = trashed_name(&name)?;
            Some(Trashed { slug: slug.to_string(), at_ms, path: e.path() })
        })
        .collect()
}

/// Move a memory file to `.trash/<category>/<slug>.<time>.md` (the first
/// free millisecond from `now_ms` on); returns where it went.
pub fn trash(root: &Path, rel: &RelPath, now_ms: i64) -> Result<PathBuf> {
    let mut ms = now_ms;
    let mut to = trash_file(root, rel, ms);
    while to.symlink_metadata().is_ok() {
        ms += 1;
        to = trash_file(root, rel, ms);
    }
    move_file(root, &rel.under(root), &to)?;
    Ok(to)
}

/// The time and number of a saved version's file name:
/// `<stamp>.md` or `<stamp>-<n>.md` (`2026-12-03T06-47-08.497Z-2.md`), or
/// `<ms>.md` / `<ms>-<n>.md` as earlier versions named them.
pub fn version_name(name: &str) -> Option<(i64, u32)> {
    let stem = name.strip_suffix(".md")?;
    let numbered = stem
        .rsplit_once('-')
        .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|(t, n)| Some((time::parse_stamp(t)?, n.parse().ok()?)));
    numbered.or_else(|| Some((time::parse_stamp(stem)?, 1)))
}

/// Save `text`, the version of `rel` last updated at `updated_ms`, under
/// `.history/` before it is replaced, named by that time
/// ([`time::stamp`]); returns the saved file.
pub fn save_history(root: &Path, rel: &RelPath, updated_ms: i64, text: &[u8]) -> Result<PathBuf> {
    let dir = history_dir(root, rel);
    let stamp = time::stamp(updated_ms);
    let mut target = dir.join(format!("{stamp}.md"));
    let mut n = 1;
    while target.symlink_metadata().is_ok() {
        if files::read(root, &target, Links::Never, MAX_FILE_BYTES).is_ok_and(|e| e == text) {
            return Ok(target);
        }
        n += 1;
        target = dir.join(format!("{stamp}-{n}.md"));
    }
    write_atomic(root, &target, text)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("facts/a.md");
        write_atomic(tmp.path(), &target, b"one").unwrap();
        write_atomic(tmp.path(), &target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(tmp.path().join("facts")).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file left behind");
    }

    #[test]
    fn a_staged_write_lands_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/x.md");
        write_atomic(dir.path(), &target, b"old").unwrap();
        let names = || {
            let mut n: Vec<_> = fs::read_dir(dir.path().join("a"))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            n.sort();
            n
        };
        let dropped = stage_atomic(dir.path(), &target, b"dropped").unwrap();
        assert_eq!(names().len(), 2, "the staged text waits beside its place");
        drop(dropped);
        assert_eq!(names(), ["x.md"]);
        assert_eq!(fs::read(&target).unwrap(), b"old");
        stage_atomic(dir.path(), &target, b"new").unwrap().commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names(), ["x.md"]);
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        assert!(write_atomic(&root, &tmp.path().join("x.md"), b"x").is_err());
        assert!(write_atomic(&root, &root.join("../x.md"), b"x").is_err());
        assert!(!tmp.path().join("x.md").exists());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinked_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, elsewhere) = (tmp.path().join("root"), tmp.path().join("elsewhere"));
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("facts")).unwrap();
        let err = write_atomic(&root, &root.join("facts/a.md"), b"x").unwrap_err();
        assert!(err.message.contains("symlink"), "{err}");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
