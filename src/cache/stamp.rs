//! The compile stamp, `<root>/.cache/compiled`: what a root's memory files
//! (names, sizes, modification times) and generated files (`ROOT.md` and
//! every `index.md`) were after a compile that left nothing to change. While
//! both still are, compiling would write nothing, so it need read nothing.
//!
//! Like the index cache it is derived and disposable: missing, damaged or
//! from another version, it only means a full compile. A file changed within
//! [`RACY_NS`] of the moment it was recorded is never trusted, so an edit in
//! the same clock tick as a compile is not missed.

use std::fs;
use std::path::PathBuf;

use super::format::RACY_NS;
use crate::base::codec::{checksum, put_bytes, read_varint, seal, unseal, varint};
use crate::base::time::now_ns;
use crate::model::roots::Root;
use crate::store::scan::Listing;
use crate::store::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMSTMP\x02";

fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("compiled")
}

/// A digest of every category, file name, size and stamp, and when the
/// newest change was (mtime or ctime).
fn digest(listings: &[Listing]) -> (u64, u64) {
    let mut bytes = Vec::new();
    let newest = encode_listing(listings, &mut bytes);
    (checksum(&bytes) ^ bytes.len() as u64, newest)
}

/// Every category, file name, size and stamp of `listings`, appended to
/// `bytes` (what a digest of a listing is made from); returns when the
/// newest change was (mtime or ctime).
pub fn encode_listing(listings: &[Listing], bytes: &mut Vec<u8>) -> u64 {
    let mut newest = 0;
    for l in listings {
        put_bytes(l.category.as_bytes(), bytes);
        varint(l.files.len() as u64, bytes);
        for (i, f) in l.files.iter().enumerate() {
            put_bytes(l.name(i).as_bytes(), bytes);
            varint(f.size, bytes);
            varint(f.stamp(), bytes);
            newest = newest.max(f.changed_ns());
        }
    }
    newest
}

/// Each generated file's size and stamp, None when it is absent.
type Generated = Vec<Option<(u64, u64)>>;

/// `ROOT.md` and each category's `index.md`: size and stamp (mtime, ctime
/// and inode, as for memories), or None when absent; and when the newest
/// of them last changed. Err when one cannot be looked at.
fn generated(root: &Root, listings: &[Listing]) -> Result<(Generated, u64), ()> {
    let names = std::iter::once(root.dir.join("ROOT.md"))
        .chain(listings.iter().map(|l| l.dir.join("index.md")));
    let mut newest = 0;
    let files = names
        .map(|p| match fs::metadata(&p) {
            Ok(meta) => {
                let (mtime, ctime, ino) = crate::store::scan::listing::times(&meta);
                newest = newest.max(mtime).max(ctime);
                Ok(Some((meta.len(), crate::store::scan::stamp(mtime, ctime, ino))))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(_) => Err(()),
        })
        .collect::<Result<_, ()>>()?;
    Ok((files, newest))
}

fn encode(listed_at: u64, written_at: u64, digest: u64, files: &[Option<(u64, u64)>]) -> Vec<u8> {
    let mut body = Vec::new();
    for v in [listed_at, written_at, digest, files.len() as u64] {
        varint(v, &mut body);
    }
    for f in files {
        match f {
            Some((size, stamp)) => {
                body.push(1);
                varint(*size, &mut body);
                varint(*stamp, &mut body);
            }
            None => body.push(0),
        }
    }
    seal(MAGIC, &body)
}

/// The stamp's (listed_at, written_at, digest, generated files).
type Stamp = (u64, u64, u64, Vec<Option<(u64, u64)>>);

fn decode(bytes: &[u8]) -> Option<Stamp> {
    let mut at = unseal(MAGIC, bytes)?;
    let mut next = || read_varint(&mut at);
    let (listed_at, written_at, digest, count) = (next()?, next()?, next()?, next()?);
    let mut files = Vec::new();
    for _ in 0..count {
        let (&present, rest) = at.split_first()?;
        at = rest;
        files.push(match present {
            1 => Some((read_varint(&mut at)?, read_varint(&mut at)?)),
            _ => None,
        });
    }
    at.is_empty().then_some((listed_at, written_at, digest, files))
}

/// True when the root is as the stamp recorded it: a compile would change
/// nothing and report nothing.
pub fn up_to_date(root: &Root, listings: &[Listing]) -> bool {
    let Some((listed_at, written_at, digest_then, files_then)) = crate::store::files::read(
        &root.dir,
        &path(root),
        crate::store::files::Links::Never,
        u64::from(u32::MAX),
    )
    .ok()
    .as_deref()
    .and_then(decode) else {
        return false;
    };
    let (digest_now, newest) = digest(listings);
    digest_now == digest_then
        && newest.saturating_add(RACY_NS) < listed_at
        && generated(root, listings).is_ok_and(|(files, changed)| {
            files == files_then && changed.saturating_add(RACY_NS) < written_at
        })
}

/// Record that a compile of the root as `listings` saw it (listed at
/// `listed_at`) left nothing to change. Skipped while a file is too fresh to
/// trust; a stamp that cannot be written only costs a full compile.
pub fn record(root: &Root, listings: &[Listing], listed_at: u64) {
    let (digest, newest) = digest(listings);
    let written_at = now_ns();
    let Ok((files, changed)) = generated(root, listings) else { return };
    if newest.saturating_add(RACY_NS) < listed_at && changed.saturating_add(RACY_NS) < written_at {
        let _ =
            write_atomic(&root.dir, &path(root), &encode(listed_at, written_at, digest, &files));
    } else {
        let _ = crate::store::write::remove_file(&root.dir, &path(root));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_and_damage_is_refused() {
        let files = vec![Some((10, 20)), None, Some((0, u64::MAX))];
        let bytes = encode(5, 6, 7, &files);
        assert_eq!(decode(&bytes), Some((5, 6, 7, files)));
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[12] ^= 1;
        assert_eq!(decode(&flipped), None);
    }
}
