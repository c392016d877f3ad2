//! Listing a root: its category folders on every core, each folder's
//! memory files with their size and stamps, and what is misplaced.

use std::fs;
use std::path::{Path, PathBuf};

use super::found::{FileEntry, Problem, skip, stamp};
use crate::base::parallel;
use crate::model::relpath::{RelPath, check_category, check_slug};
use crate::model::roots::Root;
use crate::store::files::{self, Refusal};

/// The memory files of one category folder, sorted by file name: names in
/// one buffer, so a listing of a hundred thousand files is a few
/// allocations, not several per file.
#[derive(Debug, Default, Clone)]
pub struct Listing {
    pub category: String,
    pub dir: PathBuf,
    /// When the folder last changed before it was read, the later of its
    /// mtime and ctime (nanoseconds): a restored mtime cannot make it look
    /// settled.
    pub dir_changed_ns: u64,
    /// [`stamp`] of the folder's mtime, ctime and inode before it was read:
    /// what identifies its contents (a restored mtime keeps the ctime moved).
    pub dir_stamp: u64,
    /// Something in the folder was reported (a misnamed file, a folder).
    pub problems: bool,
    /// Listed from what was known of it, without reading the folder.
    pub known: bool,
    names: String,
    pub files: Vec<Listed>,
}

/// One file of a [`Listing`].
#[derive(Debug, Clone, Copy)]
pub struct Listed {
    name_at: u32,
    name_len: u32,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: u64,
    /// Status change time, nanoseconds since the epoch.
    pub ctime_ns: u64,
    pub ino: u64,
}

impl Listed {
    /// See [`FileEntry::changed_ns`].
    pub fn changed_ns(&self) -> u64 {
        self.mtime_ns.max(self.ctime_ns)
    }

    /// See [`FileEntry::stamp`].
    pub fn stamp(&self) -> u64 {
        stamp(self.mtime_ns, self.ctime_ns, self.ino)
    }
}

impl Listing {
    /// The file name (`<slug>.md`) of the `i`-th file.
    pub fn name(&self, i: usize) -> &str {
        let f = &self.files[i];
        &self.names[f.name_at as usize..(f.name_at + f.name_len) as usize]
    }

    /// The slug of the `i`-th file, as bytes.
    pub fn slug_bytes(&self, i: usize) -> &[u8] {
        let f = &self.files[i];
        let (at, len) = (f.name_at as usize, f.name_len.saturating_sub(3) as usize);
        self.names.as_bytes().get(at..at + len).unwrap_or_default()
    }

    /// The slug of the `i`-th file.
    pub fn slug(&self, i: usize) -> &str {
        let name = self.name(i);
        &name[..name.len() - 3]
    }

    /// The `i`-th file as a [`FileEntry`].
    pub fn entry(&self, i: usize) -> FileEntry {
        FileEntry {
            rel: RelPath { category: self.category.clone(), slug: self.slug(i).to_string() },
            path: self.dir.join(self.name(i)),
            size: self.files[i].size,
            mtime_ns: self.files[i].mtime_ns,
            ctime_ns: self.files[i].ctime_ns,
            ino: self.files[i].ino,
        }
    }
}

/// List a root's memory files (sorted by category, then file name) and the
/// misplaced entries, without reading any file.
pub fn walk(root: &Root) -> (Vec<FileEntry>, Vec<Problem>) {
    let (listings, problems) = list(root);
    (entries(&listings), problems)
}

/// Every file of `listings`, in order, as a [`FileEntry`].
pub fn entries(listings: &[Listing]) -> Vec<FileEntry> {
    listings.iter().flat_map(|l| (0..l.files.len()).map(|i| l.entry(i))).collect()
}

/// [`walk`], one [`Listing`] per category folder. Category folders are
/// listed on every core: on a warm page cache the `stat` of each file is
/// the cost.
pub fn list(root: &Root) -> (Vec<Listing>, Vec<Problem>) {
    list_with(root, &|_| None, &|| ())
}

/// What is known of a category folder from an earlier listing: its
/// modification time then, and its memory files' slugs in file-name order.
pub type Known<'k> = Option<(u64, Vec<&'k str>)>;

/// [`list`], told by `known` what each category folder held when it was
/// last listed. A folder whose modification time is unchanged has the same
/// names (adding, removing or renaming an entry changes it), so its files
/// are looked up by name instead of reading the folder; each is still
/// `stat`ed, so an edit in place is seen. Anything unexpected on the way —
/// a file gone, a folder where a file was — and the folder is read after all.
///
/// `side` is other work, independent of the listing (reading a cache): it
/// runs once on one of the listing threads, as the first piece of work, so
/// it never competes with them for a core.
pub fn list_with<'k>(
    root: &Root,
    known: &(dyn Fn(&str) -> Known<'k> + Sync),
    side: &(dyn Fn() + Sync),
) -> (Vec<Listing>, Vec<Problem>) {
    let mut problems = Vec::new();
    let Ok(entries) = fs::read_dir(&root.dir) else {
        side();
        return (Vec::new(), problems);
    };
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
    // Folders differ in size: each thread takes the next one as it is free.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let parts = parallel::run(parallel::threads().min(categories.len() + 1), |_| {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(i) = i.checked_sub(1) else {
                side();
                continue;
            };
            let Some((category, dir)) = categories.get(i) else { break };
            let mut problems = Vec::new();
            let listing = known_category(category, dir, known)
                .unwrap_or_else(|| list_category(&root.dir, category, dir, &mut problems));
            problems.sort_by(|a, b| a.path.cmp(&b.path));
            out.push((i, listing, problems));
        }
        out
    });
    let mut parts: Vec<(usize, Listing, Vec<Problem>)> = parts.into_iter().flatten().collect();
    parts.sort_by_key(|p| p.0);
    let mut listings = Vec::with_capacity(parts.len());
    for (_, listing, p) in parts {
        listings.push(listing);
        problems.extend(p);
    }
    (listings, problems)
}

/// Nanoseconds since the epoch of a modification time (0 before it).
fn mtime_ns(meta: &fs::Metadata) -> u64 {
    meta.modified().map_or(0, crate::base::time::epoch_ns)
}

/// A file's mtime and ctime (nanoseconds) and inode: what its stamp is
/// made of, for a file looked at through `std::fs`.
pub(crate) fn times(meta: &fs::Metadata) -> (u64, u64, u64) {
    let (ctime, ino) = ctime_ino(meta);
    (mtime_ns(meta), ctime, ino)
}

/// Status change time (nanoseconds) and inode of a file (0 where unknown).
#[cfg(unix)]
fn ctime_ino(meta: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (nanos(meta.ctime(), meta.ctime_nsec()), meta.ino())
}

#[cfg(not(unix))]
fn ctime_ino(_: &fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// A category folder listed from what `known` says it held, if its
/// modification time shows it still does and every file is where it was.
#[cfg(unix)]
fn known_category<'k>(
    category: &str,
    dir: &Path,
    known: &(dyn Fn(&str) -> Known<'k> + Sync),
) -> Option<Listing> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let (mtime, slugs) = known(category)?;
    let folder =
        rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .ok()?;
    let st = rustix::fs::fstat(&folder).ok()?;
    let (dir_mtime_ns, dir_ctime_ns) = (stat_mtime_ns(&st), stat_ctime_ns(&st));
    let dir_stamp = stamp(dir_mtime_ns, dir_ctime_ns, st.st_ino);
    if dir_stamp != mtime {
        return None;
    }
    let mut listing = Listing {
        category: category.to_string(),
        dir: dir.to_path_buf(),
        dir_changed_ns: dir_mtime_ns.max(dir_ctime_ns),
        dir_stamp,
        known: true,
        ..Listing::default()
    };
    listing.files.reserve_exact(slugs.len());
    listing.names.reserve_exact(slugs.iter().map(|s| s.len() + 3).sum());
    let mut name = String::new();
    for slug in slugs {
        name.clear();
        name.push_str(slug);
        name.push_str(".md");
        // A symlink, or anything but a regular file, sends the folder to a
        // full listing, which checks where it leads.
        let st = rustix::fs::statat(&folder, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return None;
        }
        let name_at = listing.names.len() as u32;
        listing.names.push_str(&name);
        listing.files.push(Listed {
            name_at,
            name_len: name.len() as u32,
            size: u64::try_from(st.st_size).ok()?,
            mtime_ns: stat_mtime_ns(&st),
            ctime_ns: stat_ctime_ns(&st),
            ino: st.st_ino,
        });
    }
    Some(listing)
}

/// [`mtime_ns`] of a `stat` result.
#[cfg(unix)]
fn stat_mtime_ns(st: &rustix::fs::Stat) -> u64 {
    nanos(st.st_mtime, st.st_mtime_nsec as i64)
}

/// [`stat_mtime_ns`] of the status change time.
#[cfg(unix)]
fn stat_ctime_ns(st: &rustix::fs::Stat) -> u64 {
    nanos(st.st_ctime, st.st_ctime_nsec as i64)
}

/// Seconds and nanoseconds since the epoch as nanoseconds (0 before it).
#[cfg(unix)]
#[allow(clippy::unnecessary_cast, reason = "the parts' types differ between targets")]
fn nanos(secs: i64, nsec: i64) -> u64 {
    u64::try_from(secs).map_or(0, |s| s.saturating_mul(1_000_000_000).saturating_add(nsec as u64))
}

#[cfg(not(unix))]
fn known_category<'k>(
    _: &str,
    _: &Path,
    _: &(dyn Fn(&str) -> Known<'k> + Sync),
) -> Option<Listing> {
    None
}

/// The memory files of one category folder.
fn list_category(root: &Path, category: &str, dir: &Path, problems: &mut Vec<Problem>) -> Listing {
    let mut listing =
        Listing { category: category.to_string(), dir: dir.to_path_buf(), ..Listing::default() };
    // Taken before the folder is read: a change while reading it makes the
    // folder look changed next time, never unchanged.
    if let Ok(meta) = fs::metadata(dir) {
        let (ctime_ns, ino) = ctime_ino(&meta);
        let dir_mtime_ns = mtime_ns(&meta);
        listing.dir_changed_ns = dir_mtime_ns.max(ctime_ns);
        listing.dir_stamp = stamp(dir_mtime_ns, ctime_ns, ino);
    }
    let reported = problems.len();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(skip(dir, &e.to_string()));
            listing.problems = true;
            return listing;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            problems.push(skip(&entry.path(), "file name is not valid UTF-8"));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().ok();
        let symlink = kind.is_some_and(|k| k.is_symlink());
        if kind.is_some_and(|k| k.is_dir()) || (symlink && entry.path().is_dir()) {
            problems.push(skip(
                &entry.path(),
                "nested folder is not scanned: memories live at <category>/<slug>.md",
            ));
            continue;
        }
        let Some(slug) = name.strip_suffix(".md") else { continue };
        if slug == "index" {
            continue;
        }
        if let Some(what) = crate::model::relpath::reserved(slug) {
            problems.push(skip(
                &entry.path(),
                &format!("file name is {what}, not a memory's; rename it"),
            ));
            continue;
        }
        if check_slug(slug).is_err() {
            problems.push(skip(
                &entry.path(),
                "file name is not a valid slug (A-Z a-z 0-9 . _ -, max 64)",
            ));
            continue;
        }
        // On Linux this is `statx` relative to the open folder: no path walk.
        let meta = match kind {
            Some(k) if k.is_file() => entry.metadata().map_err(Refusal::Io),
            Some(k) if k.is_symlink() => {
                files::link_target(root, &entry.path()).map(|(_, meta)| meta)
            }
            Some(k) => Err(Refusal::NotRegular(files::kind(k))),
            None => entry.metadata().map_err(Refusal::Io),
        };
        match meta {
            Ok(meta) => {
                let name_at = listing.names.len() as u32;
                listing.names.push_str(name);
                let (ctime_ns, ino) = ctime_ino(&meta);
                listing.files.push(Listed {
                    name_at,
                    name_len: name.len() as u32,
                    size: meta.len(),
                    mtime_ns: mtime_ns(&meta),
                    ctime_ns,
                    ino,
                });
            }
            Err(why) => problems.push(Problem::refused(&entry.path(), &why)),
        }
    }
    let names = &listing.names;
    let name =
        |f: &Listed| &names.as_bytes()[f.name_at as usize..(f.name_at + f.name_len) as usize];
    listing.files.sort_unstable_by(|a, b| name(a).cmp(name(b)));
    listing.problems = problems.len() > reported;
    listing
}
