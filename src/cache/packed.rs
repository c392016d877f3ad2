//! A term table packed for the on-disk cache. Terms are sorted and cut into
//! blocks of `BLOCK` terms; a small block index (each block's first term,
//! length and checksum) is kept in memory, and a query reads only the blocks
//! and postings (delta- and varint-encoded) of its own terms — from memory or
//! straight from the cache file with positional reads. Every read is
//! bounds-checked and checksummed: damage is reported, never a panic and
//! never a silently wrong answer.

use std::borrow::Cow;
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::mapped::Mapped;
use crate::base::codec::{
    checksum, get_bytes, put_bytes, read_at, read_varint, u32_at, u64_at, varint,
};
use crate::base::parallel;
use crate::model::memory::Memory;
use crate::rank::corpus::{Built, DocStats, FIELDS, Posting, Segment, StoredTerms, Terms};
use crate::rank::tokenize::Tokenizer;

/// Terms per dictionary block.
const BLOCK: usize = 32;

/// A packed term table.
pub struct Packed {
    /// The block index: `count`, then each block's first-term offset
    /// (`count + 1` u32), dictionary offset (`count + 1` u64) and checksum
    /// (`count` u32), then the first terms back to back. Fixed-width, so it
    /// is searched as it lies, never parsed.
    index: Held,
    count: usize,
    dict: Bytes,
    postings: Bytes,
    damaged: AtomicBool,
}

/// A run of bytes, in memory or in a file.
pub enum Bytes {
    Memory(Vec<u8>),
    File { file: Arc<File>, at: u64, len: u64 },
}

impl Bytes {
    /// `len` bytes from `start`; None when out of bounds or unreadable.
    pub fn get(&self, start: u64, len: u64) -> Option<Cow<'_, [u8]>> {
        let end = start.checked_add(len)?;
        match self {
            Bytes::Memory(bytes) => bytes
                .get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
                .map(Cow::Borrowed),
            Bytes::File { file, at, len: total } => {
                if end > *total {
                    return None;
                }
                let mut buf = vec![0; usize::try_from(len).ok()?];
                read_at(file, &mut buf, at + start).ok()?;
                Some(Cow::Owned(buf))
            }
        }
    }

    fn len(&self) -> u64 {
        match self {
            Bytes::Memory(bytes) => bytes.len() as u64,
            Bytes::File { len, .. } => *len,
        }
    }
}

/// Bytes in memory: owned, or a part of a mapped file.
#[derive(Clone)]
pub enum Held {
    Owned(Vec<u8>),
    Mapped { map: Arc<Mapped>, at: usize, len: usize },
}

impl Held {
    /// `len` bytes of `map` from `at`; None when they are not all there.
    pub fn mapped(map: &Arc<Mapped>, at: usize, len: usize) -> Option<Held> {
        (at.checked_add(len)? <= map.len()).then(|| Held::Mapped { map: map.clone(), at, len })
    }
}

impl std::ops::Deref for Held {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Held::Owned(bytes) => bytes,
            // In bounds: checked when made.
            Held::Mapped { map, at, len } => map.get(*at..at + len).unwrap_or(&[]),
        }
    }
}

/// A packed table as bytes: the block index, the dictionary, the postings.
pub struct PackedBytes {
    pub index: Vec<u8>,
    pub dict: Vec<u8>,
    pub postings: Vec<u8>,
}

impl Packed {
    /// Pack a built table.
    pub fn pack(table: &Built) -> PackedBytes {
        let mut terms: Vec<(String, &[Posting])> = table.entries().collect();
        terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut dict = Vec::new();
        let mut postings = Vec::new();
        let (mut first_offs, mut dict_offs, mut sums, mut firsts) =
            (vec![0u32], vec![0u64], vec![], vec![]);
        for block in terms.chunks(BLOCK) {
            let start = dict.len();
            for (term, list) in block {
                let at = postings.len();
                encode_postings(list, &mut postings);
                put_bytes(term.as_bytes(), &mut dict);
                varint(at as u64, &mut dict);
                varint((postings.len() - at) as u64, &mut dict);
                dict.extend_from_slice(&(checksum(&postings[at..]) as u32).to_le_bytes());
            }
            firsts.extend_from_slice(block[0].0.as_bytes());
            first_offs.push(firsts.len() as u32);
            dict_offs.push(dict.len() as u64);
            sums.push(checksum(&dict[start..]) as u32);
        }
        let mut index = Vec::with_capacity(4 + 16 * (sums.len() + 1) + firsts.len());
        index.extend_from_slice(&(sums.len() as u32).to_le_bytes());
        first_offs.iter().for_each(|o| index.extend_from_slice(&o.to_le_bytes()));
        dict_offs.iter().for_each(|o| index.extend_from_slice(&o.to_le_bytes()));
        sums.iter().for_each(|o| index.extend_from_slice(&o.to_le_bytes()));
        index.extend_from_slice(&firsts);
        PackedBytes { index, dict, postings }
    }

    /// A table from its block index and the bytes of its dictionary and
    /// postings; None when the index does not describe them.
    pub fn open(index: Held, dict: Bytes, postings: Bytes) -> Option<Packed> {
        let count = u32_at(&index, 0)? as usize;
        let packed = Packed { index, count, dict, postings, damaged: AtomicBool::new(false) };
        let firsts_len = packed.index.len().checked_sub(packed.firsts_at())?;
        // Offsets run forward and end where their bytes end.
        let mut ok = packed.first_off(0)? == 0 && packed.dict_off(0)? == 0;
        for i in 0..count {
            ok &= packed.first_off(i)? <= packed.first_off(i + 1)?
                && packed.dict_off(i)? <= packed.dict_off(i + 1)?;
        }
        ok &= packed.first_off(count)? as usize == firsts_len
            && packed.dict_off(count)? == packed.dict.len();
        ok.then_some(packed)
    }

    /// A freshly packed table, held in memory.
    pub fn from_bytes(bytes: PackedBytes) -> Option<Packed> {
        let PackedBytes { index, dict, postings } = bytes;
        Packed::open(Held::Owned(index), Bytes::Memory(dict), Bytes::Memory(postings))
    }

    /// The block index, dictionary and postings bytes of a table held in
    /// memory (for writing a cache); None for one read from a file.
    pub fn bytes(&self) -> Option<(&[u8], &[u8], &[u8])> {
        match (&self.index, &self.dict, &self.postings) {
            (Held::Owned(i), Bytes::Memory(d), Bytes::Memory(p)) => Some((i, d, p)),
            _ => None,
        }
    }

    /// True once a block or postings list failed its checksum: the table
    /// must be rebuilt.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    fn first_off(&self, i: usize) -> Option<u32> {
        u32_at(&self.index, 4 + 4 * i)
    }

    fn dict_off(&self, i: usize) -> Option<u64> {
        u64_at(&self.index, 4 + 4 * (self.count + 1) + 8 * i)
    }

    fn sum(&self, i: usize) -> Option<u32> {
        u32_at(&self.index, 4 + 12 * (self.count + 1) + 4 * i)
    }

    fn firsts_at(&self) -> usize {
        4 + 12 * (self.count + 1) + 4 * self.count
    }

    /// The first term of block `i` (offsets were checked on open).
    fn first(&self, i: usize) -> &[u8] {
        let (a, b) = (self.first_off(i).unwrap_or(0), self.first_off(i + 1).unwrap_or(0));
        self.index.get(self.firsts_at() + a as usize..self.firsts_at() + b as usize).unwrap_or(&[])
    }

    /// The postings of `token`, decoded.
    #[cfg(test)]
    pub fn postings(&self, token: &str) -> Vec<Posting> {
        let mut out = Vec::new();
        self.each_posting(token, |p| out.push(p));
        out
    }

    /// `emit` each posting of `token`, in document order (none when the
    /// table turns out damaged, which it then reports).
    pub fn each_posting(&self, token: &str, emit: impl FnMut(Posting)) {
        if self.find(token.as_bytes(), emit).is_err() {
            self.damaged.store(true, Ordering::Relaxed);
        }
    }

    /// Emit the postings of `needle`, if present; Err when the bytes are
    /// damaged (then nothing is emitted).
    fn find(&self, needle: &[u8], emit: impl FnMut(Posting)) -> Result<(), ()> {
        // The last block whose first term is not after the needle.
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.first(mid) <= needle { lo = mid + 1 } else { hi = mid }
        }
        let Some(block) = lo.checked_sub(1) else { return Ok(()) };
        let start = self.dict_off(block).ok_or(())?;
        let end = self.dict_off(block + 1).ok_or(())?;
        let bytes = self.dict.get(start, end.checked_sub(start).ok_or(())?).ok_or(())?;
        if Some(checksum(&bytes) as u32) != self.sum(block) {
            return Err(());
        }
        let mut at = &bytes[..];
        while !at.is_empty() {
            let term = get_bytes(&mut at).ok_or(())?;
            let start = read_varint(&mut at).ok_or(())?;
            let len = read_varint(&mut at).ok_or(())?;
            let (sum, rest) = at.split_first_chunk::<4>().ok_or(())?;
            at = rest;
            match term.cmp(needle) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Greater => return Ok(()),
                std::cmp::Ordering::Equal => {
                    let list = self.postings.get(start, len).ok_or(())?;
                    if checksum(&list) as u32 != u32::from_le_bytes(*sum) {
                        return Err(());
                    }
                    decode_postings(&list, emit);
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

impl StoredTerms for Packed {
    fn each_posting(&self, token: &str, emit: &mut dyn FnMut(Posting)) {
        Packed::each_posting(self, token, emit);
    }

    fn is_damaged(&self) -> bool {
        Packed::is_damaged(self)
    }
}

/// A run of memories indexed and packed, as a cache file stores it.
pub struct PackedSegment {
    pub packed: Packed,
    pub docs: Vec<DocStats>,
}

/// Build on every core, packing each chunk as soon as it is built so that
/// memory stays bounded: one packed segment per chunk of `memories`.
/// `done` advances by each chunk's size as it is packed.
pub fn segments(
    memories: &[Memory],
    tokenizer: &Tokenizer,
    done: &std::sync::atomic::AtomicUsize,
) -> Vec<PackedSegment> {
    const MAX_CHUNK: usize = 8192;
    let threads = parallel::threads();
    // Whole chunks per thread, of equal size, at most MAX_CHUNK memories each.
    let chunk_count = memories.len().div_ceil(MAX_CHUNK).div_ceil(threads).max(1) * threads;
    let chunk = memories.len().div_ceil(chunk_count).max(1);
    let chunks: Vec<&[Memory]> = memories.chunks(chunk).collect();
    let per_thread = chunks.len().div_ceil(threads).max(1);
    let groups: Vec<&[&[Memory]]> = chunks.chunks(per_thread).collect();
    let built = parallel::run(groups.len(), |k| {
        groups[k]
            .iter()
            .map(|part| {
                let built = Segment::build(part, tokenizer);
                let Terms::Built(table) = &built.terms else { unreachable!("just built") };
                let packed =
                    Packed::from_bytes(Packed::pack(table)).expect("a fresh table reads back");
                done.fetch_add(part.len(), std::sync::atomic::Ordering::Relaxed);
                PackedSegment { packed, docs: built.docs }
            })
            .collect::<Vec<_>>()
    });
    built.into_iter().flatten().collect()
}

/// Segments as one run of document statistics and their term tables, each
/// with the first document it covers.
pub fn split(segments: Vec<PackedSegment>) -> (Vec<DocStats>, Vec<(u32, Terms)>) {
    let mut docs = Vec::with_capacity(segments.iter().map(|s| s.docs.len()).sum());
    let mut tables = Vec::with_capacity(segments.len());
    for mut segment in segments {
        tables.push((docs.len() as u32, Terms::Stored(Box::new(segment.packed))));
        docs.append(&mut segment.docs);
    }
    (docs, tables)
}

/// `varint(doc delta) mask varint(tf)…` per posting.
fn encode_postings(postings: &[Posting], out: &mut Vec<u8>) {
    let mut last = 0;
    for p in postings {
        varint(u64::from(p.doc - last), out);
        last = p.doc;
        let mask =
            p.tf.iter().enumerate().fold(0u8, |m, (f, &tf)| if tf > 0 { m | 1 << f } else { m });
        out.push(mask);
        for &tf in p.tf.iter().filter(|&&tf| tf > 0) {
            varint(u64::from(tf), out);
        }
    }
}

fn decode_postings(mut bytes: &[u8], mut emit: impl FnMut(Posting)) {
    let mut doc = 0u32;
    while !bytes.is_empty() {
        let Some(delta) = read_varint(&mut bytes) else { break };
        doc = doc.saturating_add(delta as u32);
        let Some((&mask, rest)) = bytes.split_first() else { break };
        bytes = rest;
        let mut tf = [0u16; FIELDS];
        for (f, slot) in tf.iter_mut().enumerate() {
            if mask & (1 << f) != 0 {
                *slot = read_varint(&mut bytes).unwrap_or(0).min(u64::from(u16::MAX)) as u16;
            }
        }
        emit(Posting { doc, tf });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frontmatter::Document;
    use crate::model::memory::Memory;
    use crate::model::relpath::RelPath;
    use crate::model::roots::Scope;
    use crate::rank::corpus::{Segment, Terms};
    use crate::rank::tokenize::Tokenizer;

    fn memory(path: &str, text: &str) -> Memory {
        let doc = Document::parse(text).unwrap();
        Memory::from_document(RelPath::parse(path).unwrap(), Scope::Project, &doc, 0).0
    }

    fn built(memories: &[Memory]) -> Segment {
        Segment::build(memories, &Tokenizer::new())
    }

    #[test]
    fn packed_postings_equal_built_ones_in_memory_and_on_disk() {
        let mut memories = vec![
            memory("a/x", "部署脚本用 pnpm 而不是 npm\n"),
            memory("a/y", "# Deploys\n\nsupport group 部署 锁\n"),
            memory("b/z", "锁表 pg_dump utf-8 部署部署\n"),
        ];
        // Enough distinct terms for several dictionary blocks.
        for i in 0..40 {
            memories.push(memory(&format!("c/n{i}"), &format!("word{i} 词{i} shared\n")));
        }
        let seg = built(&memories);
        let Terms::Built(table) = &seg.terms else { unreachable!() };
        let bytes = Packed::pack(table);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("p.bin");
        let mut file_bytes = b"prefix".to_vec();
        file_bytes.extend_from_slice(&bytes.dict);
        file_bytes.extend_from_slice(&bytes.postings);
        std::fs::write(&path, &file_bytes).unwrap();
        let file = Arc::new(File::open(&path).unwrap());
        let dict_len = bytes.dict.len() as u64;
        let on_disk = Packed::open(
            Held::Owned(bytes.index.clone()),
            Bytes::File { file: file.clone(), at: 6, len: dict_len },
            Bytes::File { file, at: 6 + dict_len, len: bytes.postings.len() as u64 },
        )
        .unwrap();
        let in_memory = Packed::from_bytes(bytes).unwrap();
        assert!(in_memory.count > 2);
        for (term, list) in table.entries() {
            assert_eq!(in_memory.postings(&term), list, "{term}");
            assert_eq!(on_disk.postings(&term), list, "{term}");
        }
        for absent in ["", "absent", "\u{10ffff}", "00", "word0x"] {
            assert!(in_memory.postings(absent).is_empty(), "{absent}");
            assert!(on_disk.postings(absent).is_empty(), "{absent}");
        }
        assert!(!in_memory.is_damaged() && !on_disk.is_damaged());
    }

    #[test]
    fn damage_is_refused_or_flagged() {
        let empty = || Bytes::Memory(Vec::new());
        assert!(Packed::open(Held::Owned(vec![]), empty(), empty()).is_none());
        assert!(Packed::open(Held::Owned(vec![1, 0, 0, 0]), empty(), empty()).is_none());
        let seg = built(&[memory("a/x", "部署脚本用 pnpm\n")]);
        let Terms::Built(table) = &seg.terms else { unreachable!() };
        let good = Packed::pack(table);
        // Every truncation of the index, and every byte of it changed, is
        // refused on open or found when read: never a panic.
        for cut in 0..good.index.len() {
            let dict = Bytes::Memory(good.dict.clone());
            let index = Held::Owned(good.index[..cut].to_vec());
            assert!(Packed::open(index, dict, empty()).is_none());
        }
        for i in 0..good.index.len() {
            let mut index = good.index.clone();
            index[i] ^= 0xa5;
            let (dict, postings) = (good.dict.clone(), good.postings.clone());
            let (index, dict, postings) =
                (Held::Owned(index), Bytes::Memory(dict), Bytes::Memory(postings));
            if let Some(p) = Packed::open(index, dict, postings) {
                for (term, _) in table.entries() {
                    let _ = p.postings(&term);
                }
            }
        }
        let seg = built(&[memory("a/x", "部署脚本用 pnpm\n")]);
        let Terms::Built(table) = &seg.terms else { unreachable!() };
        for part in 0..2 {
            let mut bytes = Packed::pack(table);
            if part == 0 {
                bytes.postings[0] ^= 0x55;
            } else {
                bytes.dict[3] ^= 0x55;
            }
            let packed = Packed::from_bytes(bytes).unwrap();
            for (term, _) in table.entries() {
                let _ = packed.postings(&term);
            }
            assert!(packed.is_damaged(), "damage in part {part}");
        }
        let mut v = Vec::new();
        varint(300, &mut v);
        assert_eq!(read_varint(&mut v.as_slice()), Some(300));
        let mut decoded = Vec::new();
        decode_postings(&[0x80], |p| decoded.push(p));
        assert_eq!(decoded, Vec::new());
    }

    #[test]
    fn every_flipped_bit_changes_the_checksum() {
        for len in 0..80 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let sum = checksum(&bytes);
            for i in 0..len {
                for bit in [0, 3, 7] {
                    let mut flipped = bytes.clone();
                    flipped[i] ^= 1 << bit;
                    assert_ne!(checksum(&flipped), sum, "len {len} byte {i} bit {bit}");
                }
            }
            if len > 0 {
                assert_ne!(checksum(&bytes[..len - 1]), sum, "len {len} truncated");
            }
        }
    }
}
