//! The folder snapshot, `<root>/.cache/folders.bin`: each category folder's
//! stamp (mtime, ctime and inode, see [`crate::store::scan::stamp`]) and the memory
//! files it held when it was last read.
//!
//! Adding, removing or renaming an entry changes a folder's mtime and ctime
//! (a tool that puts the mtime back cannot put the ctime back), so while
//! the stamp is unchanged the folder holds the same names, and listing it
//! is one `stat` per known file instead of reading the folder
//! ([`list_with`]).
//! A folder is recorded only when it was read without problems and its
//! mtime is clearly older than the listing ([`RACY_NS`]), so a change in
//! the same clock tick is never hidden. Like the index cache the snapshot
//! is disposable: missing or damaged, folders are simply read.

use std::path::PathBuf;

use super::format::RACY_NS;
use super::mapped::Mapped;
use super::watch;
use crate::base::codec::{get_bytes, put_bytes, read_varint, seal, unseal, varint};
use crate::base::time::now_ns;
use crate::model::roots::Root;
use crate::store::files::{self, Links};
use crate::store::scan::{Known, Listing, Problem, list_with};
use crate::store::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMFOLD\x02";

fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("folders.bin")
}

/// The recorded folders, by category, as they lie in the file (mapped, not
/// copied: at a hundred thousand memories it holds every file name).
#[derive(Debug, Default, PartialEq)]
struct Snapshot<'a> {
    folders: Vec<Folder<'a>>,
}

/// One folder: its stamp and its memory files' slugs, back to back, with
/// where each ends (u32, little-endian).
#[derive(Debug, PartialEq)]
struct Folder<'a> {
    category: &'a str,
    mtime: u64,
    slugs: &'a [u8],
    ends: &'a [u8],
}

impl<'a> Snapshot<'a> {
    /// The folder of `category`: its mtime and slugs. None when it is not
    /// recorded, or its slugs do not read back (then it is simply read).
    fn known(&self, category: &str) -> Known<'a> {
        let i = self.folders.binary_search_by(|f| f.category.cmp(category)).ok()?;
        let folder = &self.folders[i];
        let slugs = std::str::from_utf8(folder.slugs).ok()?;
        let mut start = 0;
        let mut out = Vec::with_capacity(folder.ends.len() / 4);
        for end in folder.ends.chunks_exact(4) {
            let end = u32::from_le_bytes(end.try_into().ok()?) as usize;
            out.push(slugs.get(start..end)?);
            start = end;
        }
        (start == slugs.len()).then_some((folder.mtime, out))
    }

    fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        varint(self.folders.len() as u64, &mut body);
        for f in &self.folders {
            put_bytes(f.category.as_bytes(), &mut body);
            varint(f.mtime, &mut body);
            put_bytes(f.slugs, &mut body);
            put_bytes(f.ends, &mut body);
        }
        seal(MAGIC, &body)
    }

    fn decode(bytes: &'a [u8]) -> Option<Snapshot<'a>> {
        let mut at = unseal(MAGIC, bytes)?;
        let mut folders: Vec<Folder> = Vec::new();
        for _ in 0..read_varint(&mut at)? {
            let category = std::str::from_utf8(get_bytes(&mut at)?).ok()?;
            let mtime = read_varint(&mut at)?;
            let slugs = get_bytes(&mut at)?;
            let ends = get_bytes(&mut at)?;
            if folders.last().is_some_and(|f| f.category >= category) || ends.len() % 4 != 0 {
                return None;
            }
            folders.push(Folder { category, mtime, slugs, ends });
        }
        at.is_empty().then_some(Snapshot { folders })
    }
}

/// A listing's folder as a snapshot records it: its slugs back to back and
/// where each ends.
fn recorded(listing: &Listing) -> (String, Vec<u8>) {
    let mut slugs = String::new();
    let mut ends = Vec::with_capacity(4 * listing.files.len());
    for i in 0..listing.files.len() {
        slugs.push_str(listing.slug(i));
        ends.extend_from_slice(&(slugs.len() as u32).to_le_bytes());
    }
    (slugs, ends)
}

/// List a root, looking up by name the files of folders the snapshot shows
/// unchanged, and (when `record`) record the folders that had to be read.
pub fn list(root: &Root, record: bool) -> (Vec<Listing>, Vec<Problem>) {
    list_beside(root, record, &|| ())
}

/// [`list`], running `side` (work independent of the listing) on one of
/// the listing threads; see [`list_with`]. In a process that watches its
/// roots ([`watch`]), a root no event has touched is not listed again.
pub(crate) fn list_beside(
    root: &Root,
    record: bool,
    side: &(dyn Fn() + Sync),
) -> (Vec<Listing>, Vec<Problem>) {
    let (listings, problems, _) = list_kept(root, record, side);
    (listings, problems)
}

/// [`list_beside`], with the id of the listing when a watching process
/// keeps it (see [`watch::Ticket::keep`]).
pub(super) fn list_kept(
    root: &Root,
    record: bool,
    side: &(dyn Fn() + Sync),
) -> (Vec<Listing>, Vec<Problem>, Option<u64>) {
    let ticket = match watch::look(root) {
        watch::Looked::Kept(listings, problems, id) => {
            side();
            return (listings, problems, Some(id));
        }
        watch::Looked::List(ticket) => ticket,
    };
    let (listings, problems) = list_stat(root, record, side);
    let id = ticket.and_then(|ticket| ticket.keep(&listings, &problems));
    (listings, problems, id)
}

/// [`list_beside`] by `stat`, through the snapshot.
#[allow(unsafe_code, reason = "maps the snapshot: see the SAFETY note below")]
fn list_stat(root: &Root, record: bool, side: &(dyn Fn() + Sync)) -> (Vec<Listing>, Vec<Problem>) {
    let listed_at = now_ns();
    let file = files::open(&root.dir, &path(root), Links::Never).ok();
    let len = file.as_ref().and_then(|(_, len)| usize::try_from(*len).ok());
    let file = file.map(|(f, _)| f);
    // SAFETY: `Snapshot::decode` checks the sealed checksum and bounds every
    // read; what it yields only spares a folder read, and a folder whose
    // mtime differs from the snapshot's is read anyway.
    let mapped = file.zip(len).and_then(|(f, len)| unsafe { Mapped::open(&f, len) }.ok());
    let bytes = mapped.as_deref().unwrap_or_default();
    let snapshot = Snapshot::decode(bytes).unwrap_or_default();
    let (listings, problems) = list_with(root, &|category| snapshot.known(category), side);
    if record && listings.iter().any(|l| !l.known) {
        let settled = |l: &&Listing| {
            !l.problems
                && l.dir_changed_ns > 0
                && l.dir_changed_ns.saturating_add(RACY_NS) < listed_at
        };
        let settled: Vec<&Listing> = listings.iter().filter(settled).collect();
        let recorded: Vec<(String, Vec<u8>)> = settled.iter().map(|l| recorded(l)).collect();
        let folders = settled.iter().zip(&recorded).map(|(l, (slugs, ends))| Folder {
            category: &l.category,
            mtime: l.dir_stamp,
            slugs: slugs.as_bytes(),
            ends,
        });
        let fresh = Snapshot { folders: folders.collect() }.encode();
        if fresh != bytes {
            // A snapshot that cannot be written only costs folder reads.
            let _ = write_atomic(&root.dir, &path(root), &fresh);
        }
    }
    (listings, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_back_and_damage_is_refused() {
        let ends = |slugs: &[&str]| -> Vec<u8> {
            let mut end = 0u32;
            slugs
                .iter()
                .flat_map(|s| {
                    end += s.len() as u32;
                    end.to_le_bytes()
                })
                .collect()
        };
        let decisions = ["a", "部署", "b-c"];
        let (decisions_ends, no_ends) = (ends(&decisions), ends(&[]));
        let snapshot = Snapshot {
            folders: vec![
                Folder {
                    category: "decisions",
                    mtime: 5,
                    slugs: "a部署b-c".as_bytes(),
                    ends: &decisions_ends,
                },
                Folder { category: "rules", mtime: 0, slugs: b"", ends: &no_ends },
            ],
        };
        assert_eq!(snapshot.known("decisions"), Some((5, decisions.to_vec())));
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

        // Ends that split a character, run backwards or stop short are
        // refused for that folder alone.
        for bad in [[2u32, 5, 8], [1, 0, 8], [1, 4, 7]] {
            let bad: Vec<u8> = bad.iter().flat_map(|e| e.to_le_bytes()).collect();
            let folder = Folder {
                category: "decisions",
                mtime: 5,
                slugs: "a部署b-c".as_bytes(),
                ends: &bad,
            };
            assert_eq!(Snapshot { folders: vec![folder] }.known("decisions"), None);
        }
    }
}
