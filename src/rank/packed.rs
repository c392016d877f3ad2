//! A term table packed into one byte buffer, for the on-disk cache: terms
//! sorted for binary search, postings delta- and varint-encoded, decoded
//! only for the terms a query asks for. Every read is bounds-checked, so a
//! damaged buffer yields empty postings, never a panic.

use std::collections::HashMap;

use crate::rank::corpus::{Built, FIELDS, Posting};

/// A packed term table.
pub struct Packed {
    bytes: Vec<u8>,
    /// Where the table starts in `bytes` (a cache file holds other data first).
    base: usize,
    count: usize,
    term_bytes_at: usize,
    post_offsets_at: usize,
    post_bytes_at: usize,
}

impl Packed {
    /// Pack built tables that follow each other; `firsts[i]` is the first
    /// document id of `tables[i]`.
    pub fn pack(tables: &[(&Built, u32)]) -> Vec<u8> {
        let mut merged: HashMap<String, Vec<Posting>> = HashMap::new();
        for (table, first) in tables {
            for (term, postings) in table.entries() {
                let list = merged.entry(term).or_default();
                list.extend(postings.iter().map(|p| Posting { doc: p.doc + first, tf: p.tf }));
            }
        }
        let mut terms: Vec<(String, Vec<Posting>)> = merged.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut term_bytes = Vec::new();
        let mut term_offsets = vec![0u32];
        let mut post_bytes = Vec::new();
        let mut post_offsets = vec![0u32];
        for (term, mut postings) in terms {
            term_bytes.extend_from_slice(term.as_bytes());
            term_offsets.push(term_bytes.len() as u32);
            postings.sort_unstable_by_key(|p| p.doc);
            encode_postings(&postings, &mut post_bytes);
            post_offsets.push(post_bytes.len() as u32);
        }
        let count = term_offsets.len() - 1;
        let mut out = Vec::with_capacity(8 + 8 * (count + 1) + term_bytes.len() + post_bytes.len());
        out.extend_from_slice(&(count as u32).to_le_bytes());
        for o in &term_offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&term_bytes);
        for o in &post_offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&post_bytes);
        out
    }

    /// Read a packed table; None when the buffer is not one.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Packed> {
        Packed::from_bytes_at(bytes, 0)
    }

    /// Read a packed table that starts at `base` and runs to the end of `bytes`.
    pub fn from_bytes_at(bytes: Vec<u8>, base: usize) -> Option<Packed> {
        let count = read_u32(&bytes, base)? as usize;
        let term_bytes_at = base + 4 + 4 * (count + 1);
        let term_len = read_u32(&bytes, base + 4 + 4 * count)? as usize;
        let post_offsets_at = term_bytes_at + term_len;
        let post_bytes_at = post_offsets_at + 4 * (count + 1);
        let post_len = read_u32(&bytes, post_offsets_at + 4 * count)? as usize;
        (post_bytes_at + post_len == bytes.len()).then_some(Packed {
            bytes,
            base,
            count,
            term_bytes_at,
            post_offsets_at,
            post_bytes_at,
        })
    }

    fn term(&self, i: usize) -> &[u8] {
        let at = |k: usize| read_u32(&self.bytes, self.base + 4 + 4 * k).map_or(0, |v| v as usize);
        self.bytes.get(self.term_bytes_at + at(i)..self.term_bytes_at + at(i + 1)).unwrap_or(&[])
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
        let at = |k: usize| {
            read_u32(&self.bytes, self.post_offsets_at + 4 * k).map_or(0, |v| v as usize)
        };
        let range = self.post_bytes_at + at(i)..self.post_bytes_at + at(i + 1);
        decode_postings(self.bytes.get(range).unwrap_or(&[]))
    }

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

    #[test]
    fn packed_postings_equal_built_ones() {
        let memories = vec![
            memory("a/x", "部署脚本用 pnpm 而不是 npm\n"),
            memory("a/y", "# Deploys\n\nsupport group 部署 锁\n"),
            memory("b/z", "锁表 pg_dump utf-8 部署部署\n"),
        ];
        let t = Tokenizer::new();
        let first = Segment::build(&memories[..2], &t);
        let second = Segment::build(&memories[2..], &t);
        let (Terms::Built(a), Terms::Built(b)) = (&first.terms, &second.terms) else {
            unreachable!()
        };
        let packed = Packed::from_bytes(Packed::pack(&[(a, 0), (b, 2)])).unwrap();
        let whole = Segment::build(&memories, &t);
        let Terms::Built(w) = &whole.terms else { unreachable!() };
        for (term, postings) in w.entries() {
            assert_eq!(packed.postings(&term), postings, "{term}");
        }
        assert!(packed.postings("absent").is_empty());
    }

    #[test]
    fn damaged_buffers_are_refused_or_empty() {
        assert!(Packed::from_bytes(vec![]).is_none());
        assert!(Packed::from_bytes(vec![1, 0, 0, 0]).is_none());
        let mut v = Vec::new();
        varint(300, &mut v);
        assert_eq!(read_varint(&mut v.as_slice()), Some(300));
        assert_eq!(decode_postings(&[0x80]), Vec::new());
    }
}
