//! The start of a file as bytes, mapped into memory where the platform allows.
//!
//! The fixed-width columns at the start of the index cache are read this
//! way: a recall checks them whole but uses a few values of each, and
//! mapping costs neither a copy nor a page of fresh memory per page read
//! (the kernel maps the page-cache pages already there).
//!
//! The contract is in [`Mapped::open`]'s type: it is `unsafe`, private to
//! the index, and each caller says why it holds. `mem` itself never changes
//! a cache file in place: a new one is written beside it and renamed over
//! it ([`write_atomic`](crate::store::write::write_atomic)). Another program could
//! still write or truncate one in place while it is mapped. A write shows
//! through as changed bytes, which the index's checksums and bounds checks
//! treat like any damage. Reading a page past a truncated end raises
//! SIGBUS, which would kill the process (and `mem mcp` with it), so every
//! mapping is guarded: a SIGBUS handler puts a page of zeros where a
//! guarded page faulted, notes it ([`faulted`]), and the read goes on; the
//! cache then counts as damaged, and the command answers from the files
//! (see [`crate::cache::distrust`]). A SIGBUS at any other address gets the
//! handling it had before. Reading the columns instead of mapping them
//! would avoid the handler, at about 8 ms a recall on 100,000 memories.

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

/// True once a guarded mapping faulted (its file was truncated in place):
/// what was read from it since is zeros, not the file.
pub fn faulted() -> bool {
    #[cfg(unix)]
    {
        map::FAULTED.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

impl Mapped {
    /// The first `len` bytes of `file`; an error when it is shorter.
    ///
    /// # Safety
    ///
    /// Sound only while no program changes the file's first `len` bytes in
    /// place as long as the `Mapped` lives: bytes behind a `&[u8]` that
    /// change are undefined behaviour. `mem` never writes a file it maps in
    /// place (it writes a new file and renames it over), so the caller
    /// must map only such files, inside the root's `.cache/`. What another
    /// program may still do is survived, not made sound: the bytes may
    /// change under the mapping if it writes the file in place, and read as
    /// zeros past a truncation (then [`faulted`] is true). The caller must treat them as untrusted input: check every
    /// length and offset against the mapping before use (never index or
    /// allocate by a value read from it unchecked), verify checksums, and
    /// take [`faulted`] into account before trusting an answer built from
    /// them. It must not hand out references into the mapping that outlive
    /// the `Mapped`.
    #[allow(unsafe_code)]
    pub(super) unsafe fn open(file: &File, len: usize) -> io::Result<Mapped> {
        if file.metadata()?.len() < len as u64 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        #[cfg(unix)]
        if len > 0
            && let Some(map) = map::Map::new(file, len)?
        {
            return Ok(Mapped { inner: Inner::Map(map) });
        }
        let mut bytes = vec![0; len];
        crate::base::codec::read_at(file, &mut bytes, 0)?;
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
    use std::sync::Once;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};

    /// A guarded mapping faulted.
    pub static FAULTED: AtomicBool = AtomicBool::new(false);

    /// The guarded mappings: (start, length) per slot, 0 when free. A
    /// fixed table of atomics, so the signal handler reads it without a
    /// lock or an allocation.
    const SLOTS: usize = 64;
    /// A slot is taken (by `Map::new`) before its range is set, and its range
    /// is cleared before it is given back; the handler reads only ranges.
    static TAKEN: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
    static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALL: Once = Once::new();
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    /// The SIGBUS handling before ours, for faults that are not ours.
    static mut PREVIOUS: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::zeroed();

    /// Put a page of zeros where a guarded mapping faulted; give any other
    /// fault back to the handling it had.
    extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
        let page = PAGE.load(Ordering::Relaxed);
        // Only a fault the kernel raised (not a signal another process sent)
        // at an address inside a guarded mapping is ours.
        for slot in (0..SLOTS).filter(|_| code > 0) {
            let len = LENS[slot].load(Ordering::Acquire);
            let start = STARTS[slot].load(Ordering::Acquire);
            if len > 0 && start > 0 && addr >= start && addr - start < len {
                let at = addr & !(page - 1);
                // SAFETY: `at` is a page of a mapping this process owns (the
                // slot says so); replacing it with anonymous zeros changes
                // what it reads, never memory anything else owns. mmap is
                // async-signal-safe.
                let zero = unsafe {
                    libc::mmap(
                        at as *mut libc::c_void,
                        page,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    )
                };
                if zero != libc::MAP_FAILED {
                    FAULTED.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
        // Not ours: the handling before ours. A fault meets it when the
        // access is retried; a signal that was sent is sent again to it.
        // SAFETY: PREVIOUS was written once, before the handler was installed;
        // sigaction and raise are async-signal-safe.
        unsafe {
            libc::sigaction(libc::SIGBUS, (&raw const PREVIOUS).cast(), std::ptr::null_mut());
            if code <= 0 {
                libc::raise(libc::SIGBUS);
            }
        }
    }

    /// Install the handler once; false when it could not be.
    fn install() -> bool {
        INSTALL.call_once(|| {
            // SAFETY: sysconf and sigaction are called with valid arguments;
            // PREVIOUS is written here only, before any handler can read it.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                if page > 0 {
                    PAGE.store(page as usize, Ordering::Relaxed);
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
                libc::sigemptyset(&mut action.sa_mask);
                let ok = libc::sigaction(libc::SIGBUS, &action, (&raw mut PREVIOUS).cast()) == 0;
                INSTALLED.store(ok, Ordering::Relaxed);
            }
        });
        INSTALLED.load(Ordering::Relaxed)
    }

    /// A private, read-only mapping of a file's first `len` bytes, guarded.
    pub struct Map {
        ptr: NonNull<u8>,
        len: usize,
        slot: usize,
    }

    // SAFETY: the mapping is read-only and owned: sharing `&[u8]` views of
    // it across threads is as safe as sharing a `Vec<u8>`.
    unsafe impl Send for Map {}
    unsafe impl Sync for Map {}

    impl Map {
        /// Map `len` (> 0) bytes of `file`, guarded; `None` when no guard
        /// can be had (the caller reads the bytes instead).
        pub fn new(file: &File, len: usize) -> io::Result<Option<Map>> {
            if !install() {
                return Ok(None);
            }
            let Some(slot) = (0..SLOTS).find(|&s| {
                TAKEN[s].compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok()
            }) else {
                return Ok(None);
            };
            // SAFETY: a fresh mapping chosen by the kernel aliases nothing;
            // it is read-only and private. A truncation in place by another
            // program is caught by the guard (module docs).
            let mapped = unsafe {
                mmap(std::ptr::null_mut(), len, ProtFlags::READ, MapFlags::PRIVATE, file, 0)
            };
            let ptr = match mapped.map(|p| NonNull::new(p.cast::<u8>())) {
                Ok(Some(ptr)) => ptr,
                other => {
                    TAKEN[slot].store(false, Ordering::Release);
                    return Err(other.err().map_or_else(|| io::Error::other("mmap"), Into::into));
                }
            };
            STARTS[slot].store(ptr.as_ptr() as usize, Ordering::Release);
            LENS[slot].store(len, Ordering::Release);
            Ok(Some(Map { ptr, len, slot }))
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `ptr` points at `len` readable bytes for as long as
            // `self` lives, and nothing writes them (see `new`).
            unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // Unguarded before unmapped: a fault there is then not ours.
            LENS[self.slot].store(0, Ordering::Release);
            STARTS[self.slot].store(0, Ordering::Release);
            // SAFETY: the mapping made in `new`; the borrow checker ties
            // every view to `&self`, so none outlives it.
            let _ = unsafe { munmap(self.ptr.as_ptr().cast(), self.len) };
            TAKEN[self.slot].store(false, Ordering::Release);
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code, reason = "the tests map files they own and only compare bytes")]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_file_reads_as_its_bytes_and_outlives_a_rename_over_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, "部署 deploy").unwrap();
        // SAFETY: the bytes are only compared.
        let open = |len| unsafe { Mapped::open(&File::open(&path).unwrap(), len) };
        let (whole, start) = (open(13).unwrap(), open(6).unwrap());
        // Replaced the way mem replaces its caches: the mapping keeps the old bytes.
        std::fs::write(dir.path().join("new"), "other").unwrap();
        std::fs::rename(dir.path().join("new"), &path).unwrap();
        assert_eq!(&*whole, "部署 deploy".as_bytes());
        assert_eq!(&*start, "部署".as_bytes());

        assert!(open(6).is_err(), "longer than the file");
        assert!(open(0).unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_truncated_in_place_while_mapped_reads_as_zeros_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let file = File::open(&path).unwrap();
        // SAFETY: the bytes are only summed; the truncation is the point.
        let mapped = unsafe { Mapped::open(&file, 3 * 4096) }.unwrap();
        assert!(matches!(mapped.inner, Inner::Map(_)), "mapped, not read");
        assert_eq!(mapped[8191], 7);
        assert!(!faulted());
        // Another program truncates it in place.
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
        let sum: u64 = mapped.iter().map(|&b| u64::from(b)).sum();
        assert!(sum < 7 * 3 * 4096, "the pages past the end read as zeros");
        assert!(faulted());
    }
}
