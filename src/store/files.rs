//! What may be read under a root, and how: the one way `mem` opens a file
//! that lives in a root (memories, `ROOT.md`, `index.md`, saved versions,
//! the state and cache files).
//!
//! - Only regular files are read. A FIFO, socket or device is refused
//!   without blocking: the file is opened with `O_NONBLOCK` and its type is
//!   checked with `fstat` on the opened descriptor, so a swap between a
//!   listing and the open cannot hang the process.
//! - A symlink is followed only when asked ([`Links::Inside`]) and only when
//!   its target resolves inside the same root; cache and state files are
//!   never read through a link ([`Links::Never`]). Every folder between the
//!   root and the file is opened with `O_NOFOLLOW`, one at a time.
//! - Every read is bounded before it allocates: a file over the limit costs
//!   at most limit + 1 bytes of reading, whatever size it claims.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The largest memory that is read or written.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The largest `ROOT.md` or `index.md` that is read or written: their
/// generated regions hold a line per memory or trigger, so they grow with
/// the tree (a 100,000-memory tree's `ROOT.md` is a few MiB).
pub const MAX_GENERATED_BYTES: u64 = 64 << 20;

/// The read limit for `path`: [`MAX_GENERATED_BYTES`] for `ROOT.md` and
/// `index.md`, [`MAX_FILE_BYTES`] for anything else.
pub fn limit(path: &Path) -> u64 {
    match path.file_name().and_then(|n| n.to_str()) {
        Some("ROOT.md" | "index.md") => MAX_GENERATED_BYTES,
        _ => MAX_FILE_BYTES,
    }
}

/// Whether a symlink on the way to a file may be followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed when its target resolves inside the same root (memories,
    /// `ROOT.md`, `index.md`).
    Inside,
    /// Never followed (cache, state, saved versions, the trash).
    Never,
}

/// Why a file under a root was not read.
#[derive(Debug)]
pub enum Refusal {
    /// Nothing is there.
    Missing,
    /// A symlink whose target lies outside the root (or does not exist).
    Outside { target: Option<PathBuf> },
    /// A symlink where none is followed.
    Link,
    /// Not a regular file: `folder`, `FIFO`, `socket`, `device`.
    NotRegular(&'static str),
    /// Larger than the limit, in bytes (at least limit + 1).
    TooBig { limit: u64 },
    /// The system refused.
    Io(io::Error),
}

impl Refusal {
    /// The target a refused symlink points at, when there is one.
    pub fn target(&self) -> Option<&Path> {
        match self {
            Refusal::Outside { target } => target.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Missing => f.write_str("no such file"),
            Refusal::Outside { target: Some(t) } => write!(
                f,
                "symlink to {} leads outside the memory root; it is not read",
                crate::base::text::one_line(&t.display().to_string())
            ),
            Refusal::Outside { target: None } => {
                f.write_str("symlink whose target does not exist; it is not read")
            }
            Refusal::Link => f.write_str("is a symlink, and mem does not follow links here"),
            Refusal::NotRegular(kind) => {
                write!(f, "is a {kind}, not a regular file; it is not read")
            }
            Refusal::TooBig { limit } => {
                write!(f, "file is over the {} limit; it is not read", human_bytes(*limit))
            }
            Refusal::Io(e) => write!(f, "{e}"),
        }
    }
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n}-byte")
    }
}

/// Open the regular file at `path`, which must lie under `root`, as
/// `links` allows. Returns the file and its size.
pub fn open(root: &Path, path: &Path, links: Links) -> Result<(File, u64), Refusal> {
    Folders::default().open(root, path, links)
}

/// [`open`] for many files in a row: the folder of the last file stays
/// open, so each file of one folder costs one `openat`.
#[derive(Debug, Default)]
pub struct Folders {
    #[cfg(unix)]
    last: Option<(PathBuf, std::os::fd::OwnedFd)>,
}

impl Folders {
    /// [`open`], through the folder kept from the last call when it is the same.
    pub fn open(&mut self, root: &Path, path: &Path, links: Links) -> Result<(File, u64), Refusal> {
        let rel = path.strip_prefix(root).map_err(|_| Refusal::Outside { target: None })?;
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(Refusal::Outside { target: Some(path.to_path_buf()) });
        }
        match self.open_nofollow(root, rel) {
            Err(Refusal::Link) if links == Links::Inside => open_link(root, path),
            other => other,
        }
    }

    /// Open `root/rel` one component at a time, following no link on the way.
    #[cfg(unix)]
    fn open_nofollow(&mut self, root: &Path, rel: &Path) -> Result<(File, u64), Refusal> {
        let folder = root.join(rel.parent().unwrap_or(Path::new("")));
        if self.last.as_ref().is_none_or(|(p, _)| *p != folder) {
            self.last = None;
            self.last = Some((folder, open_folder(root, rel)?));
        }
        let (Some((_, dir)), Some(name)) = (&self.last, rel.file_name()) else {
            return Err(Refusal::Missing);
        };
        open_in(dir, name)
    }

    #[cfg(not(unix))]
    fn open_nofollow(&mut self, root: &Path, rel: &Path) -> Result<(File, u64), Refusal> {
        open_nofollow(root, rel)
    }
}

/// Read the whole regular file at `path` (see [`open`]), refusing one of
/// more than `limit` bytes after reading at most `limit + 1`.
pub fn read(root: &Path, path: &Path, links: Links, limit: u64) -> Result<Vec<u8>, Refusal> {
    let (file, size) = open(root, path, links)?;
    read_open(file, size, limit)
}

/// [`read`], as UTF-8 text; `Err(None)` when it is not UTF-8.
pub fn read_text(
    root: &Path,
    path: &Path,
    links: Links,
    limit: u64,
) -> Result<String, Option<Refusal>> {
    let bytes = read(root, path, links, limit).map_err(Some)?;
    String::from_utf8(bytes).map_err(|_| None)
}

/// The text of a memory, `ROOT.md` or `index.md` for a command: `None`
/// when there is no such file, an error naming the file and the fix when it
/// cannot be read ([`Links::Inside`], at most [`limit`] bytes).
pub fn text(root: &Path, path: &Path) -> crate::base::error::Result<Option<String>> {
    use crate::base::error::Error;
    match read_text(root, path, Links::Inside, limit(path)) {
        Ok(text) => Ok(Some(text)),
        Err(Some(Refusal::Missing)) => Ok(None),
        Err(Some(why)) => {
            let hint = match why {
                Refusal::TooBig { .. } => {
                    "shorten it: keep the details in a document in the repository and link to it"
                }
                Refusal::Io(_) => "check the file's permissions",
                _ => "replace it with a regular file inside the memory root",
            };
            Err(Error::input(format!("{}: {why}", path.display())).about(path).hint(hint))
        }
        Err(None) => Err(Error::input(format!("{} is not valid UTF-8", path.display()))
            .about(path)
            .hint("save it as UTF-8; mem left it as it is")),
    }
}

/// Read an opened file of claimed `size`, at most `limit` bytes.
pub fn read_open(file: File, size: u64, limit: u64) -> Result<Vec<u8>, Refusal> {
    if size > limit {
        return Err(Refusal::TooBig { limit });
    }
    let mut bytes = Vec::with_capacity(size as usize + 1);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(Refusal::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::TooBig { limit });
    }
    Ok(bytes)
}

/// What a non-regular file is, for a message.
pub fn kind(t: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "folder"
    } else if t.is_symlink() {
        "symlink"
    } else if t.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// Where a symlink at `path` (under `root`) leads, if that is a regular file
/// inside the root: its canonical path and metadata. Nothing is opened.
pub fn link_target(root: &Path, path: &Path) -> Result<(PathBuf, fs::Metadata), Refusal> {
    let target = match fs::canonicalize(path) {
        Ok(t) => t,
        Err(_) => return Err(Refusal::Outside { target: fs::read_link(path).ok() }),
    };
    let root = fs::canonicalize(root).map_err(Refusal::Io)?;
    if !target.starts_with(&root) || target == root {
        return Err(Refusal::Outside { target: Some(target) });
    }
    let meta = fs::symlink_metadata(&target).map_err(Refusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refusal::NotRegular(kind(meta.file_type())));
    }
    Ok((target, meta))
}

/// A symlink's target, checked, then opened with no link followed.
fn open_link(root: &Path, path: &Path) -> Result<(File, u64), Refusal> {
    let (target, _) = link_target(root, path)?;
    let canonical_root = fs::canonicalize(root).map_err(Refusal::Io)?;
    let rel = target
        .strip_prefix(&canonical_root)
        .map_err(|_| Refusal::Outside { target: Some(target.clone()) })?;
    // The target is a real path: a link appearing on it since is refused.
    open_nofollow(&canonical_root, rel).map_err(|e| match e {
        Refusal::Link => Refusal::Outside { target: Some(target.clone()) },
        other => other,
    })
}

/// [`Folders::open_nofollow`] once.
#[cfg(unix)]
fn open_nofollow(root: &Path, rel: &Path) -> Result<(File, u64), Refusal> {
    Folders::default().open_nofollow(root, rel)
}

#[cfg(unix)]
fn refusal(e: rustix::io::Errno) -> Refusal {
    use rustix::io::Errno;
    match e {
        Errno::NOENT => Refusal::Missing,
        Errno::LOOP | Errno::NOTDIR | Errno::MLINK => Refusal::Link,
        e => Refusal::Io(e.into()),
    }
}

/// The folder holding `root/rel`, opened from the root down with no link
/// followed on the way (the root itself may be one).
#[cfg(unix)]
fn open_folder(root: &Path, rel: &Path) -> Result<std::os::fd::OwnedFd, Refusal> {
    use rustix::fs::{Mode, OFlags};
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::NOENT => Refusal::Missing,
        e => Refusal::Io(e.into()),
    })?;
    for part in rel.parent().into_iter().flat_map(Path::iter) {
        dir = rustix::fs::openat(&dir, part, dir_flags | OFlags::NOFOLLOW, Mode::empty())
            .map_err(refusal)?;
    }
    Ok(dir)
}

/// The regular file `name` in the open folder `dir`, not through a link,
/// without blocking.
#[cfg(unix)]
fn open_in(dir: &std::os::fd::OwnedFd, name: &std::ffi::OsStr) -> Result<(File, u64), Refusal> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd =
        rustix::fs::openat(dir, name, flags | OFlags::CLOEXEC, Mode::empty()).map_err(refusal)?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(Refusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refusal::NotRegular(kind(meta.file_type())));
    }
    Ok((file, meta.len()))
}

#[cfg(not(unix))]
fn open_nofollow(root: &Path, rel: &Path) -> Result<(File, u64), Refusal> {
    let mut at = root.to_path_buf();
    for part in rel {
        at.push(part);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err(Refusal::Link),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Refusal::Missing),
            Err(e) => return Err(Refusal::Io(e)),
        }
    }
    let file = File::open(&at).map_err(Refusal::Io)?;
    let meta = file.metadata().map_err(Refusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refusal::NotRegular(kind(meta.file_type())));
    }
    Ok((file, meta.len()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("facts")).unwrap();
        fs::write(root.join("facts/a.md"), "a").unwrap();
        fs::write(tmp.path().join("secret"), "s").unwrap();
        (tmp, root)
    }

    #[test]
    fn reads_regular_files_and_links_that_stay_inside() {
        let (_tmp, root) = root();
        symlink("a.md", root.join("facts/b.md")).unwrap();
        assert_eq!(read(&root, &root.join("facts/a.md"), Links::Never, 10).unwrap(), b"a");
        assert_eq!(read(&root, &root.join("facts/b.md"), Links::Inside, 10).unwrap(), b"a");
        assert!(matches!(
            read(&root, &root.join("facts/b.md"), Links::Never, 10),
            Err(Refusal::Link)
        ));
    }

    #[test]
    fn refuses_links_out_of_the_root_and_through_folders() {
        let (tmp, root) = root();
        symlink(tmp.path().join("secret"), root.join("facts/s.md")).unwrap();
        let err = read(&root, &root.join("facts/s.md"), Links::Inside, 10).unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
        assert_eq!(err.target(), Some(tmp.path().join("secret").canonicalize().unwrap().as_path()));
        symlink(tmp.path(), root.join("notes")).unwrap();
        assert!(read(&root, &root.join("notes/secret"), Links::Inside, 10).is_err());
        assert!(read(&root, &root.join("../secret"), Links::Inside, 10).is_err());
        symlink("/nowhere/at/all", root.join("facts/d.md")).unwrap();
        assert!(matches!(
            read(&root, &root.join("facts/d.md"), Links::Inside, 10),
            Err(Refusal::Outside { .. })
        ));
    }

    #[test]
    fn reads_are_bounded_whatever_the_size() {
        let (_tmp, root) = root();
        fs::write(root.join("facts/big.md"), vec![b'x'; 11]).unwrap();
        assert!(matches!(
            read(&root, &root.join("facts/big.md"), Links::Never, 10),
            Err(Refusal::TooBig { limit: 10 })
        ));
        assert_eq!(read(&root, &root.join("facts/big.md"), Links::Never, 11).unwrap().len(), 11);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_tmp, root) = root();
        let fifo = root.join("facts/f.md");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let err = read(&root, &fifo, Links::Inside, 10).unwrap_err();
        assert!(matches!(err, Refusal::NotRegular("FIFO")), "{err}");
    }
}
