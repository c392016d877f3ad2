//! What identifies a file's content without reading it, for a process
//! that keeps what it parsed or checked of a file between uses.

use std::fs::File;

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
