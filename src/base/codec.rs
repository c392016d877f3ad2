//! The binary building blocks of every derived file: little-endian words
//! read in place, LEB128 varints, length-prefixed bytes, a fast checksum,
//! small sealed files, and positional reads that leave a file's cursor
//! alone.

use std::fs::File;

/// Read exactly `buf.len()` bytes at `offset`, without moving a file cursor
/// (so threads and segments can share one open file).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let (mut done, mut offset) = (0, offset);
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], offset)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => (done, offset) = (done + n, offset + n as u64),
            }
        }
        Ok(())
    }
}

/// The little-endian u32 at byte `at`, if it is there.
pub fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(*bytes.get(at..)?.first_chunk::<4>()?))
}

/// The little-endian u64 at byte `at`, if it is there.
pub fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(*bytes.get(at..)?.first_chunk::<8>()?))
}

/// Append `b` with its length in front.
pub fn put_bytes(b: &[u8], out: &mut Vec<u8>) {
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// Take bytes written by [`put_bytes`] from the front of `at`.
pub fn get_bytes<'a>(at: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(read_varint(at)?).ok()?;
    let bytes = at.get(..len)?;
    *at = &at[len..];
    Some(bytes)
}

/// Take a string written by [`put_bytes`] from the front of `at`.
pub fn get_string(at: &mut &[u8]) -> Option<String> {
    String::from_utf8(get_bytes(at)?.to_vec()).ok()
}

/// The tag of this program's version, which derived files carry.
pub fn program_tag() -> u64 {
    checksum(env!("CARGO_PKG_VERSION").as_bytes())
}

/// A small derived file: `magic`, a checksum, then the program's version
/// tag and `body`. [`unseal`] gives the body back.
pub fn seal(magic: &[u8; 8], body: &[u8]) -> Vec<u8> {
    let mut checked = Vec::with_capacity(body.len() + 10);
    varint(program_tag(), &mut checked);
    checked.extend_from_slice(body);
    let mut out = magic.to_vec();
    out.extend_from_slice(&checksum(&checked).to_le_bytes());
    out.extend_from_slice(&checked);
    out
}

/// The body of a file [`seal`]ed with `magic`; None when it is damaged or
/// written by another version.
pub fn unseal<'a>(magic: &[u8; 8], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let (sum, mut at) = bytes.strip_prefix(magic)?.split_first_chunk::<8>()?;
    let intact = u64::from_le_bytes(*sum) == checksum(at) && read_varint(&mut at)? == program_tag();
    intact.then_some(at)
}

/// The crate's one hash step: fold `v` into `h`. Fast and well spread, for
/// checksums, stamps, masks and hash maps; not for adversaries.
pub fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(27)
}

/// A hasher over [`mix`], for hash maps of the crate's own data (terms,
/// bigrams) and for one-off hashes of bytes: 8-byte words at a time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Hash64(u64);

impl std::hash::Hasher for Hash64 {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.0 = mix(self.0, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.0 = mix(self.0, u64::from_le_bytes(last));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = mix(self.0, v);
    }

    /// The step's rotate already brings the well-mixed high bits down to
    /// the low bits a table indexes by.
    fn finish(&self) -> u64 {
        self.0
    }
}

/// `bytes` hashed with [`Hash64`], its length folded in.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = Hash64(bytes.len() as u64);
    h.write(bytes);
    mix(h.finish(), 0)
}

/// A fast 64-bit checksum over 8-byte words, four independent lanes at a
/// time: it catches truncation and damage, not tampering (the cache is
/// rebuilt from the files anyway).
pub fn checksum(bytes: &[u8]) -> u64 {
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("8 bytes"));
    let mut lanes = [
        0x9e37_79b9_7f4a_7c15u64 ^ bytes.len() as u64,
        0x6a09_e667_f3bc_c908,
        0xbb67_ae85_84ca_a73b,
        0x3c6e_f372_fe94_f82b,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, c) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, word(c));
        }
    }
    let mut h = lanes.iter().fold(0, |h, &lane| mix(h, lane));
    let mut words = blocks.remainder().chunks_exact(8);
    for c in &mut words {
        h = mix(h, word(c));
    }
    for &b in words.remainder() {
        h = mix(h, u64::from(b));
    }
    h
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
