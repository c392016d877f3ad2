//! The start of a file as bytes, mapped into memory where the platform allows.
//!
//! The fixed-width columns at the start of the index cache are read this
//! way: a recall checks them whole but uses a few values of each, and
//! mapping costs neither a copy nor a page of fresh memory per page read
//! (the kernel maps the page-cache pages already there).
//!
//! Mapping is sound here because `mem` never writes a cache file in place:
//! a new one is written beside it and renamed over it
//! ([`write_atomic`](crate::write::write_atomic)), so a mapped file keeps its
//! bytes until it is unmapped. (Another program truncating a cache file while
//! it is mapped would make reading it fault; caches are `mem`'s own files.)

use std::fs::File;
use std::io;
use std::ops::Deref;

/// The first bytes of a file, read-only.
pub struct Mapped {
    inner: Inner,
}

enum Inner {
    #[cfg(unix)]
    Map(map::Map),
    Read(Vec<u8>),
}

impl Mapped {
    /// The first `len` bytes of `file`; an error when it is shorter.
    pub fn open(file: &File, len: usize) -> io::Result<Mapped> {
        if file.metadata()?.len() < len as u64 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        #[cfg(unix)]
        if len > 0 {
            return Ok(Mapped { inner: Inner::Map(map::Map::new(file, len)?) });
        }
        let mut bytes = vec![0; len];
        crate::rank::packed::read_at(file, &mut bytes, 0)?;
        Ok(Mapped { inner: Inner::Read(bytes) })
    }
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.inner {
            #[cfg(unix)]
            Inner::Map(map) => map.bytes(),
            Inner::Read(bytes) => bytes,
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod map {
    use std::fs::File;
    use std::io;
    use std::ptr::NonNull;

    use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};

    /// A private, read-only mapping of a file's first `len` bytes.
    pub struct Map {
        ptr: NonNull<u8>,
        len: usize,
    }

    // SAFETY: the mapping is read-only and owned: sharing `&[u8]` views of
    // it across threads is as safe as sharing a `Vec<u8>`.
    unsafe impl Send for Map {}
    unsafe impl Sync for Map {}

    impl Map {
        /// Map `len` (> 0) bytes of `file`.
        pub fn new(file: &File, len: usize) -> io::Result<Map> {
            // SAFETY: a fresh mapping chosen by the kernel aliases nothing;
            // it is read-only and private, and the file is only ever
            // replaced by a rename, never changed in place (module docs).
            let ptr = unsafe {
                mmap(std::ptr::null_mut(), len, ProtFlags::READ, MapFlags::PRIVATE, file, 0)
            }?;
            let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap"))?;
            Ok(Map { ptr, len })
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `ptr` points at `len` readable bytes for as long as
            // `self` lives, and nothing writes them (see `new`).
            unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`; the borrow checker ties
            // every view to `&self`, so none outlives it.
            let _ = unsafe { munmap(self.ptr.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_file_reads_as_its_bytes_and_outlives_a_rename_over_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, "部署 deploy").unwrap();
        let open = |len| Mapped::open(&File::open(&path).unwrap(), len);
        let (whole, start) = (open(13).unwrap(), open(6).unwrap());
        // Replaced the way mem replaces its caches: the mapping keeps the old bytes.
        std::fs::write(dir.path().join("new"), "other").unwrap();
        std::fs::rename(dir.path().join("new"), &path).unwrap();
        assert_eq!(&*whole, "部署 deploy".as_bytes());
        assert_eq!(&*start, "部署".as_bytes());

        assert!(open(6).is_err(), "longer than the file");
        assert!(open(0).unwrap().is_empty());
    }
}
