//! A term table packed for the on-disk cache: an index (terms sorted for
//! binary search, offsets, a checksum per term) kept in memory, and postings
//! (delta- and varint-encoded) read only for the terms a query asks for —
//! from memory or straight from the cache file. Every read is bounds-checked
//! and every postings list checksummed: damage is reported, never a panic and
//! never a silently wrong answer.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::rank::corpus::{Built, FIELDS, Posting};

/// A packed term table.
pub struct Packed {
    /// `count`, then term offsets, term bytes, postings offsets, checksums.
    index: Vec<u8>,
    count: usize,
    term_bytes_at: usize,
    post_offsets_at: usize,
    sums_at: usize,
    postings: Source,
    damaged: AtomicBool,
}

/// Where the postings bytes are.
enum Source {
    Memory(Vec<u8>),
    File { file: Mutex<File>, offset: u64, len: u64 },
}

impl Packed {
    /// Pack a built table: (index, postings) bytes.
    pub fn pack(table: &Built) -> (Vec<u8>, Vec<u8>) {
        let mut terms: Vec<(String, &[Posting])> = table.entries().collect();
        terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut term_bytes = Vec::new();
        let mut term_offsets = vec![0u32];
        let mut postings = Vec::new();
        let mut post_offsets = vec![0u64];
        let mut sums = Vec::with_capacity(terms.len());
        for (term, list) in terms {
            term_bytes.extend_from_slice(term.as_bytes());
            term_offsets.push(term_bytes.len() as u32);
            let start = postings.len();
            encode_postings(list, &mut postings);
            sums.push(checksum(&postings[start..]) as u32);
            post_offsets.push(postings.len() as u64);
        }
        let count = sums.len();
        let mut index = Vec::with_capacity(4 + 16 * (count + 1) + term_bytes.len());
        index.extend_from_slice(&(count as u32).to_le_bytes());
        for o in &term_offsets {
            index.extend_from_slice(&o.to_le_bytes());
        }
        index.extend_from_slice(&term_bytes);
        for o in &post_offsets {
            index.extend_from_slice(&o.to_le_bytes());
        }
        for s in &sums {
            index.extend_from_slice(&s.to_le_bytes());
        }
        (index, postings)
    }

    /// A table whose postings are in memory; None when the bytes are not one.
    pub fn from_memory(index: Vec<u8>, postings: Vec<u8>) -> Option<Packed> {
        let len = postings.len() as u64;
        Packed::new(index, Source::Memory(postings), len)
    }

    /// A table whose postings stay in `file`, `len` bytes from `offset`.
    pub fn from_file(index: Vec<u8>, file: File, offset: u64, len: u64) -> Option<Packed> {
        Packed::new(index, Source::File { file: Mutex::new(file), offset, len }, len)
    }

    fn new(index: Vec<u8>, postings: Source, len: u64) -> Option<Packed> {
        let count = read_u32(&index, 0)? as usize;
        let term_bytes_at = 4 + 4 * (count + 1);
        let term_len = read_u32(&index, 4 + 4 * count)? as usize;
        let post_offsets_at = term_bytes_at + term_len;
        let sums_at = post_offsets_at + 8 * (count + 1);
        let fits = sums_at + 4 * count == index.len() && read_u64(&index, sums_at - 8)? == len;
        fits.then_some(Packed {
            index,
            count,
            term_bytes_at,
            post_offsets_at,
            sums_at,
            postings,
            damaged: AtomicBool::new(false),
        })
    }

    /// The index and, when held in memory, the postings bytes (for writing a cache).
    pub fn bytes(&self) -> (&[u8], Option<&[u8]>) {
        match &self.postings {
            Source::Memory(p) => (&self.index, Some(p)),
            Source::File { .. } => (&self.index, None),
        }
    }

    /// True once a postings list failed its checksum: the table must be rebuilt.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    fn term(&self, i: usize) -> &[u8] {
        let at = |k: usize| read_u32(&self.index, 4 + 4 * k).map_or(0, |v| v as usize);
        self.index.get(self.term_bytes_at + at(i)..self.term_bytes_at + at(i + 1)).unwrap_or(&[])
    }

    /// The postings of `token`, decoded.
    pub fn postings(&self, token: &str) -> Vec<Posting> {
        let (mut lo, mut hi) = (0, self.count);
        let needle = token.as_bytes();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.term(mid).cmp(needle) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.decode(mid),
            }
        }
        Vec::new()
    }

    fn decode(&self, i: usize) -> Vec<Posting> {
        let at = |k: usize| read_u64(&self.index, self.post_offsets_at + 8 * k).unwrap_or(0);
        let (start, end) = (at(i), at(i + 1));
        let sum = read_u32(&self.index, self.sums_at + 4 * i);
        let bytes = self.read(start, end);
        match bytes {
            Some(b) if Some(checksum(&b) as u32) == sum => decode_postings(&b),
            _ => {
                self.damaged.store(true, Ordering::Relaxed);
                Vec::new()
            }
        }
    }

    fn read(&self, start: u64, end: u64) -> Option<Vec<u8>> {
        if end < start {
            return None;
        }
        match &self.postings {
            Source::Memory(bytes) => bytes.get(start as usize..end as usize).map(<[u8]>::to_vec),
            Source::File { file, offset, len } => {
                if end > *len {
                    return None;
                }
                let mut file = file.lock().ok()?;
                file.seek(SeekFrom::Start(offset + start)).ok()?;
                let mut buf = vec![0; (end - start) as usize];
                file.read_exact(&mut buf).ok()?;
                Some(buf)
            }
        }
    }
}

/// A fast 64-bit checksum over 8-byte words: it catches truncation and
/// damage, not tampering (the cache is rebuilt from the files anyway).
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ word).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
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

fn decode_postings(mut bytes: &[u8]) -> Vec<Posting> {
    let mut out = Vec::new();
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
        out.push(Posting { doc, tf });
    }
    out
}

/// Append `v` as a LEB128 varint.
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read a LEB128 varint from the front of `bytes`.
pub fn read_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::Document;
    use crate::memory::Memory;
    use crate::rank::corpus::{Segment, Terms};
    use crate::rank::tokenize::Tokenizer;
    use crate::relpath::RelPath;
    use crate::roots::Scope;

    fn memory(path: &str, text: &str) -> Memory {
        let doc = Document::parse(text).unwrap();
        Memory::from_document(RelPath::parse(path).unwrap(), Scope::Project, &doc, 0).0
    }

    fn built(memories: &[Memory]) -> Segment {
        Segment::build(memories, &Tokenizer::new())
    }

    #[test]
    fn packed_postings_equal_built_ones_in_memory_and_on_disk() {
        let memories = vec![
            memory("a/x", "部署脚本用 pnpm 而不是 npm\n"),
            memory("a/y", "# Deploys\n\nsupport group 部署 锁\n"),
            memory("b/z", "锁表 pg_dump utf-8 部署部署\n"),
        ];
        let seg = built(&memories);
        let Terms::Built(table) = &seg.terms else { unreachable!() };
        let (index, postings) = Packed::pack(table);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("p.bin");
        let mut file_bytes = b"prefix".to_vec();
        file_bytes.extend_from_slice(&postings);
        std::fs::write(&path, &file_bytes).unwrap();
        let on_disk =
            Packed::from_file(index.clone(), File::open(&path).unwrap(), 6, postings.len() as u64)
                .unwrap();
        let in_memory = Packed::from_memory(index, postings).unwrap();
        for (term, list) in table.entries() {
            assert_eq!(in_memory.postings(&term), list, "{term}");
            assert_eq!(on_disk.postings(&term), list, "{term}");
        }
        assert!(in_memory.postings("absent").is_empty());
        assert!(!in_memory.is_damaged() && !on_disk.is_damaged());
    }

    #[test]
    fn damage_is_refused_or_flagged() {
        assert!(Packed::from_memory(vec![], vec![]).is_none());
        assert!(Packed::from_memory(vec![1, 0, 0, 0], vec![]).is_none());
        let seg = built(&[memory("a/x", "部署脚本用 pnpm\n")]);
        let Terms::Built(table) = &seg.terms else { unreachable!() };
        let (index, mut postings) = Packed::pack(table);
        postings[0] ^= 0x55;
        let packed = Packed::from_memory(index, postings).unwrap();
        for (term, _) in table.entries() {
            let _ = packed.postings(&term);
        }
        assert!(packed.is_damaged());
        let mut v = Vec::new();
        varint(300, &mut v);
        assert_eq!(read_varint(&mut v.as_slice()), Some(300));
        assert_eq!(decode_postings(&[0x80]), Vec::new());
    }
}
