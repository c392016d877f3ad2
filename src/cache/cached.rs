//! A cache file, opened: its header and names checked, its columns found,
//! records read one at a time when asked.

use std::cmp::Ordering;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::format::{
    Col, DERIVED, HEADER, MAGIC, Meta, NamePart, PINNED, Sections, TRIGGERS_SHIFT, version_tag,
    word,
};
use super::kept::{self, Matched};
use super::mapped::Mapped;
use super::names::{Names, name_order};
use super::packed::{Bytes, Held, Packed};
use super::records::{get_list, get_memory};
use crate::base::codec::{checksum, read_at, u32_at, u64_at};
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::rank::corpus::{Boosts, FIELDS, Stats, StatsColumns, Terms};

/// A root's cache, opened: the file list and where each record is, as
/// fixed-width columns (read as they lie, not parsed).
#[derive(Clone)]
pub(super) struct Cached {
    pub(super) path: PathBuf,
    pub(super) file: Arc<File>,
    /// The file's length.
    pub(super) total: u64,
    /// The header, names and meta parts, mapped.
    pub(super) map: Arc<Mapped>,
    pub(super) names: Names,
    pub(super) meta: Meta,
    /// The entries a kept listing matched, by the listing's id: shared by
    /// the copies a long-lived process keeps of this file.
    pub(super) matched: Arc<Mutex<Matched>>,
}

impl Cached {
    pub(super) fn len(&self) -> usize {
        self.names.len
    }

    pub(super) fn slug(&self, doc: usize) -> &str {
        self.names.slug(doc)
    }

    pub(super) fn category(&self, doc: usize) -> &str {
        self.names.category(doc)
    }

    pub(super) fn run(&self, category: &str) -> std::ops::Range<usize> {
        self.names.run(category)
    }

    /// The mapped file, where the columns lie.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub(super) fn size(&self, doc: usize) -> u64 {
        u64_at(self.bytes(), self.meta.at(Col::Sizes) + 8 * doc).unwrap_or(u64::MAX)
    }

    pub(super) fn mtime(&self, doc: usize) -> u64 {
        u64_at(self.bytes(), self.meta.at(Col::Stamps) + 8 * doc).unwrap_or(u64::MAX)
    }

    pub(super) fn flags(&self, doc: usize) -> u8 {
        self.bytes().get(self.meta.at(Col::Flags) + doc).copied().unwrap_or(0)
    }

    /// The document at `category/slug`, if the cache has one.
    pub(super) fn find(&self, category: &str, slug: &str) -> Option<usize> {
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

    /// Where record `doc` is, relative to the first record, and its length.
    pub(super) fn record_span(&self, doc: usize) -> Option<(u64, u64)> {
        let start = u64_at(self.bytes(), self.meta.at(Col::Records) + 8 * doc)?;
        let end = u64_at(self.bytes(), self.meta.at(Col::Records) + 8 * (doc + 1))?;
        Some((start, end.checked_sub(start)?))
    }

    /// `Some` when `len` bytes from `start` of the records lie inside the
    /// file: a damaged or crafted offset must not size an allocation.
    pub(super) fn within(&self, start: u64, len: u64) -> Option<()> {
        let end = self.meta.records_at.checked_add(start)?.checked_add(len)?;
        (end <= self.total).then_some(())
    }

    /// Read one record: the memory and the messages of its defaulted fields.
    pub(super) fn record(&self, doc: usize, scope: Scope) -> Option<(Memory, Vec<String>)> {
        let (start, len) = self.record_span(doc)?;
        self.within(start, len)?;
        let mut buf = vec![0u8; usize::try_from(len).ok()?];
        read_at(&self.file, &mut buf, self.meta.records_at.checked_add(start)?).ok()?;
        self.decode_record(doc, scope, &buf)
    }

    /// Every record, read at once (for commands that want them all).
    pub(super) fn records(&self, scope: Scope) -> Option<Vec<(Memory, Vec<String>)>> {
        let end = u64_at(self.bytes(), self.meta.at(Col::Records) + 8 * self.len())?;
        self.within(0, end)?;
        let mut buf = vec![0u8; usize::try_from(end).ok()?];
        read_at(&self.file, &mut buf, self.meta.records_at).ok()?;
        (0..self.len())
            .map(|doc| {
                let (start, len) = self.record_span(doc)?;
                let (start, len) = (usize::try_from(start).ok()?, usize::try_from(len).ok()?);
                self.decode_record(doc, scope, buf.get(start..start.checked_add(len)?)?)
            })
            .collect()
    }

    pub(super) fn decode_record(
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
}

/// Cache files a long-lived process opened and checked ([`kept`]).
static OPENED: kept::Files<Cached> = kept::Files::new();

/// Open a root's cache for its file list and records, checking the names
/// and meta parts. None when it is missing, damaged or from another version.
#[allow(unsafe_code, reason = "maps the cache file: see the SAFETY note below")]
pub(super) fn open(root: &Root, path: &std::path::Path) -> Option<Cached> {
    if DISTRUSTED.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let (mut file, _) =
        crate::store::files::open(&root.dir, path, crate::store::files::Links::Never).ok()?;
    // A long-lived process opens the same file again: checked once.
    let identity =
        super::watch::enabled().then(|| crate::store::identity::identity(&file)).flatten();
    if let Some(known) = identity.and_then(|identity| OPENED.get(path, identity)) {
        return Some(known);
    }
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let len = |at: usize| u64_at(&header, at).and_then(|v| usize::try_from(v).ok());
    let total = u64_at(&header, word::TOTAL)?;
    let (names_len, names_sum) = (len(word::NAMES_LEN)?, u64_at(&header, word::NAMES_SUM)?);
    let (meta_len, meta_sum) = (len(word::META_LEN)?, u64_at(&header, word::META_SUM)?);
    let version = u64_at(&header, word::VERSION)?;
    if &header[..8] != MAGIC || version != version_tag() || file.metadata().ok()?.len() != total {
        return None;
    }
    let names_end = HEADER.checked_add(names_len)?;
    // SAFETY: every value read from the map below is checked against its
    // length and checksum before use, records and tables are bounds-checked
    // and checksummed as read, and `Docs::is_damaged` consults `faulted`.
    let map = unsafe { Mapped::open(&file, names_end.checked_add(meta_len)?) }.ok()?;
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
    let mut parts = [(0, 0); NamePart::ALL.len()];
    for part in NamePart::ALL {
        parts[part as usize] = match part.len(n, c) {
            Some(len) => (sections.next(len)?, len),
            None => sections.any()?,
        };
    }
    let at = |part: NamePart| parts[part as usize];
    let ((blob_at, blob_len), (name_offs, _), (firsts, _)) =
        (at(NamePart::Categories), at(NamePart::CategoryEnds), at(NamePart::CategoryFirsts));
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
    let ((slugs_at, slugs_len), (slug_offs, _)) = (at(NamePart::Slugs), at(NamePart::SlugEnds));
    std::str::from_utf8(&bytes[slugs_at..slugs_at + slugs_len]).ok()?;
    if sections.at != bytes.len() {
        return None;
    }
    let meta = read_meta(&map, names_end, meta_len, meta_sum, n)?;
    let map = Arc::new(map);
    let names = Names {
        built_at,
        len: n,
        categories,
        slugs: Held::mapped(&map, HEADER + slugs_at, slugs_len)?,
        slug_offs: Held::mapped(&map, HEADER + slug_offs, 4 * (n + 1))?,
    };
    let (file, matched) = (Arc::new(file), Arc::default());
    let path = path.to_path_buf();
    let cached = Cached { path, file, total, map, names, meta, matched };
    if let Some(identity) = identity {
        OPENED.keep(&cached.path, identity, &cached);
    }
    Some(cached)
}

/// Every document's statistics and the term tables, each with its first document.
pub(super) type Tables = (Stats, Vec<(u32, Terms)>);

/// The statistics columns of a cache's meta part.
pub(super) struct CachedStats {
    pub(super) map: Arc<Mapped>,
    pub(super) len: usize,
    pub(super) lengths: usize,
    pub(super) updated: usize,
    pub(super) flags: usize,
    pub(super) triggers: usize,
}

impl StatsColumns for CachedStats {
    fn docs(&self) -> usize {
        self.len
    }

    fn boosts(&self, doc: usize) -> Boosts {
        let updated = u64_at(&self.map, self.updated + 8 * doc).unwrap_or(0) as i64;
        Boosts { updated, ..self.pin_and_triggers(doc) }
    }

    fn pin_and_triggers(&self, doc: usize) -> Boosts {
        let flag = self.map.get(self.flags + doc).copied().unwrap_or(0);
        let trigger_count = (flag >> TRIGGERS_SHIFT).min(2);
        let trigger = |k: usize| u64_at(&self.map, self.triggers + 16 * doc + 8 * k).unwrap_or(0);
        Boosts {
            pinned: flag & PINNED != 0,
            updated: 0,
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
pub(super) fn read_meta(map: &[u8], at: usize, len: usize, sum: u64, n: usize) -> Option<Meta> {
    let bytes = map.get(at..at.checked_add(len)?)?;
    if checksum(bytes) != sum {
        return None;
    }
    let segments = usize::try_from(u64_at(bytes, 0)?).ok()?;
    if segments > bytes.len() || n > bytes.len() {
        return None;
    }
    let mut sections = Sections { meta: bytes, at: 8 };
    let mut cols = [0; Col::ALL.len()];
    for col in Col::ALL {
        cols[col as usize] = at + sections.next(col.len(n))?;
    }
    let dims = at + sections.next(24 * segments)?;
    let indexes = at + sections.at;
    let records_at = (at + len) as u64;
    Some(Meta { cols, dims, indexes, segments, records_at })
}

/// The ranking part of an opened cache: every document's statistics and the
/// term tables (dictionaries and postings stay in the file). None when the
/// meta part does not describe the file.
pub(super) fn read_tables(cached: &Cached) -> Option<Tables> {
    let (meta, n, bytes) = (&cached.meta, cached.len(), &cached.map[..]);
    // Their sizes were checked with the meta part: every read is in bounds.
    let columns = CachedStats {
        map: cached.map.clone(),
        len: n,
        lengths: meta.at(Col::Lengths),
        updated: meta.at(Col::Updated),
        flags: meta.at(Col::Flags),
        triggers: meta.at(Col::Triggers),
    };
    let mut stats = Stats::default();
    stats.push_columns(Box::new(columns));
    let mut sections = Sections { meta: bytes, at: meta.indexes };
    let mut offset = meta.records_at.checked_add(u64_at(bytes, meta.at(Col::Records) + 8 * n)?)?;
    let mut tables = Vec::with_capacity(meta.segments);
    let mut first = 0u64;
    for s in 0..meta.segments {
        let dim = |k: usize| u64_at(bytes, meta.dims + 8 * (3 * s + k));
        let (docs, dict_len, postings_len) = (dim(0)?, dim(1)?, dim(2)?);
        let (index_at, index_len) = sections.any()?;
        let index = Held::mapped(&cached.map, index_at, index_len)?;
        let dict = Bytes::File { file: cached.file.clone(), at: offset, len: dict_len };
        offset = offset.checked_add(dict_len)?;
        let postings = Bytes::File { file: cached.file.clone(), at: offset, len: postings_len };
        offset = offset.checked_add(postings_len)?;
        let packed = Packed::open(index, dict, postings)?;
        tables.push((u32::try_from(first).ok()?, Terms::Stored(Box::new(packed))));
        first = first.checked_add(docs)?;
    }
    let covered = first == n as u64;
    let whole = sections.at == bytes.len() && offset == cached.total;
    (covered && whole).then_some((stats, tables))
}

/// Open a root's cache for ranking.
pub(super) fn read(root: &Root, path: &std::path::Path) -> Option<(Cached, Tables)> {
    let cached = open(root, path)?;
    let tables = read_tables(&cached)?;
    Some((cached, tables))
}

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
    let _ = crate::store::write::remove_file(&root.dir, &path(root));
    let _ = crate::store::write::remove_file(&root.dir, &delta_path(root));
}

/// The cache file of a root.
pub fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("index.bin")
}

/// The cache of the files changed since a root's cache was built.
pub(super) fn delta_path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("delta.bin")
}
