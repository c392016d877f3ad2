//! The per-root index cache, `<root>/.cache/index.bin`: what every memory
//! file was (name, size, modification time), per-document ranking
//! statistics, every memory's metadata as a record, and packed term tables
//! (one per segment of memories).
//!
//! Opening it maps ([`Mapped`]) and checks whole only the part every query
//! needs — the file list, the statistics and the term tables' block indexes.
//! Records, dictionary blocks and postings are read with positional reads
//! when a query asks for them, each checked on its own.
//!
//! It is derived and disposable. A missing, truncated, corrupt or
//! other-version cache is rebuilt; files whose size or stamp (mtime, ctime
//! and inode, see [`FileEntry::stamp`]) changed are
//! re-read and indexed on the side; deleted files are left out. The file is
//! replaced atomically, so concurrent readers never see half of it.

use std::cell::{Cell, OnceCell};
use std::cmp::Ordering;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use crate::base::codec::{
    checksum, get_string, put_bytes, read_at, read_varint, u32_at, u64_at, varint,
};
use crate::base::progress::Progress;
use crate::base::time::now_ns;
use crate::mapped::Mapped;
use crate::memory::Memory;
use crate::rank::corpus::{Boosts, Corpus, DocStats, FIELDS, Segment, Stats, StatsColumns, Terms};
use crate::rank::packed::{Bytes, Held, Packed};
use crate::rank::score::Memories;
use crate::rank::tokenize::Tokenizer;
use crate::relpath::RelPath;
use crate::roots::{Root, Scope};
use crate::scan::{FileEntry, Listing, Problem, Scan, entries, load_files, load_files_counted};
use crate::snapshot;
use crate::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMIDX\0\x02";
/// Bump when the tokenizer, the fields or this format change.
const FORMAT: u64 = 15;

/// Files changed this close to the listing a cache was built from are read
/// again: two seconds covers the coarsest file system clocks.
pub const RACY_NS: u64 = 2_000_000_000;

/// Header: magic, version tag, total length, then the length and checksum
/// of the names part and of the meta part.
const HEADER: usize = 56;

/// Set once a cache turned out damaged: for the rest of the process no
/// cache is read, so what follows is built from the files in memory.
static DISTRUSTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The one policy for a damaged cache: remove it (a read-only `.cache`
/// may keep it), read no cache again in this process, and tell the caller
/// whether to answer again from the files. Returns false when that was
/// already done, so a caller never retries twice: no recursion, whatever
/// the disk does.
pub fn distrust(roots: &[&Root]) -> bool {
    roots.iter().for_each(|r| discard(r));
    !DISTRUSTED.swap(true, std::sync::atomic::Ordering::Relaxed)
}

/// Remove a root's cache (after it turned out damaged).
pub fn discard(root: &Root) {
    let _ = crate::write::remove_file(&root.dir, &path(root));
    let _ = crate::write::remove_file(&root.dir, &delta_path(root));
}

/// The cache file of a root.
pub fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("index.bin")
}

/// The cache of the files changed since a root's cache was built.
fn delta_path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("delta.bin")
}

/// The first part of a cache: what a root's folders held, enough to list it.
struct Names {
    file: Arc<File>,
    total: u64,
    /// The header, names and meta parts.
    map: Arc<Mapped>,
    built_at: u64,
    len: usize,
    /// Category names, each with the first document of its run.
    categories: Vec<(String, usize)>,
    /// Where, in the file, the slugs (UTF-8, back to back) and their
    /// offsets (u32, len + 1) start.
    slugs: usize,
    slug_offs: usize,
}

/// A root's cache, opened: the file list and where each record is, as
/// fixed-width columns (read as they lie, not parsed).
struct Cached {
    path: PathBuf,
    names: Names,
    meta: Meta,
}

/// The meta part of a cache.
struct Meta {
    /// Where the columns start in the file: sizes and mtimes (u64), record
    /// offsets (u64, len + 1), field lengths (u32 × FIELDS), updated (i64),
    /// flags (u8), trigger masks (u64 × 2), segment sizes (u64 × 3), and
    /// then the segments' block indexes.
    sizes: usize,
    mtimes: usize,
    records: usize,
    lengths: usize,
    updated: usize,
    flags: usize,
    triggers: usize,
    dims: usize,
    indexes: usize,
    segments: usize,
    /// Where records start in the file.
    records_at: u64,
}

/// A document's flags in the meta part.
const DERIVED: u8 = 1;
const PINNED: u8 = 2;
/// The file had fields that were defaulted (reported on every run).
const PROBLEMS: u8 = 4;
/// The number of trigger masks in use, in the bits above.
const TRIGGERS_SHIFT: u8 = 3;

impl Names {
    /// The slug of `doc`, as bytes (valid UTF-8: checked on open).
    fn slug_bytes(&self, doc: usize) -> &[u8] {
        let at = |i: usize| u32_at(&self.map, self.slug_offs + 4 * i).unwrap_or(0) as usize;
        self.map.get(self.slugs + at(doc)..self.slugs + at(doc + 1)).unwrap_or(&[])
    }

    fn slug(&self, doc: usize) -> &str {
        std::str::from_utf8(self.slug_bytes(doc)).unwrap_or("")
    }

    fn category(&self, doc: usize) -> &str {
        let i = self.categories.partition_point(|c| c.1 <= doc);
        i.checked_sub(1).map_or("", |i| &self.categories[i].0)
    }

    /// The documents of `category`.
    fn run(&self, category: &str) -> std::ops::Range<usize> {
        match self.categories.binary_search_by(|c| c.0.as_str().cmp(category)) {
            Ok(i) => {
                let end = self.categories.get(i + 1).map_or(self.len, |c| c.1);
                self.categories[i].1..end.max(self.categories[i].1)
            }
            Err(_) => 0..0,
        }
    }
}

impl Cached {
    fn len(&self) -> usize {
        self.names.len
    }

    fn slug(&self, doc: usize) -> &str {
        self.names.slug(doc)
    }

    fn category(&self, doc: usize) -> &str {
        self.names.category(doc)
    }

    fn run(&self, category: &str) -> std::ops::Range<usize> {
        self.names.run(category)
    }

    /// The mapped file, where the columns lie.
    fn bytes(&self) -> &[u8] {
        &self.names.map
    }

    fn size(&self, doc: usize) -> u64 {
        u64_at(self.bytes(), self.meta.sizes + 8 * doc).unwrap_or(u64::MAX)
    }

    fn mtime(&self, doc: usize) -> u64 {
        u64_at(self.bytes(), self.meta.mtimes + 8 * doc).unwrap_or(u64::MAX)
    }

    fn flags(&self, doc: usize) -> u8 {
        self.bytes().get(self.meta.flags + doc).copied().unwrap_or(0)
    }

    /// The document at `category/slug`, if the cache has one.
    fn find(&self, category: &str, slug: &str) -> Option<usize> {
        let run = self.run(category);
        let (mut lo, mut hi) = (run.start, run.end);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match name_order(self.names.slug_bytes(mid), slug.as_bytes()) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The document holding `f` with its current size and stamp, if any.
    fn held(&self, f: &FileEntry) -> Option<usize> {
        self.find(&f.rel.category, &f.rel.slug)
            .filter(|&d| self.size(d) == f.size && self.mtime(d) == f.stamp())
    }

    /// [`held`](Self::held), when `f` was also last changed clearly before
    /// this cache was built (see [`match_listings`](Self::match_listings)).
    fn current(&self, f: &FileEntry) -> Option<usize> {
        self.held(f).filter(|_| f.mtime_ns.saturating_add(RACY_NS) < self.names.built_at)
    }

    /// Where record `doc` is, relative to the first record, and its length.
    fn record_span(&self, doc: usize) -> Option<(u64, u64)> {
        let start = u64_at(self.bytes(), self.meta.records + 8 * doc)?;
        let end = u64_at(self.bytes(), self.meta.records + 8 * (doc + 1))?;
        Some((start, end.checked_sub(start)?))
    }

    /// `Some` when `len` bytes from `start` of the records lie inside the
    /// file: a damaged or crafted offset must not size an allocation.
    fn within(&self, start: u64, len: u64) -> Option<()> {
        let end = self.meta.records_at.checked_add(start)?.checked_add(len)?;
        (end <= self.names.total).then_some(())
    }

    /// Read one record: the memory and the messages of its defaulted fields.
    fn record(&self, doc: usize, scope: Scope) -> Option<(Memory, Vec<String>)> {
        let (start, len) = self.record_span(doc)?;
        self.within(start, len)?;
        let mut buf = vec![0u8; usize::try_from(len).ok()?];
        read_at(&self.names.file, &mut buf, self.meta.records_at.checked_add(start)?).ok()?;
        self.decode_record(doc, scope, &buf)
    }

    /// Every record, read at once (for commands that want them all).
    fn records(&self, scope: Scope) -> Option<Vec<(Memory, Vec<String>)>> {
        let end = u64_at(self.bytes(), self.meta.records + 8 * self.len())?;
        self.within(0, end)?;
        let mut buf = vec![0u8; usize::try_from(end).ok()?];
        read_at(&self.names.file, &mut buf, self.meta.records_at).ok()?;
        (0..self.len())
            .map(|doc| {
                let (start, len) = self.record_span(doc)?;
                let (start, len) = (usize::try_from(start).ok()?, usize::try_from(len).ok()?);
                self.decode_record(doc, scope, buf.get(start..start.checked_add(len)?)?)
            })
            .collect()
    }

    fn decode_record(
        &self,
        doc: usize,
        scope: Scope,
        bytes: &[u8],
    ) -> Option<(Memory, Vec<String>)> {
        let (sum, mut at) = bytes.split_first_chunk::<4>()?;
        if u32::from_le_bytes(*sum) != checksum(at) as u32 {
            return None;
        }
        let path =
            RelPath { category: self.category(doc).to_string(), slug: self.slug(doc).to_string() };
        let memory = get_memory(path, scope, &mut at)?;
        let problems = get_list(&mut at)?;
        at.is_empty().then_some((memory, problems))
    }

    /// Which cached documents are still current, and which files must be
    /// read. Both sides are in walk order: merge them.
    ///
    /// An entry is trusted only if its file was last changed clearly before
    /// the listing the cache was built from: a file written in the same
    /// clock tick as that listing could have changed unseen (git's "racy"
    /// case), so it is read again.
    fn match_listings(&self, listings: &[Listing]) -> (Vec<bool>, Vec<FileEntry>) {
        // Two halves, split between categories, matched side by side.
        let total: usize = listings.iter().map(|l| l.files.len()).sum();
        let mut half = 0;
        let mut files = 0;
        while half < listings.len() && 2 * files < total {
            files += listings[half].files.len();
            half += 1;
        }
        let (first, second) = listings.split_at(half);
        let cut = second.first().map_or(self.len(), |l| {
            let c = self.names.categories.partition_point(|c| c.0 < l.category);
            self.names.categories.get(c).map_or(self.len(), |c| c.1)
        });
        let cut = cut.min(self.len());
        let halves = [(first, 0..cut), (second, cut..self.len())];
        let matched = crate::base::parallel::run(2, |k| self.match_part(halves[k].0, &halves[k].1));
        let (mut live, mut changed) = (Vec::with_capacity(self.len()), Vec::new());
        for (l, c) in matched {
            live.extend(l);
            changed.extend(c);
        }
        (live, changed)
    }

    /// [`match_listings`](Self::match_listings) for `listings`, whose
    /// cached documents are `docs`: which of those are live, and the files
    /// to read.
    fn match_part(
        &self,
        listings: &[Listing],
        docs: &std::ops::Range<usize>,
    ) -> (Vec<bool>, Vec<FileEntry>) {
        let mut live = vec![false; docs.len()];
        let mut changed = Vec::new();
        for listing in listings {
            let run = self.run(&listing.category);
            let mut d = run.start;
            for (i, f) in listing.files.iter().enumerate() {
                let slug = listing.slug_bytes(i);
                // Most files are where the cache has them: test that first.
                if d >= run.end || self.names.slug_bytes(d) != slug {
                    while d < run.end && name_order(self.names.slug_bytes(d), slug).is_lt() {
                        d += 1;
                    }
                }
                let current = d < run.end
                    && self.size(d) == f.size
                    && self.mtime(d) == f.stamp()
                    && f.mtime_ns.saturating_add(RACY_NS) < self.names.built_at
                    && self.names.slug_bytes(d) == slug;
                match live.get_mut(d.wrapping_sub(docs.start)) {
                    Some(slot) if current => {
                        *slot = true;
                        d += 1;
                    }
                    _ => changed.push(listing.entry(i)),
                }
            }
        }
        (live, changed)
    }
}

/// The order files are listed in within a category: by file name, `<slug>.md`.
fn name_order(a: &[u8], b: &[u8]) -> Ordering {
    a.iter().chain(b".md").cmp(b.iter().chain(b".md"))
}

/// The order of memories in a root: category, then file name.
fn walk_order(a: &RelPath, b: &RelPath) -> Ordering {
    a.category.cmp(&b.category).then_with(|| name_order(a.slug.as_bytes(), b.slug.as_bytes()))
}

/// One root ready for ranking: the documents of its cache files (the base,
/// then the delta), then the ones read now, each part in walk order.
pub struct Indexed {
    scope: Scope,
    parts: Vec<Cached>,
    fresh: Vec<Memory>,
    /// Which documents exist now (a changed file's cached entry is dead).
    live: Vec<bool>,
    stats: Stats,
    /// Term tables, each with the first document it covers.
    tables: Vec<(u32, Terms)>,
    problems: Vec<Problem>,
}

impl Indexed {
    fn len(&self) -> usize {
        self.live.len()
    }

    fn cached_len(&self) -> usize {
        self.parts.iter().map(Cached::len).sum()
    }

    /// The cache file holding `doc`, and its number there.
    fn part(&self, mut doc: usize) -> Option<(&Cached, usize)> {
        for part in &self.parts {
            if doc < part.len() {
                return Some((part, doc));
            }
            doc -= part.len();
        }
        None
    }

    fn key(&self, doc: usize) -> (&str, &str) {
        match self.part(doc) {
            Some((c, doc)) => (c.category(doc), c.slug(doc)),
            None => {
                let m = &self.fresh[doc - self.cached_len()];
                (&m.path.category, &m.path.slug)
            }
        }
    }

    /// The live document at `category/slug`, if any.
    fn find_live(&self, category: &str, slug: &str) -> Option<usize> {
        let key = RelPath { category: category.to_string(), slug: slug.to_string() };
        let fresh = self.fresh.binary_search_by(|m| walk_order(&m.path, &key));
        if let Ok(i) = fresh {
            let doc = self.cached_len() + i;
            return self.live[doc].then_some(doc);
        }
        let mut first = 0;
        for part in &self.parts {
            if let Some(doc) = part.find(category, slug).map(|d| first + d)
                && self.live[doc]
            {
                return Some(doc);
            }
            first += part.len();
        }
        None
    }

    /// Every memory of the cache files and read now, live or dead (bodies
    /// of cached ones are not read); None when a record is damaged.
    fn all(&self) -> Option<Vec<Memory>> {
        let mut out = Vec::with_capacity(self.len());
        for part in &self.parts {
            out.extend(part.records(self.scope)?.into_iter().map(|(m, _)| m));
        }
        out.extend(self.fresh.iter().cloned());
        Some(out)
    }
}

/// Index a root, using and refreshing its cache.
///
/// The base cache holds the tree as it was when last built; the delta
/// (`delta.bin`, same format) holds the files changed since, so a change is
/// read and indexed once, not on every run. A file the base holds with its
/// current size and stamp is taken from the base, else one the delta holds
/// so, else it is read. A file written within [`RACY_NS`] of the build that
/// holds it is read again and its content compared: the same content keeps
/// its entry, and once every such file is old enough the cache is marked as
/// built now, so the next run trusts them without reading.
pub fn index_root(root: &Root, tokenizer: &Tokenizer) -> Indexed {
    index_at(root, tokenizer, now_ns())
}

/// [`index_root`] with the tree listed at `listed_at` (nanoseconds).
fn index_at(root: &Root, tokenizer: &Tokenizer, listed_at: u64) -> Indexed {
    // Listing the files and reading the cache do not depend on each other:
    // the cache is read on one of the listing threads.
    let cache = std::sync::OnceLock::new();
    let (listings, mut problems) = snapshot::list_beside(root, true, &|| {
        let _ = cache.set(read(root, &path(root)));
    });
    let cache = cache.into_inner().flatten();
    let Some((base, (mut stats, mut tables))) = cache else {
        return rebuild(root, &listings, problems, tokenizer, listed_at);
    };
    let (mut live, changed) = base.match_listings(&listings);
    let delta = if changed.is_empty() { None } else { read(root, &delta_path(root)) };
    let mut delta_live = vec![false; delta.as_ref().map_or(0, |(d, _)| d.len())];
    // Files to read and compare with a cached entry (part 0 is the base,
    // part 1 the delta), and files to read and index.
    let mut checks: Vec<(usize, usize, FileEntry)> = Vec::new();
    let mut moved = Vec::new();
    for f in &changed {
        let in_delta = delta.as_ref().and_then(|(d, _)| Some((d.held(f)?, d.current(f))));
        match (in_delta, base.held(f)) {
            (Some((doc, Some(_))), _) => delta_live[doc] = true,
            (Some((doc, None)), _) => checks.push((1, doc, f.clone())),
            (None, Some(doc)) => checks.push((0, doc, f.clone())),
            (None, None) => moved.push(f.clone()),
        }
    }
    // Past a few percent of changed files, a fresh cache pays for itself.
    let in_delta = checks.iter().filter(|c| c.0 == 1).count();
    let held_apart = moved.len() + in_delta + delta_live.iter().filter(|l| **l).count();
    if held_apart > 64.max(base.len() / 20) {
        return rebuild(root, &listings, problems, tokenizer, listed_at);
    }
    let parts: Vec<&Cached> =
        std::iter::once(&base).chain(delta.as_ref().map(|(d, _)| d)).collect();
    let checked = verify(&parts, root.scope, &checks, listed_at);
    for &(part, doc, _) in checks.iter().filter(|c| checked.same.contains(&(c.0, c.1))) {
        if part == 0 { live[doc] = true } else { delta_live[doc] = true }
    }
    let read_now = load_files(root.scope, &moved);
    // Files that do not parse are read and reported on every run; only a
    // file that reads as a memory the cache lacks is folded into a delta.
    let changed_now = !read_now.memories.is_empty() || checked.differ.iter().any(|d| d.2);
    for (k, part) in parts.iter().enumerate() {
        // The delta is about to be replaced: no point sealing it.
        if checked.settled(k) && !(changed_now && k == 1) {
            confirm(root, part, listed_at);
        }
    }
    if changed_now {
        // Fold every file the base does not hold into a new delta: read
        // again, indexed once, written for the next runs.
        let apart: Vec<FileEntry> =
            changed.into_iter().filter(|f| !base.held(f).is_some_and(|d| live[d])).collect();
        let fresh = load_files(root.scope, &apart);
        let counted = std::sync::atomic::AtomicUsize::new(0);
        let segments = Segment::build_packed(&fresh.memories, tokenizer, &counted);
        let bytes = encode(root, &apart, &fresh.memories, &fresh.problems, &segments, listed_at);
        let _ = write_atomic(&root.dir, &delta_path(root), &bytes);
        problems.extend(fresh.problems);
        for doc in (0..base.len()).filter(|&d| live[d] && base.flags(d) & PROBLEMS != 0) {
            match field_problems(root, &base, doc) {
                Some(found) => problems.extend(found),
                None => return rebuild(root, &listings, problems, tokenizer, listed_at),
            }
        }
        let (docs, overlay) = Segment::split(segments);
        let first = stats.len() as u32;
        tables.extend(overlay.into_iter().map(|(f, t)| (f + first, t)));
        stats.push(docs);
        live.extend(std::iter::repeat_n(true, fresh.memories.len()));
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        return Indexed {
            scope: root.scope,
            parts: vec![base],
            fresh: fresh.memories,
            live,
            stats,
            tables,
            problems,
        };
    }
    // Nothing new; files that failed to parse are reported.
    problems.extend(checked.problems);
    problems.extend(read_now.problems);
    let mut parts = vec![base];
    if let Some((delta, (delta_stats, delta_tables))) = delta {
        let first = stats.len() as u32;
        tables.extend(delta_tables.into_iter().map(|(f, t)| (f + first, t)));
        stats.append(delta_stats);
        live.extend(delta_live);
        parts.push(delta);
    }
    let mut first = 0;
    for part in &parts {
        for doc in (0..part.len()).filter(|&d| live[first + d] && part.flags(d) & PROBLEMS != 0) {
            match field_problems(root, part, doc) {
                Some(found) => problems.extend(found),
                // A damaged record: the whole cache goes.
                None => return rebuild(root, &listings, problems, tokenizer, listed_at),
            }
        }
        first += part.len();
    }
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Indexed { scope: root.scope, parts, fresh: Vec::new(), live, stats, tables, problems }
}

/// The messages of `doc`'s defaulted fields, from its record; None when the
/// record is damaged.
fn field_problems(root: &Root, cached: &Cached, doc: usize) -> Option<Vec<Problem>> {
    let (m, messages) = cached.record(doc, root.scope)?;
    let path = m.path.under(&root.dir);
    Some(messages.into_iter().map(|msg| Problem::field(path.clone(), msg)).collect())
}

/// What reading the files written close to a cache build found.
struct Checked {
    /// The entries whose file holds the content indexed: (part, document).
    same: std::collections::HashSet<(usize, usize)>,
    /// Entries whose file changed under the same size and stamp, with
    /// whether it still parses: (part, document, parses).
    differ: Vec<(usize, usize, bool)>,
    /// Parts with a checked file not yet old enough to be trusted.
    young: Vec<usize>,
    /// Parts with a checked file.
    checked: Vec<usize>,
    problems: Vec<Problem>,
}

impl Checked {
    /// True when part `k` had files checked, all held what was indexed and
    /// all are old enough: the part can be marked as built now.
    fn settled(&self, k: usize) -> bool {
        self.checked.contains(&k)
            && !self.young.contains(&k)
            && !self.differ.iter().any(|d| d.0 == k)
    }
}

/// Read the files of `checks` (part, document, file) and compare each with
/// the content its entry was indexed from.
fn verify(
    parts: &[&Cached],
    scope: Scope,
    checks: &[(usize, usize, FileEntry)],
    at: u64,
) -> Checked {
    let files: Vec<FileEntry> = checks.iter().map(|c| c.2.clone()).collect();
    let read = load_files(scope, &files);
    let mut by_path: std::collections::HashMap<&RelPath, &Memory> =
        read.memories.iter().map(|m| (&m.path, m)).collect();
    let mut out = Checked {
        same: Default::default(),
        differ: Vec::new(),
        young: Vec::new(),
        checked: Vec::new(),
        problems: read.problems,
    };
    for (part, doc, f) in checks {
        if !out.checked.contains(part) {
            out.checked.push(*part);
        }
        if f.mtime_ns.saturating_add(RACY_NS) >= at && !out.young.contains(part) {
            out.young.push(*part);
        }
        let now = by_path.remove(&f.rel);
        let same = now.is_some_and(|m| {
            parts[*part]
                .record(*doc, scope)
                .is_some_and(|(c, _)| c.content != 0 && c.content == m.content)
        });
        if same {
            out.same.insert((*part, *doc));
        } else {
            out.differ.push((*part, *doc, now.is_some()));
        }
    }
    // A file that holds what was indexed has its field messages reported
    // from its record, as every cached file does.
    let same: std::collections::HashSet<&std::path::Path> = checks
        .iter()
        .filter(|c| out.same.contains(&(c.0, c.1)))
        .map(|c| c.2.path.as_path())
        .collect();
    out.problems.retain(|p| !same.contains(p.path.as_path()));
    out
}

/// A root's memories as their frontmatter says, through the cache when it
/// is there (only changed files are read), never writing it: for commands
/// that need metadata, not ranking. `listings` is the root as
/// [`snapshot::list`] saw it.
pub fn memories(root: &Root, listings: &[Listing]) -> Vec<Memory> {
    scan_listed(root, listings).memories
}

/// [`scan_all`](crate::scan::scan_all) through the cache: the memories of
/// `roots` with their metadata (not their bodies), shadowing resolved.
pub fn scan_all(roots: &[&Root]) -> crate::scan::Tree {
    crate::scan::resolve(roots.iter().map(|root| (root.scope, scan_root(root))))
}

/// [`scan_root`](crate::scan::scan_root) through the cache: every memory of
/// a root with its metadata (bodies are not read) and the problems found,
/// reading only the files that changed since the cache was built.
pub fn scan_root(root: &Root) -> Scan {
    let (listings, problems) = snapshot::list(root, true);
    let mut scan = scan_listed(root, &listings);
    scan.problems.extend(problems);
    scan.problems.sort_by(|a, b| a.path.cmp(&b.path));
    scan
}

fn scan_listed(root: &Root, listings: &[Listing]) -> Scan {
    let all = || load_files(root.scope, &entries(listings));
    let Some(cached) = open(root, &path(root)) else { return all() };
    let Some(records) = cached.records(root.scope) else { return all() };
    let (live, mut changed) = cached.match_listings(listings);
    let mut scan = Scan::default();
    let mut take = |records: Vec<(Memory, Vec<String>)>, live: &[bool]| {
        for ((m, messages), _) in records.into_iter().zip(live).filter(|(_, live)| **live) {
            let path = m.path.under(&root.dir);
            scan.problems.extend(messages.into_iter().map(|m| Problem::field(path.clone(), m)));
            scan.memories.push(m);
        }
    };
    take(records, &live);
    // Files changed since the base was built, as the delta has them.
    let delta = if changed.is_empty() { None } else { open(root, &delta_path(root)) };
    if let Some((records, delta)) = delta.and_then(|d| Some((d.records(root.scope)?, d))) {
        let mut live = vec![false; delta.len()];
        changed.retain(|f| match delta.current(f) {
            Some(doc) => {
                live[doc] = true;
                false
            }
            None => true,
        });
        take(records, &live);
    }
    let fresh = load_files(root.scope, &changed);
    scan.memories.extend(fresh.memories);
    scan.problems.extend(fresh.problems);
    scan.memories.sort_by(|a, b| walk_order(&a.path, &b.path));
    scan
}

/// Mark a cache file of `root` (still the one `cached` was read from) as
/// built at `at`: every file it holds was checked to be as indexed. The
/// whole file is rewritten with the new time and the names part sealed again.
fn confirm(root: &Root, cached: &Cached, at: u64) {
    let limit = cached.names.total;
    let Ok(mut bytes) =
        crate::files::read(&root.dir, &cached.path, crate::files::Links::Never, limit)
    else {
        return;
    };
    let names_len = u64_at(&bytes, 24).and_then(|v| usize::try_from(v).ok());
    let Some(names_end) = names_len.and_then(|l| HEADER.checked_add(l)) else { return };
    let same = bytes.len() as u64 == cached.names.total
        && names_end <= bytes.len()
        && u64_at(&bytes, HEADER) == Some(cached.names.built_at);
    if !same {
        return;
    }
    bytes[HEADER..HEADER + 8].copy_from_slice(&at.to_le_bytes());
    let sum = checksum(&bytes[HEADER..names_end]);
    bytes[32..40].copy_from_slice(&sum.to_le_bytes());
    // A cache that cannot be written only costs the re-reads next time.
    let _ = write_atomic(&root.dir, &cached.path, &bytes);
}

/// Read every file, index it, and write a new cache.
fn rebuild(
    root: &Root,
    listings: &[Listing],
    mut problems: Vec<Problem>,
    tokenizer: &Tokenizer,
    listed_at: u64,
) -> Indexed {
    let files = entries(listings);
    let files = files.as_slice();
    // Reading counts one step per file, indexing another.
    let progress = Progress::start("indexing memories", 2 * files.len());
    let scan = load_files_counted(root.scope, files, progress.counter());
    progress
        .counter()
        .fetch_add(files.len() - scan.memories.len(), std::sync::atomic::Ordering::Relaxed);
    let segments = Segment::build_packed(&scan.memories, tokenizer, progress.counter());
    drop(progress);
    let bytes = encode(root, files, &scan.memories, &scan.problems, &segments, listed_at);
    // A cache that cannot be written only costs time on the next run; the
    // delta of the cache it replaces holds nothing the new one lacks.
    let _ = write_atomic(&root.dir, &path(root), &bytes);
    let _ = crate::write::remove_file(&root.dir, &delta_path(root));
    problems.extend(scan.problems);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let (stats, tables) = Segment::split(segments);
    Indexed {
        scope: root.scope,
        parts: Vec::new(),
        live: vec![true; scan.memories.len()],
        fresh: scan.memories,
        stats: stats.into(),
        tables,
        problems,
    }
}

/// The cache file: header, meta (file list, statistics, segment table and
/// block indexes; checked whole), then records, then each segment's
/// dictionary and postings (each checked when read).
fn encode(
    root: &Root,
    files: &[FileEntry],
    memories: &[Memory],
    problems: &[Problem],
    segments: &[Segment],
    listed_at: u64,
) -> Vec<u8> {
    let stats: Vec<&DocStats> = segments.iter().flat_map(|s| s.docs.iter()).collect();
    let mut field_problems: std::collections::HashMap<&std::path::Path, Vec<String>> =
        std::collections::HashMap::new();
    for p in problems.iter().filter(|p| !p.skipped) {
        field_problems.entry(&p.path).or_default().push(p.message.clone());
    }
    let n = memories.len();
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for (doc, m) in memories.iter().enumerate() {
        if runs.last().is_none_or(|(c, _)| *c != m.path.category) {
            runs.push((&m.path.category, doc));
        }
    }
    let mut cols = Columns::default();
    let (mut slugs, mut slug_offs) = (Vec::new(), vec![0u32]);
    let (mut sizes, mut mtimes, mut offsets) = (Vec::new(), Vec::new(), vec![0u64]);
    let (mut lengths, mut updated, mut flags, mut triggers) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut records = Vec::new();
    let mut file = files.iter().peekable();
    for (m, stats) in memories.iter().zip(&stats) {
        // Both are in walk order; files that failed to parse have no memory.
        while file.next_if(|f| walk_order(&f.rel, &m.path) == Ordering::Less).is_some() {}
        let (size, stamp) =
            file.peek().filter(|f| f.rel == m.path).map_or((0, 0), |f| (f.size, f.stamp()));
        let full = m.path.under(&root.dir);
        let messages = field_problems.get(full.as_path()).map_or(&[][..], Vec::as_slice);
        let start = records.len();
        records.extend_from_slice(&[0; 4]);
        put_memory(m, &mut records);
        put_list(messages, &mut records);
        let sum = checksum(&records[start + 4..]) as u32;
        records[start..start + 4].copy_from_slice(&sum.to_le_bytes());
        offsets.push(records.len() as u64);
        slugs.extend_from_slice(m.path.slug.as_bytes());
        slug_offs.push(slugs.len() as u32);
        sizes.push(size);
        mtimes.push(stamp);
        lengths.extend_from_slice(&stats.lengths);
        updated.push(stats.boosts.updated as u64);
        flags.push(
            if stats.derived_summary { DERIVED } else { 0 }
                | if stats.boosts.pinned { PINNED } else { 0 }
                | if messages.is_empty() { 0 } else { PROBLEMS }
                | stats.boosts.trigger_count << TRIGGERS_SHIFT,
        );
        triggers.extend_from_slice(&stats.boosts.triggers);
    }
    let tables: Vec<(&[u8], &[u8], &[u8])> = segments
        .iter()
        .filter_map(|s| match &s.terms {
            Terms::Packed(p) => p.bytes(),
            Terms::Built(_) => None,
        })
        .collect();
    let mut category_names = Vec::new();
    let mut category_offs = vec![0u32];
    for (c, _) in &runs {
        category_names.extend_from_slice(c.as_bytes());
        category_offs.push(category_names.len() as u32);
    }
    let category_first: Vec<u32> = runs.iter().map(|r| r.1 as u32).collect();
    let mut dims = Vec::new();
    for ((_, dict, postings), segment) in tables.iter().zip(segments) {
        dims.extend([segment.docs.len() as u64, dict.len() as u64, postings.len() as u64]);
    }
    for v in [listed_at, n as u64, runs.len() as u64] {
        cols.meta.extend_from_slice(&v.to_le_bytes());
    }
    cols.bytes(&category_names);
    cols.u32s(&category_offs);
    cols.u32s(&category_first);
    cols.bytes(&slugs);
    cols.u32s(&slug_offs);
    let names = std::mem::take(&mut cols.meta);
    cols.meta.extend_from_slice(&(tables.len() as u64).to_le_bytes());
    cols.u64s(&sizes);
    cols.u64s(&mtimes);
    cols.u64s(&offsets);
    cols.u32s(&lengths);
    cols.u64s(&updated);
    cols.bytes(&flags);
    cols.u64s(&triggers);
    cols.u64s(&dims);
    for (index, _, _) in &tables {
        cols.bytes(index);
    }
    let meta = cols.meta;
    let body: usize = records.len() + tables.iter().map(|t| t.1.len() + t.2.len()).sum::<usize>();
    let total = HEADER + names.len() + meta.len() + body;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version_tag().to_le_bytes());
    out.extend_from_slice(&(total as u64).to_le_bytes());
    out.extend_from_slice(&(names.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&names).to_le_bytes());
    out.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&meta).to_le_bytes());
    out.extend_from_slice(&names);
    out.extend_from_slice(&meta);
    out.extend_from_slice(&records);
    for (_, dict, postings) in &tables {
        out.extend_from_slice(dict);
        out.extend_from_slice(postings);
    }
    out
}

/// The meta part as it is written: sections of fixed-width little-endian
/// values, each preceded by its length in bytes.
#[derive(Default)]
struct Columns {
    meta: Vec<u8>,
}

impl Columns {
    fn bytes(&mut self, b: &[u8]) {
        self.meta.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.meta.extend_from_slice(b);
    }

    fn u32s(&mut self, v: &[u32]) {
        self.meta.extend_from_slice(&(4 * v.len() as u64).to_le_bytes());
        v.iter().for_each(|x| self.meta.extend_from_slice(&x.to_le_bytes()));
    }

    fn u64s(&mut self, v: &[u64]) {
        self.meta.extend_from_slice(&(8 * v.len() as u64).to_le_bytes());
        v.iter().for_each(|x| self.meta.extend_from_slice(&x.to_le_bytes()));
    }
}

/// Reads the sections [`Columns`] wrote, in order.
struct Sections<'a> {
    meta: &'a [u8],
    at: usize,
}

impl Sections<'_> {
    /// The next section's start, if it holds exactly `len` bytes.
    fn next(&mut self, len: usize) -> Option<usize> {
        let (start, got) = self.any()?;
        (got == len).then_some(start)
    }

    /// The next section: its start and length.
    fn any(&mut self) -> Option<(usize, usize)> {
        let len = usize::try_from(u64_at(self.meta, self.at)?).ok()?;
        let start = self.at + 8;
        self.at = start.checked_add(len).filter(|&end| end <= self.meta.len())?;
        Some((start, len))
    }
}

/// Open a root's cache for its file list and records, checking the names
/// and meta parts. None when it is missing, damaged or from another version.
fn open(root: &Root, path: &std::path::Path) -> Option<Cached> {
    if DISTRUSTED.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let (mut file, _) = crate::files::open(&root.dir, path, crate::files::Links::Never).ok()?;
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let word = |at: usize| u64_at(&header, at).and_then(|v| usize::try_from(v).ok());
    let (total, names_len, names_sum) = (u64_at(&header, 16)?, word(24)?, u64_at(&header, 32)?);
    let (meta_len, meta_sum) = (word(40)?, u64_at(&header, 48)?);
    let version = u64_at(&header, 8)?;
    if &header[..8] != MAGIC || version != version_tag() || file.metadata().ok()?.len() != total {
        return None;
    }
    let names_end = HEADER.checked_add(names_len)?;
    let map = Mapped::open(&file, names_end.checked_add(meta_len)?).ok()?;
    let bytes = map.get(HEADER..names_end)?;
    if checksum(bytes) != names_sum {
        return None;
    }
    let word = |i: usize| u64_at(bytes, 8 * i).and_then(|v| usize::try_from(v).ok());
    let (built_at, n, c) = (u64_at(bytes, 0)?, word(1)?, word(2)?);
    // Counts are checked against the bytes that hold them before they size
    // anything.
    if n > bytes.len() || c > bytes.len() {
        return None;
    }
    let mut sections = Sections { meta: bytes, at: 24 };
    let (blob_at, blob_len) = sections.any()?;
    let name_offs = sections.next(4 * (c + 1))?;
    let firsts = sections.next(4 * c)?;
    let mut categories = Vec::with_capacity(c);
    for i in 0..c {
        let (a, b) = (u32_at(bytes, name_offs + 4 * i)?, u32_at(bytes, name_offs + 4 * i + 4)?);
        let name = bytes.get(blob_at + a as usize..blob_at + b as usize)?;
        let first = u32_at(bytes, firsts + 4 * i)? as usize;
        if categories.last().is_some_and(|(_, f)| *f > first) || first > n {
            return None;
        }
        categories.push((String::from_utf8(name.to_vec()).ok()?, first));
    }
    if u32_at(bytes, name_offs + 4 * c)? as usize != blob_len {
        return None;
    }
    let (slugs_at, slugs_len) = sections.any()?;
    std::str::from_utf8(&bytes[slugs_at..slugs_at + slugs_len]).ok()?;
    let slug_offs = sections.next(4 * (n + 1))?;
    if sections.at != bytes.len() {
        return None;
    }
    let meta = read_meta(&map, names_end, meta_len, meta_sum, n)?;
    let names = Names {
        file: Arc::new(file),
        total,
        built_at,
        len: n,
        categories,
        slugs: HEADER + slugs_at,
        slug_offs: HEADER + slug_offs,
        map: Arc::new(map),
    };
    Some(Cached { path: path.to_path_buf(), names, meta })
}

/// Every document's statistics and the term tables, each with its first document.
type Tables = (Stats, Vec<(u32, Terms)>);

/// The statistics columns of a cache's meta part.
struct CachedStats {
    map: Arc<Mapped>,
    len: usize,
    lengths: usize,
    updated: usize,
    flags: usize,
    triggers: usize,
}

impl StatsColumns for CachedStats {
    fn docs(&self) -> usize {
        self.len
    }

    fn boosts(&self, doc: usize) -> Boosts {
        let flag = self.map.get(self.flags + doc).copied().unwrap_or(0);
        let trigger_count = (flag >> TRIGGERS_SHIFT).min(2);
        let trigger = |k: usize| u64_at(&self.map, self.triggers + 16 * doc + 8 * k).unwrap_or(0);
        Boosts {
            pinned: flag & PINNED != 0,
            updated: u64_at(&self.map, self.updated + 8 * doc).unwrap_or(0) as i64,
            trigger_count,
            // Most memories have no trigger: their masks are not read.
            triggers: if trigger_count == 0 { [0, 0] } else { [trigger(0), trigger(1)] },
        }
    }

    fn lengths(&self, doc: usize) -> [u32; FIELDS] {
        let at = self.lengths + 4 * FIELDS * doc;
        std::array::from_fn(|f| u32_at(&self.map, at + 4 * f).unwrap_or(0))
    }

    fn derived_summary(&self, doc: usize) -> bool {
        self.map.get(self.flags + doc).is_some_and(|f| f & DERIVED != 0)
    }

    fn add_lengths(&self, live: &[bool], totals: &mut [u64; FIELDS]) {
        let rows = self.map.get(self.lengths..self.lengths + 4 * FIELDS * self.len);
        for (row, _) in rows.unwrap_or(&[]).chunks_exact(4 * FIELDS).zip(live).filter(|(_, l)| **l)
        {
            for (t, len) in totals.iter_mut().zip(row.chunks_exact(4)) {
                *t += u64::from(u32::from_le_bytes([len[0], len[1], len[2], len[3]]));
            }
        }
    }
}

/// Check the meta part of a cache of `n` documents (sizes, mtimes, where
/// the records are, statistics), `len` bytes at `at` in `map` with checksum
/// `sum`, and find its columns. None when it is damaged.
fn read_meta(map: &[u8], at: usize, len: usize, sum: u64, n: usize) -> Option<Meta> {
    let bytes = map.get(at..at.checked_add(len)?)?;
    if checksum(bytes) != sum {
        return None;
    }
    let segments = usize::try_from(u64_at(bytes, 0)?).ok()?;
    if segments > bytes.len() || n > bytes.len() {
        return None;
    }
    let mut sections = Sections { meta: bytes, at: 8 };
    let sizes = at + sections.next(8 * n)?;
    let mtimes = at + sections.next(8 * n)?;
    let records = at + sections.next(8 * (n + 1))?;
    let lengths = at + sections.next(4 * FIELDS * n)?;
    let updated = at + sections.next(8 * n)?;
    let flags = at + sections.next(n)?;
    let triggers = at + sections.next(16 * n)?;
    let dims = at + sections.next(24 * segments)?;
    let indexes = at + sections.at;
    let records_at = (at + len) as u64;
    Some(Meta {
        sizes,
        mtimes,
        records,
        lengths,
        updated,
        flags,
        triggers,
        dims,
        indexes,
        segments,
        records_at,
    })
}

/// The ranking part of an opened cache: every document's statistics and the
/// term tables (dictionaries and postings stay in the file). None when the
/// meta part does not describe the file.
fn read_tables(names: &Names, meta: &Meta) -> Option<Tables> {
    let (n, bytes) = (names.len, &names.map[..]);
    // Their sizes were checked with the meta part: every read is in bounds.
    let columns = CachedStats {
        map: names.map.clone(),
        len: n,
        lengths: meta.lengths,
        updated: meta.updated,
        flags: meta.flags,
        triggers: meta.triggers,
    };
    let mut stats = Stats::default();
    stats.push_columns(Box::new(columns));
    let mut sections = Sections { meta: bytes, at: meta.indexes };
    let mut offset = meta.records_at.checked_add(u64_at(bytes, meta.records + 8 * n)?)?;
    let mut tables = Vec::with_capacity(meta.segments);
    let mut first = 0u64;
    for s in 0..meta.segments {
        let dim = |k: usize| u64_at(bytes, meta.dims + 8 * (3 * s + k));
        let (docs, dict_len, postings_len) = (dim(0)?, dim(1)?, dim(2)?);
        let (index_at, index_len) = sections.any()?;
        let index = Held::mapped(&names.map, index_at, index_len)?;
        let dict = Bytes::File { file: names.file.clone(), at: offset, len: dict_len };
        offset = offset.checked_add(dict_len)?;
        let postings = Bytes::File { file: names.file.clone(), at: offset, len: postings_len };
        offset = offset.checked_add(postings_len)?;
        let packed = Packed::open(index, dict, postings)?;
        tables.push((u32::try_from(first).ok()?, Terms::Packed(packed)));
        first = first.checked_add(docs)?;
    }
    let covered = first == n as u64;
    let whole = sections.at == bytes.len() && offset == names.total;
    (covered && whole).then_some((stats, tables))
}

/// Open a root's cache for ranking.
fn read(root: &Root, path: &std::path::Path) -> Option<(Cached, Tables)> {
    let cached = open(root, path)?;
    let tables = read_tables(&cached.names, &cached.meta)?;
    Some((cached, tables))
}

/// The format number mixed with the program version: an upgrade rebuilds.
fn version_tag() -> u64 {
    checksum(env!("CARGO_PKG_VERSION").as_bytes()) ^ FORMAT
}

fn put_opt(s: &Option<String>, out: &mut Vec<u8>) {
    match s {
        Some(s) => {
            out.push(1);
            put_bytes(s.as_bytes(), out);
        }
        None => out.push(0),
    }
}

fn get_opt(at: &mut &[u8]) -> Option<Option<String>> {
    let (&flag, rest) = at.split_first()?;
    *at = rest;
    match flag {
        1 => get_string(at).map(Some),
        0 => Some(None),
        _ => None,
    }
}

fn put_list(items: &[String], out: &mut Vec<u8>) {
    varint(items.len() as u64, out);
    for s in items {
        put_bytes(s.as_bytes(), out);
    }
}

fn get_list(at: &mut &[u8]) -> Option<Vec<String>> {
    let n = read_varint(at)?;
    (0..n).map(|_| get_string(at)).collect()
}

fn put_i64(v: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn get_i64(at: &mut &[u8]) -> Option<i64> {
    let (bytes, rest) = at.split_first_chunk::<8>()?;
    *at = rest;
    Some(i64::from_le_bytes(*bytes))
}

fn put_memory(m: &Memory, out: &mut Vec<u8>) {
    for s in [&m.title, &m.kind, &m.summary, &m.highlight] {
        put_bytes(s.as_bytes(), out);
    }
    put_i64(m.created, out);
    put_i64(m.updated, out);
    put_list(&m.load_when, out);
    put_list(&m.tags, out);
    put_list(&m.paths, out);
    out.push(u8::from(m.pinned) | u8::from(m.summary_derived) << 1);
    for s in [&m.role, &m.supersedes, &m.superseded_by] {
        put_opt(s, out);
    }
    put_i64(m.content as i64, out);
}

fn get_memory(path: RelPath, scope: Scope, at: &mut &[u8]) -> Option<Memory> {
    let (title, kind, summary, highlight) =
        (get_string(at)?, get_string(at)?, get_string(at)?, get_string(at)?);
    let (created, updated) = (get_i64(at)?, get_i64(at)?);
    let (load_when, tags, paths) = (get_list(at)?, get_list(at)?, get_list(at)?);
    let (&flags, rest) = at.split_first()?;
    *at = rest;
    let (role, supersedes, superseded_by) = (get_opt(at)?, get_opt(at)?, get_opt(at)?);
    let content = get_i64(at)? as u64;
    Some(Memory {
        path,
        scope,
        title,
        kind,
        summary,
        summary_derived: flags & 2 != 0,
        highlight,
        created,
        updated,
        load_when,
        pinned: flags & 1 != 0,
        tags,
        role,
        paths,
        supersedes,
        superseded_by,
        body: String::new(),
        content,
    })
}

/// The memories of the selected roots, numbered as the corpus numbers its
/// documents. Cached memories are read from their records on first use.
pub struct Docs {
    roots: Vec<Indexed>,
    /// Each root's first document.
    firsts: Vec<usize>,
    len: usize,
    /// Cached memories read so far, in chunks of [`CHUNK`] made on first use
    /// (a query reads a few of a hundred thousand).
    loaded: Vec<OnceCell<Box<[Loaded]>>>,
    damaged: Cell<bool>,
}

type Loaded = OnceCell<Option<Box<Memory>>>;

const CHUNK: usize = 256;

impl Docs {
    /// Number of documents, dead ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no documents at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn locate(&self, doc: usize) -> (&Indexed, usize) {
        let r = self.firsts.partition_point(|&f| f <= doc) - 1;
        (&self.roots[r], doc - self.firsts[r])
    }

    /// The scope, category and slug of a document, without reading it.
    pub fn key(&self, doc: usize) -> (Scope, &str, &str) {
        let (root, local) = self.locate(doc);
        let (category, slug) = root.key(local);
        (root.scope, category, slug)
    }

    /// The live document at `category/slug` in the root of `scope`.
    pub fn find(&self, scope: Scope, category: &str, slug: &str) -> Option<usize> {
        let r = self.roots.iter().position(|r| r.scope == scope)?;
        Some(self.firsts[r] + self.roots[r].find_live(category, slug)?)
    }

    /// True once a record failed its checksum: answers must not be trusted
    /// and the caches must be rebuilt.
    pub fn is_damaged(&self) -> bool {
        // A mapped cache truncated in place under us read as zeros.
        self.damaged.get() || crate::mapped::faulted()
    }

    /// Every memory the root of `scope` holds now, shadowed or not (bodies
    /// are not read); None when that root is not indexed or a record is
    /// damaged.
    pub fn root_memories(&self, scope: Scope) -> Option<Vec<Memory>> {
        let root = self.roots.iter().find(|r| r.scope == scope)?;
        let all = root.all()?.into_iter().zip(&root.live);
        Some(all.filter(|(_, live)| **live).map(|(m, _)| m).collect())
    }

    /// Every document's memory, in order; None when a record is damaged.
    pub fn to_vec(&self) -> Option<Vec<Memory>> {
        let mut out = Vec::with_capacity(self.len());
        for root in &self.roots {
            out.extend(root.all()?);
        }
        Some(out)
    }
}

impl Memories for Docs {
    fn memory(&self, doc: usize) -> Option<&Memory> {
        if doc >= self.len {
            return None;
        }
        let (root, local) = self.locate(doc);
        if let Some(fresh) = local.checked_sub(root.cached_len()) {
            return root.fresh.get(fresh);
        }
        let chunk = self.loaded.get(doc / CHUNK)?;
        let chunk = chunk.get_or_init(|| (0..CHUNK).map(|_| OnceCell::new()).collect());
        chunk
            .get(doc % CHUNK)?
            .get_or_init(|| {
                let (cached, local) = root.part(local)?;
                let record = cached.record(local, root.scope).map(|(m, _)| Box::new(m));
                if record.is_none() {
                    self.damaged.set(true);
                }
                record
            })
            .as_deref()
    }
}

/// The selected roots indexed as one corpus, and their problems.
pub struct Library {
    pub docs: Docs,
    pub corpus: Corpus,
    pub problems: Vec<Problem>,
}

/// [`index_all`] with every memory read: for commands that look at all of
/// them. A damaged record drops the caches and indexes again from the files.
pub fn index_all_read(roots: &[&Root]) -> (Vec<Memory>, Library) {
    let lib = index_all(roots);
    if let Some(memories) = lib.docs.to_vec() {
        return (memories, lib);
    }
    distrust(roots);
    let lib = index_all(roots);
    (lib.docs.to_vec().unwrap_or_default(), lib)
}

/// Index the selected roots as one corpus, project first. A global memory
/// at the same path as a live project memory is shadowed: known, not ranked.
pub fn index_all(roots: &[&Root]) -> Library {
    let tokenizer = Tokenizer::new();
    let mut indexed: Vec<Indexed> = roots.iter().map(|root| index_root(root, &tokenizer)).collect();
    // A later root's memory at a path an earlier root has is shadowed: it
    // exists (its root's `live` says so) but is not ranked.
    let shadowed: Vec<Vec<usize>> = (0..indexed.len())
        .map(|k| {
            let (earlier, later) = (&indexed[..k], &indexed[k]);
            if earlier.iter().all(|e| e.len() == 0) {
                return Vec::new();
            }
            (0..later.len())
                .filter(|&d| later.live[d])
                .filter(|&d| {
                    let (category, slug) = later.key(d);
                    earlier.iter().any(|e| e.find_live(category, slug).is_some())
                })
                .collect()
        })
        .collect();
    let mut live = Vec::new();
    let mut stats = Stats::default();
    let mut tables = Vec::new();
    let mut problems = Vec::new();
    let mut firsts = Vec::new();
    for (ix, shadowed) in indexed.iter_mut().zip(shadowed) {
        let first = live.len();
        firsts.push(first);
        live.extend_from_slice(&ix.live);
        for d in shadowed {
            live[first + d] = false;
        }
        stats.append(std::mem::take(&mut ix.stats));
        tables.extend(ix.tables.drain(..).map(|(f, t)| (f + first as u32, t)));
        problems.append(&mut ix.problems);
    }
    let len = live.len();
    let loaded = (0..len.div_ceil(CHUNK)).map(|_| OnceCell::new()).collect();
    let corpus = Corpus::assemble(live, stats, tables);
    let docs = Docs { roots: indexed, firsts, len, loaded, damaged: Cell::new(false) };
    Library { docs, corpus, problems }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root of three memories and its cache, built.
    fn built() -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
        std::fs::create_dir_all(tmp.path().join("facts")).unwrap();
        for slug in ["a", "b", "c"] {
            let text = format!("---\nsummary: fact {slug}\n---\nbody {slug}\n");
            std::fs::write(tmp.path().join(format!("facts/{slug}.md")), text).unwrap();
        }
        let (listings, problems) = crate::scan::list(&root);
        rebuild(&root, &listings, problems, &Tokenizer::default(), now_ns());
        (tmp, root)
    }

    #[test]
    fn a_crafted_record_offset_is_refused_not_allocated() {
        let (_tmp, root) = built();
        assert_eq!(open(&root, &path(&root)).unwrap().records(Scope::Project).unwrap().len(), 3);
        let mut bytes = std::fs::read(path(&root)).unwrap();
        let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        let meta_at = HEADER + word(&bytes, 24) as usize;
        let meta_len = word(&bytes, 40) as usize;
        // The meta part: segments, then length-prefixed columns: sizes and
        // mtimes (8 bytes a memory), then the record offsets (n + 1).
        let n = 3;
        let offsets = meta_at + 8 + 2 * (8 + 8 * n) + 8;
        for value in [u64::MAX, u64::MAX / 2, 1 << 36] {
            bytes[offsets + 8 * n..offsets + 8 * n + 8].copy_from_slice(&value.to_le_bytes());
            let sum = checksum(&bytes[meta_at..meta_at + meta_len]);
            bytes[48..56].copy_from_slice(&sum.to_le_bytes());
            std::fs::write(path(&root), &bytes).unwrap();
            let cached = open(&root, &path(&root)).expect("the checksums were sealed again");
            assert!(cached.records(Scope::Project).is_none());
            assert!(cached.record(2, Scope::Project).is_none());
            // A command's read falls back to the files themselves.
            assert_eq!(scan_root(&root).memories.len(), 3);
        }
    }

    const S: u64 = 1_000_000_000;

    fn write(root: &Root, rel: &str, text: &str) {
        std::fs::write(root.dir.join(rel), text).unwrap();
    }

    /// A root of three memories whose cache was built `after` nanoseconds
    /// after they were written; returns that build time.
    fn built_after(after: u64) -> (tempfile::TempDir, Root, u64) {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
        std::fs::create_dir_all(tmp.path().join("facts")).unwrap();
        for slug in ["a", "b", "c"] {
            write(
                &root,
                &format!("facts/{slug}.md"),
                &format!("---\nsummary: fact {slug}\n---\nbody {slug}\n"),
            );
        }
        let at = now_ns() + after;
        let (listings, problems) = crate::scan::list(&root);
        rebuild(&root, &listings, problems, &Tokenizer::default(), at);
        (tmp, root, at)
    }

    fn summary(ix: &Indexed, slug: &str) -> String {
        let doc = ix.find_live("facts", slug).unwrap();
        match ix.part(doc) {
            Some((part, d)) => part.record(d, ix.scope).unwrap().0.summary,
            None => ix.fresh[doc - ix.cached_len()].summary.clone(),
        }
    }

    #[test]
    fn a_changed_file_is_read_once_then_held_by_the_delta() {
        let (_tmp, root, at) = built_after(3 * S);
        write(&root, "facts/b.md", "---\nsummary: fact b, edited\n---\nbody b, longer now\n");
        write(&root, "facts/d.md", "---\nsummary: fact d\n---\nbody d\n");
        std::fs::remove_file(root.dir.join("facts/c.md")).unwrap();
        let tok = Tokenizer::default();
        let first = index_at(&root, &tok, at + 3 * S);
        assert_eq!(first.fresh.len(), 2, "the edited and the added file are read");
        assert!(delta_path(&root).exists());
        let second = index_at(&root, &tok, at + 4 * S);
        assert!(second.fresh.is_empty(), "the second run reads no file");
        assert_eq!(second.parts.len(), 2);
        assert_eq!(second.live.iter().filter(|l| **l).count(), 3);
        assert_eq!(summary(&second, "b"), "fact b, edited");
        assert_eq!(summary(&second, "d"), "fact d");
        assert!(second.find_live("facts", "c").is_none());
        // The listing path reads the delta too, and agrees with the files.
        let listed: Vec<_> = scan_root(&root).memories.into_iter().map(|m| m.summary).collect();
        assert_eq!(listed, ["fact a", "fact b, edited", "fact d"]);
        // A later change rewrites the delta, which then holds both.
        write(&root, "facts/a.md", "---\nsummary: fact a, edited\n---\nbody a\n");
        assert_eq!(index_at(&root, &tok, at + 5 * S).fresh.len(), 3);
        let third = index_at(&root, &tok, at + 6 * S);
        assert!(third.fresh.is_empty());
        assert_eq!(summary(&third, "a"), "fact a, edited");
        assert_eq!(summary(&third, "b"), "fact b, edited");
    }

    #[test]
    fn files_written_as_the_cache_was_built_are_compared_then_trusted() {
        let (_tmp, root, _) = built_after(0);
        write(&root, "facts/c.md", "---\nsummary: fact c\npinned: maybe\n---\nbody c\n");
        let at = now_ns();
        let (listings, problems) = crate::scan::list(&root);
        rebuild(&root, &listings, problems, &Tokenizer::default(), at);
        let tok = Tokenizer::default();
        // Within the window: each file is read and compared, none re-indexed.
        let soon = index_at(&root, &tok, at + S / 2);
        assert!(soon.fresh.is_empty());
        let reported = soon.problems.iter().filter(|p| p.path.ends_with("facts/c.md")).count();
        assert_eq!(reported, 1, "{:?}", soon.problems);
        assert_eq!(soon.live.iter().filter(|l| **l).count(), 3);
        assert!(!delta_path(&root).exists());
        assert_eq!(open(&root, &path(&root)).unwrap().names.built_at, at, "not sealed while young");
        // Once old enough, the cache is marked as built then.
        index_at(&root, &tok, at + 3 * S);
        assert_eq!(open(&root, &path(&root)).unwrap().names.built_at, at + 3 * S);
        let (cached, _) = read(&root, &path(&root)).unwrap();
        let (live, changed) = cached.match_listings(&crate::scan::list(&root).0);
        assert!(changed.is_empty() && live.iter().all(|l| *l));
    }

    #[test]
    fn a_file_that_does_not_parse_is_reported_every_run_and_never_cached() {
        let (_tmp, root, at) = built_after(3 * S);
        write(&root, "facts/bad.md", "---\nsummary: [unclosed\n---\nbody\n");
        let tok = Tokenizer::default();
        for k in 1..3 {
            let ix = index_at(&root, &tok, at + k * 3 * S);
            assert!(ix.problems.iter().any(|p| p.path.ends_with("facts/bad.md")), "run {k}");
            assert!(!delta_path(&root).exists(), "run {k}: nothing new to hold");
        }
    }

    #[test]
    fn a_damaged_delta_is_passed_over_and_written_again() {
        let (_tmp, root, at) = built_after(3 * S);
        write(&root, "facts/b.md", "---\nsummary: fact b, edited\n---\nbody b\n");
        let tok = Tokenizer::default();
        index_at(&root, &tok, at + 3 * S);
        let mut bytes = std::fs::read(delta_path(&root)).unwrap();
        let last = bytes.len() - 1;
        bytes[HEADER + 1] ^= 0xff;
        bytes[last] ^= 0xff;
        std::fs::write(delta_path(&root), &bytes).unwrap();
        let ix = index_at(&root, &tok, at + 4 * S);
        assert_eq!(ix.fresh.len(), 1);
        assert_eq!(summary(&ix, "b"), "fact b, edited");
        assert!(index_at(&root, &tok, at + 5 * S).fresh.is_empty(), "written again");
    }
}
