//! What identifies a file's content without reading it, for a process
//! that keeps what it parsed or checked of a file between uses.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::store::files::{self, Links, Refusal};

/// What identifies an open file's content without reading it: device,
/// inode, size, and modification and change times to the nanosecond. An
/// atomic replace makes a new inode; a write in place moves the change
/// time, which no tool can put back. None where the platform has no inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity([i64; 7]);

pub fn identity(file: &File) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata().ok()?;
        Some(Identity([
            m.dev() as i64,
            m.ino() as i64,
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ]))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

/// What a process parsed of a few files, each kept while its file keeps
/// its path and [`Identity`]: the last [`Parsed::KEPT`] files.
pub struct Parsed<T> {
    last: Mutex<Vec<(PathBuf, Identity, Arc<T>)>>,
}

impl<T> Parsed<T> {
    /// How many files are kept; the oldest goes first.
    pub const KEPT: usize = 8;

    pub const fn new() -> Self {
        Parsed { last: Mutex::new(Vec::new()) }
    }

    /// What was parsed of `file` while its identity was `id`, if kept.
    fn get(&self, file: &Path, id: Identity) -> Option<Arc<T>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.iter().find(|(p, i, _)| p == file && *i == id).map(|(_, _, v)| Arc::clone(v))
    }

    /// What `parse` makes of `file` under `root` (at most `limit` bytes,
    /// never through a link): kept from an earlier read while the file is
    /// the same, else read, parsed and kept.
    pub fn read<E>(
        &self,
        (root, file): (&Path, &Path),
        limit: u64,
        parse: impl FnOnce(&[u8]) -> Result<T, E>,
    ) -> Result<Arc<T>, Unread<E>> {
        let (open, size) = files::open(root, file, Links::Never).map_err(Unread::Refused)?;
        let id = identity(&open);
        if let Some(kept) = id.and_then(|id| self.get(file, id)) {
            return Ok(kept);
        }
        let bytes = files::read_open(open, size, limit).map_err(Unread::Refused)?;
        let value = Arc::new(parse(&bytes).map_err(Unread::Unparsed)?);
        if let Some(id) = id {
            self.put(file.to_path_buf(), id, Arc::clone(&value));
        }
        Ok(value)
    }

    /// Keep `value` as what `file` under `root` holds now, having just
    /// written it there, so the next read need not parse it again. The
    /// caller makes sure no other writer came between (a lock), or that
    /// any file there says the same (derived data).
    pub fn wrote(&self, (root, file): (&Path, &Path), value: Arc<T>) {
        let id = files::open(root, file, Links::Never).ok().and_then(|(open, _)| identity(&open));
        if let Some(id) = id {
            self.put(file.to_path_buf(), id, value);
        }
    }

    fn put(&self, file: PathBuf, id: Identity, value: Arc<T>) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.retain(|(p, _, _)| *p != file);
        if last.len() == Self::KEPT {
            last.remove(0);
        }
        last.push((file, id, value));
    }
}

/// Why [`Parsed::read`] has nothing.
#[derive(Debug)]
pub enum Unread<E> {
    /// The file could not be opened or read (missing, a link, too big…).
    Refused(Refusal),
    /// What `parse` said of its bytes.
    Unparsed(E),
}

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Self::new()
    }
}
