//! The folder snapshot, `<root>/.cache/folders.bin`: each category folder's
//! modification time and the memory files it held when it was last read.
//!
//! Adding, removing or renaming an entry changes a folder's mtime, so while
//! it is unchanged the folder holds the same names, and listing it is one
//! `stat` per known file instead of reading the folder ([`list_with`]).
//! A folder is recorded only when it was read without problems and its
//! mtime is clearly older than the listing ([`RACY_NS`]), so a change in
//! the same clock tick is never hidden. Like the index cache the snapshot
//! is disposable: missing or damaged, folders are simply read.

use std::fs;
use std::path::PathBuf;

use crate::cache::{RACY_NS, now_ns};
use crate::rank::packed::{get_string, put_bytes, read_varint, seal, unseal, varint};
use crate::roots::Root;
use crate::scan::{Known, Listing, Problem, list_with};
use crate::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMFOLD\x01";

fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("folders.bin")
}

/// The recorded folders, by category.
#[derive(Debug, Default, PartialEq)]
struct Snapshot {
    folders: Vec<Folder>,
}

/// One folder: its mtime and its memory files' slugs, back to back in one
/// string (so reading a snapshot of a hundred thousand is a few allocations).
#[derive(Debug, PartialEq)]
struct Folder {
    category: String,
    mtime: u64,
    slugs: String,
    /// Where each slug ends in `slugs`.
    ends: Vec<u32>,
}

impl Folder {
    fn slugs(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| self.slugs.get(a as usize..b as usize).unwrap_or(""))
    }
}

impl Snapshot {
    fn known(&self, category: &str) -> Known<'_> {
        let i = self.folders.binary_search_by(|f| f.category.as_str().cmp(category)).ok()?;
        let folder = &self.folders[i];
        Some((folder.mtime, folder.slugs().collect()))
    }

    fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        varint(self.folders.len() as u64, &mut body);
        for f in &self.folders {
            put_bytes(f.category.as_bytes(), &mut body);
            varint(f.mtime, &mut body);
            put_bytes(f.slugs.as_bytes(), &mut body);
            varint(f.ends.len() as u64, &mut body);
            f.ends.iter().for_each(|&e| varint(u64::from(e), &mut body));
        }
        seal(MAGIC, &body)
    }

    fn decode(bytes: &[u8]) -> Option<Snapshot> {
        let mut at = unseal(MAGIC, bytes)?;
        let mut folders: Vec<Folder> = Vec::new();
        for _ in 0..read_varint(&mut at)? {
            let category = get_string(&mut at)?;
            let mtime = read_varint(&mut at)?;
            let slugs = get_string(&mut at)?;
            let count = usize::try_from(read_varint(&mut at)?).ok()?;
            let mut ends = Vec::with_capacity(count.min(at.len()));
            for _ in 0..count {
                ends.push(u32::try_from(read_varint(&mut at)?).ok()?);
            }
            if folders.last().is_some_and(|f| f.category >= category) {
                return None;
            }
            folders.push(Folder { category, mtime, slugs, ends });
        }
        at.is_empty().then_some(Snapshot { folders })
    }
}

/// List a root, looking up by name the files of folders the snapshot shows
/// unchanged, and (when `record`) record the folders that had to be read.
pub fn list(root: &Root, record: bool) -> (Vec<Listing>, Vec<Problem>) {
    let listed_at = now_ns();
    let snapshot = fs::read(path(root)).ok().and_then(|b| Snapshot::decode(&b)).unwrap_or_default();
    let (listings, problems) = list_with(root, &|category| snapshot.known(category));
    if record && listings.iter().any(|l| !l.known) {
        let settled = |l: &&Listing| {
            !l.problems && l.dir_mtime_ns > 0 && l.dir_mtime_ns.saturating_add(RACY_NS) < listed_at
        };
        let folder = |l: &Listing| {
            let mut f = Folder {
                category: l.category.clone(),
                mtime: l.dir_mtime_ns,
                slugs: String::new(),
                ends: Vec::with_capacity(l.files.len()),
            };
            for i in 0..l.files.len() {
                f.slugs.push_str(l.slug(i));
                f.ends.push(f.slugs.len() as u32);
            }
            f
        };
        let fresh = Snapshot { folders: listings.iter().filter(settled).map(folder).collect() };
        if fresh != snapshot {
            // A snapshot that cannot be written only costs folder reads.
            let _ = write_atomic(&root.dir, &path(root), &fresh.encode());
        }
    }
    (listings, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_back_and_damage_is_refused() {
        let folder = |category: &str, mtime, slugs: &[&str]| Folder {
            category: category.into(),
            mtime,
            slugs: slugs.concat(),
            ends: slugs
                .iter()
                .scan(0, |end, s| Some(*end + s.len() as u32).inspect(|e| *end = *e))
                .collect(),
        };
        let snapshot = Snapshot {
            folders: vec![folder("decisions", 5, &["a", "部署", "b-c"]), folder("rules", 0, &[])],
        };
        assert_eq!(snapshot.known("decisions"), Some((5, vec!["a", "部署", "b-c"])));
        assert_eq!(snapshot.known("rules"), Some((0, vec![])));
        assert_eq!(snapshot.known("facts"), None);
        let bytes = snapshot.encode();
        assert_eq!(Snapshot::decode(&bytes), Some(snapshot));
        for cut in 0..bytes.len() {
            assert_eq!(Snapshot::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(Snapshot::decode(&flipped), None);
    }
}
