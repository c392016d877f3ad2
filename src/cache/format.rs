//! The cache file's layout: header, names, meta columns, records, term
//! tables; how it is written and the sections it is read back by.

use std::cmp::Ordering;

use super::names::walk_order;
use super::packed::PackedSegment;
use super::records::{put_list, put_memory};
use crate::base::codec::{checksum, u64_at};
use crate::model::memory::Memory;
use crate::model::roots::Root;
use crate::rank::corpus::{DocStats, FIELDS};
use crate::store::scan::{FileEntry, Problem};

/// Files changed this close to the listing a cache was built from are read
/// again: two seconds covers the coarsest file system clocks.
pub const RACY_NS: u64 = 2_000_000_000;

/// The meta part of a cache.
#[derive(Clone)]
pub(super) struct Meta {
    /// Where each column of [`Col::ALL`] starts in the file.
    pub(super) cols: [usize; Col::ALL.len()],
    /// Where the segment sizes (u64 × 3 each) start; the segments' block
    /// indexes follow them.
    pub(super) dims: usize,
    pub(super) indexes: usize,
    pub(super) segments: usize,
    /// Where records start in the file.
    pub(super) records_at: u64,
}

/// The meta part's per-document columns, in the order they are written
/// and read: the one description of that part's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    /// File sizes (u64).
    Sizes,
    /// File stamps: mtime, ctime and inode in one u64.
    Stamps,
    /// Where each record starts, relative to the first (u64, one more row
    /// than documents: the end of the last).
    Records,
    /// Field lengths (u32 × FIELDS).
    Lengths,
    /// `updated` (i64).
    Updated,
    /// Flags (u8, below).
    Flags,
    /// Trigger masks (u64 × 2).
    Triggers,
}

impl Col {
    pub(super) const ALL: [Col; 7] = [
        Col::Sizes,
        Col::Stamps,
        Col::Records,
        Col::Lengths,
        Col::Updated,
        Col::Flags,
        Col::Triggers,
    ];

    /// Bytes per document.
    pub(super) fn width(self) -> usize {
        match self {
            Col::Sizes | Col::Stamps | Col::Records | Col::Updated => 8,
            Col::Lengths => 4 * FIELDS,
            Col::Flags => 1,
            Col::Triggers => 16,
        }
    }

    /// The column's length in bytes for `n` documents.
    pub(super) fn len(self, n: usize) -> usize {
        self.width() * (n + usize::from(self == Col::Records))
    }
}

/// The names part's sections after its three words (build time, documents,
/// categories), in the order they are written and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NamePart {
    /// Category names, UTF-8, back to back.
    Categories,
    /// Where each category name ends (u32, one more than categories, from 0).
    CategoryEnds,
    /// Each category's first document (u32).
    CategoryFirsts,
    /// Slugs, UTF-8, back to back.
    Slugs,
    /// Where each slug ends (u32, one more than documents, from 0).
    SlugEnds,
}

impl NamePart {
    pub(super) const ALL: [NamePart; 5] = [
        NamePart::Categories,
        NamePart::CategoryEnds,
        NamePart::CategoryFirsts,
        NamePart::Slugs,
        NamePart::SlugEnds,
    ];

    /// The section's length in bytes for `n` documents in `c` categories;
    /// None for text, whose length is its own.
    pub(super) fn len(self, n: usize, c: usize) -> Option<usize> {
        match self {
            NamePart::Categories | NamePart::Slugs => None,
            NamePart::CategoryEnds => Some(4 * (c + 1)),
            NamePart::CategoryFirsts => Some(4 * c),
            NamePart::SlugEnds => Some(4 * (n + 1)),
        }
    }
}

impl Meta {
    /// Where column `col` starts in the file.
    pub(super) fn at(&self, col: Col) -> usize {
        self.cols[col as usize]
    }
}

/// A document's flags in the meta part.
pub(super) const DERIVED: u8 = 1;
pub(super) const PINNED: u8 = 2;
/// The file had fields that were defaulted (reported on every run).
pub(super) const PROBLEMS: u8 = 4;
/// The number of trigger masks in use, in the bits above.
pub(super) const TRIGGERS_SHIFT: u8 = 3;

pub(super) const MAGIC: &[u8; 8] = b"MEMIDX\0\x02";
/// Bump when the tokenizer, the fields or this format change.
pub(super) const FORMAT: u64 = 19;

/// Header: magic, version tag, total length, then the length and checksum
/// of the names part and of the meta part.
pub(super) const HEADER: usize = 56;

/// Where each word of the header lies, after the 8-byte magic: the one
/// description of the header, for writing it and reading it back.
pub(super) mod word {
    /// The format and program version tag.
    pub const VERSION: usize = 8;
    /// The file's whole length.
    pub const TOTAL: usize = 16;
    /// The names part's length and checksum.
    pub const NAMES_LEN: usize = 24;
    pub const NAMES_SUM: usize = 32;
    /// The meta part's length and checksum.
    pub const META_LEN: usize = 40;
    pub const META_SUM: usize = 48;
}

/// Set the header word at `at`.
pub(super) fn set_word(header: &mut [u8], at: usize, value: u64) {
    header[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// The cache file: header, meta (file list, statistics, segment table and
/// block indexes; checked whole), then records, then each segment's
/// dictionary and postings (each checked when read).
pub(super) fn encode(
    root: &Root,
    files: &[FileEntry],
    memories: &[Memory],
    problems: &[Problem],
    segments: &[PackedSegment],
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
    let tables: Vec<(&[u8], &[u8], &[u8])> =
        segments.iter().filter_map(|s| s.packed.bytes()).collect();
    let (mut category_names, category_offs, category_first) = category_columns(&runs);
    let mut dims = Vec::new();
    for ((_, dict, postings), segment) in tables.iter().zip(segments) {
        dims.extend([segment.docs.len() as u64, dict.len() as u64, postings.len() as u64]);
    }
    for v in [listed_at, n as u64, runs.len() as u64] {
        cols.meta.extend_from_slice(&v.to_le_bytes());
    }
    let le32 = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for part in NamePart::ALL {
        let bytes = match part {
            NamePart::Categories => std::mem::take(&mut category_names),
            NamePart::CategoryEnds => le32(&category_offs),
            NamePart::CategoryFirsts => le32(&category_first),
            NamePart::Slugs => std::mem::take(&mut slugs),
            NamePart::SlugEnds => le32(&slug_offs),
        };
        debug_assert!(part.len(n, runs.len()).is_none_or(|len| len == bytes.len()), "{part:?}");
        cols.bytes(&bytes);
    }
    let names = std::mem::take(&mut cols.meta);
    cols.meta.extend_from_slice(&(tables.len() as u64).to_le_bytes());
    let le64 = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for col in Col::ALL {
        let bytes = match col {
            Col::Sizes => le64(&sizes),
            Col::Stamps => le64(&mtimes),
            Col::Records => le64(&offsets),
            Col::Lengths => lengths.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Col::Updated => le64(&updated),
            Col::Flags => std::mem::take(&mut flags),
            Col::Triggers => le64(&triggers),
        };
        debug_assert_eq!(bytes.len(), col.len(n), "{col:?}");
        cols.bytes(&bytes);
    }
    cols.u64s(&dims);
    for (index, _, _) in &tables {
        cols.bytes(index);
    }
    assemble(&names, &cols.meta, &records, &tables)
}

/// The categories' columns from their runs (name, first document): the
/// names end to end, where each ends, and each one's first document.
fn category_columns(runs: &[(&str, usize)]) -> (Vec<u8>, Vec<u32>, Vec<u32>) {
    let mut names = Vec::new();
    let mut ends = vec![0u32];
    for (c, _) in runs {
        names.extend_from_slice(c.as_bytes());
        ends.push(names.len() as u32);
    }
    (names, ends, runs.iter().map(|r| r.1 as u32).collect())
}

/// The file: the header (with each part's length and checksum), names,
/// meta, records, then each segment's dictionary and postings.
fn assemble(
    names: &[u8],
    meta: &[u8],
    records: &[u8],
    tables: &[(&[u8], &[u8], &[u8])],
) -> Vec<u8> {
    let body: usize = records.len() + tables.iter().map(|t| t.1.len() + t.2.len()).sum::<usize>();
    let total = HEADER + names.len() + meta.len() + body;
    let mut out = Vec::with_capacity(total);
    let mut header = [0u8; HEADER];
    header[..8].copy_from_slice(MAGIC);
    set_word(&mut header, word::VERSION, version_tag());
    set_word(&mut header, word::TOTAL, total as u64);
    set_word(&mut header, word::NAMES_LEN, names.len() as u64);
    set_word(&mut header, word::NAMES_SUM, checksum(names));
    set_word(&mut header, word::META_LEN, meta.len() as u64);
    set_word(&mut header, word::META_SUM, checksum(meta));
    out.extend_from_slice(&header);
    out.extend_from_slice(names);
    out.extend_from_slice(meta);
    out.extend_from_slice(records);
    for (_, dict, postings) in tables {
        out.extend_from_slice(dict);
        out.extend_from_slice(postings);
    }
    out
}

/// The meta part as it is written: sections of fixed-width little-endian
/// values, each preceded by its length in bytes.
#[derive(Default)]
pub(super) struct Columns {
    pub(super) meta: Vec<u8>,
}

impl Columns {
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.meta.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.meta.extend_from_slice(b);
    }

    pub(super) fn u64s(&mut self, v: &[u64]) {
        self.meta.extend_from_slice(&(8 * v.len() as u64).to_le_bytes());
        v.iter().for_each(|x| self.meta.extend_from_slice(&x.to_le_bytes()));
    }
}

/// Reads the sections [`Columns`] wrote, in order.
pub(super) struct Sections<'a> {
    pub(super) meta: &'a [u8],
    pub(super) at: usize,
}

impl Sections<'_> {
    /// The next section's start, if it holds exactly `len` bytes.
    pub(super) fn next(&mut self, len: usize) -> Option<usize> {
        let (start, got) = self.any()?;
        (got == len).then_some(start)
    }

    /// The next section: its start and length.
    pub(super) fn any(&mut self) -> Option<(usize, usize)> {
        let len = usize::try_from(u64_at(self.meta, self.at)?).ok()?;
        let start = self.at + 8;
        self.at = start.checked_add(len).filter(|&end| end <= self.meta.len())?;
        Some((start, len))
    }
}

/// The format number mixed with the program version: an upgrade rebuilds.
pub(super) fn version_tag() -> u64 {
    crate::base::codec::program_tag() ^ FORMAT
}
