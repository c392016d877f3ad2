//! Changes made through open folders (`openat`, `renameat`, `unlinkat`):
//! the folder of a target is opened from the root down, one component at a
//! time with `O_NOFOLLOW`, and the change is made relative to that open
//! folder. A folder swapped for a link after it was opened cannot redirect
//! the change out of the root.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use crate::base::error::{Error, Result};

/// A folder under a root, open, and the path it was opened as.
/// How old a temp file of an interrupted write must be before the next
/// write in its folder removes it.
pub const TEMP_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(300);

/// True for the names of mem's temp files (`.mem-<random>.tmp`).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(".mem-") && name.ends_with(".tmp")
}

pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

fn link_error(at: &Path) -> Error {
    Error::input(format!(
        "{} is a symlink; mem does not write through links",
        crate::base::text::one_line(&at.display().to_string())
    ))
    .about(at)
    .hint("replace the link with a real folder or file inside the root")
}

/// What a path that is not a regular file is, in words.
fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Directory => "a folder",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Symlink => "a symlink",
        _ => "of an unknown kind",
    }
}

fn not_regular(at: &Path, kind: FileType) -> Error {
    Error::input(format!(
        "{} is {}, not a regular file; mem writes only regular files and replaces nothing else",
        crate::base::text::one_line(&at.display().to_string()),
        kind_name(kind)
    ))
    .about(at)
    .hint("choose another path, or move that one out of the way")
}

fn io(path: &Path, e: Errno) -> Error {
    Error::io(path, e.into())
}

impl Dir {
    /// Open `root/rel`, creating missing folders when `create`; no link is
    /// followed below the root.
    pub fn open(root: &Path, rel: &Path, create: bool) -> Result<Dir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if create {
            std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        }
        let mut fd = rustix::fs::open(root, flags, Mode::empty()).map_err(|e| io(root, e))?;
        let mut path = root.to_path_buf();
        for part in rel.iter() {
            path.push(part);
            let opened =
                match rustix::fs::openat(&fd, part, flags | OFlags::NOFOLLOW, Mode::empty()) {
                    Err(Errno::NOENT) if create => {
                        match rustix::fs::mkdirat(&fd, part, Mode::from_raw_mode(0o755)) {
                            Ok(()) | Err(Errno::EXIST) => {}
                            Err(e) => return Err(io(&path, e)),
                        }
                        rustix::fs::openat(&fd, part, flags | OFlags::NOFOLLOW, Mode::empty())
                    }
                    other => other,
                };
            fd = match opened {
                Ok(fd) => fd,
                Err(Errno::LOOP | Errno::NOTDIR | Errno::MLINK) => return Err(link_error(&path)),
                Err(e) => return Err(io(&path, e)),
            };
        }
        Ok(Dir { fd, path })
    }

    fn at(&self, name: &std::ffi::OsStr) -> PathBuf {
        self.path.join(name)
    }

    /// The type and mode of `name` in this folder, not following a link.
    fn stat(&self, name: &std::ffi::OsStr) -> Result<Option<(FileType, u32)>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some((FileType::from_raw_mode(st.st_mode), st.st_mode & 0o7777))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io(&self.at(name), e)),
        }
    }

    /// Refuse when `name` is a symlink.
    fn no_link(&self, name: &std::ffi::OsStr) -> Result<Option<(FileType, u32)>> {
        let found = self.stat(name)?;
        if found.is_some_and(|(t, _)| t == FileType::Symlink) {
            return Err(link_error(&self.at(name)));
        }
        Ok(found)
    }

    /// Refuse when `name` is there and is not a regular file: a folder, a
    /// FIFO, a socket or a device is never replaced by a write.
    fn regular_or_none(&self, name: &std::ffi::OsStr) -> Result<Option<(FileType, u32)>> {
        let found = self.no_link(name)?;
        if let Some((kind, _)) = found
            && kind != FileType::RegularFile
        {
            return Err(not_regular(&self.at(name), kind));
        }
        Ok(found)
    }

    /// Replace `name` with `contents` atomically: a new file beside it, then
    /// a rename over it. A link at `name` is refused, not replaced.
    pub fn write(&self, name: &std::ffi::OsStr, contents: &[u8]) -> Result<()> {
        let tmp = self.fill(name, contents)?;
        let done =
            rustix::fs::renameat(&self.fd, &tmp, &self.fd, name).map_err(|e| io(&self.at(name), e));
        if done.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &tmp, AtFlags::empty());
        } else {
            self.sweep();
        }
        done
    }

    /// `contents` in a synced temp file beside `name` (with its mode), whose
    /// name is returned; nothing is left behind on failure.
    fn fill(&self, name: &std::ffi::OsStr, contents: &[u8]) -> Result<std::ffi::OsString> {
        let mode = self.regular_or_none(name)?.map_or(0o644, |(_, mode)| mode);
        let (tmp, file) = self.temp(mode)?;
        let done = (|| {
            let mut file = file;
            // Named by the file being written: the temp file is ours, not the user's.
            file.write_all(contents).map_err(|e| Error::io(&self.at(name), e))?;
            file.sync_all().map_err(|e| Error::io(&self.at(name), e))
        })();
        match done {
            Ok(()) => Ok(tmp),
            Err(e) => {
                let _ = rustix::fs::unlinkat(&self.fd, &tmp, AtFlags::empty());
                Err(e)
            }
        }
    }

    /// [`Dir::write`] in two steps: the content is written now, beside its
    /// place; [`Staged::commit`] puts it there by a rename, which needs no
    /// room on the disk. Dropped uncommitted, it is removed.
    pub fn stage(self, name: &std::ffi::OsStr, contents: &[u8]) -> Result<Staged> {
        let tmp = self.fill(name, contents)?;
        Ok(Staged { dir: self, tmp, name: name.to_os_string(), done: false })
    }

    /// Remove temp files an interrupted write left here (a process killed
    /// between creating its temp file and renaming it) once they are old
    /// enough that no running write can still own them.
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.path) else { return };
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !is_temp_name(&name.to_string_lossy()) {
                continue;
            }
            let Ok(st) = rustix::fs::statat(&self.fd, &name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let modified = std::time::UNIX_EPOCH
                + std::time::Duration::from_secs(u64::try_from(st.st_mtime).unwrap_or(0));
            let old = now.duration_since(modified).is_ok_and(|age| age >= TEMP_MAX_AGE);
            if old && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                let _ = rustix::fs::unlinkat(&self.fd, &name, AtFlags::empty());
            }
        }
    }

    /// A new, empty temp file in this folder, named `.mem-<random>.tmp`.
    fn temp(&self, mode: u32) -> Result<(std::ffi::OsString, File)> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        for attempt in 0u64.. {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(attempt);
            h.write_u32(std::process::id());
            let name = std::ffi::OsString::from(format!(".mem-{:016x}.tmp", h.finish()));
            match rustix::fs::openat(&self.fd, &name, flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => {
                    let file = File::from(fd);
                    // The mode asked for, whatever the umask let through.
                    let _ = rustix::fs::fchmod(&file, Mode::from_raw_mode(mode));
                    return Ok((name, file));
                }
                Err(Errno::EXIST) if attempt < 64 => continue,
                Err(e) => return Err(io(&self.at(&name), e)),
            }
        }
        unreachable!("the loop returns")
    }

    /// Move `name` to `to_name` in `to`, refusing to replace anything there
    /// and to move a link.
    pub fn rename_to(
        &self,
        name: &std::ffi::OsStr,
        to: &Dir,
        to_name: &std::ffi::OsStr,
    ) -> Result<()> {
        if self.no_link(name)?.is_none() {
            return Err(Error::not_found(format!(
                "{}: no such file",
                crate::base::text::one_line(&self.at(name).display().to_string())
            ))
            .about(self.at(name)));
        }
        if to.stat(to_name)?.is_some() {
            return Err(Error::input(format!("{} already exists", to.at(to_name).display()))
                .about(to.at(to_name)));
        }
        match rustix::fs::renameat_with(&self.fd, name, &to.fd, to_name, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => {
                Err(Error::input(format!("{} already exists", to.at(to_name).display()))
                    .about(to.at(to_name)))
            }
            // A filesystem without RENAME_NOREPLACE: checked just above.
            Err(Errno::INVAL | Errno::NOSYS) => {
                rustix::fs::renameat(&self.fd, name, &to.fd, to_name)
                    .map_err(|e| io(&self.at(name), e))
            }
            Err(e) => Err(io(&self.at(name), e)),
        }
    }

    /// Remove the file `name`, refusing a link.
    pub fn remove(&self, name: &std::ffi::OsStr) -> Result<()> {
        self.no_link(name)?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(|e| io(&self.at(name), e))
    }

    /// Open (creating it if needed) the regular file `name` for locking,
    /// never through a link and never blocking on a FIFO.
    pub fn lock_file(&self, name: &std::ffi::OsStr) -> Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd =
            rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644)).map_err(|e| {
                match e {
                    Errno::LOOP | Errno::MLINK => link_error(&self.at(name)),
                    e => io(&self.at(name), e),
                }
            })?;
        let file = File::from(fd);
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(Error::input(format!("{} is not a regular file", self.at(name).display()))
                .about(self.at(name))
                .hint("remove it; mem creates its lock files itself"));
        }
        Ok(file)
    }
}

/// A file written beside its place and not yet in it (see
/// [`stage_atomic`](crate::store::write::stage_atomic)).
pub struct Staged {
    dir: Dir,
    tmp: std::ffi::OsString,
    name: std::ffi::OsString,
    done: bool,
}

impl Staged {
    /// Put the content in its place, over what is there.
    pub fn commit(mut self) -> Result<()> {
        let d = &self.dir;
        rustix::fs::renameat(&d.fd, &self.tmp, &d.fd, &self.name)
            .map_err(|e| io(&d.at(&self.name), e))?;
        self.done = true;
        d.sweep();
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = rustix::fs::unlinkat(&self.dir.fd, &self.tmp, AtFlags::empty());
        }
    }
}
