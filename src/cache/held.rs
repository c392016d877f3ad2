//! Which files of a trusted project root are held back from agents, for
//! the notice that `inspect`, `stats`, `lint`, `compile`, `edit`,
//! `remember` and the pre-commit hook print.
//!
//! Hashing every file, as `mem trust` does, costs seconds on a large root;
//! so what each file's digest was is kept per device in
//! `<root>/.cache/trusted`, by the file's size and stamp (mtime, ctime and
//! inode), with whether it matched the trust record as it then was. A file
//! whose stamp is unchanged is not read again; while the record file is
//! unchanged too, the record is not read at all. Like every cache it is
//! derived and disposable, and it only drives this notice: the gate of
//! `mem context` and the MCP server checks the digest of the bytes it
//! injects, every time ([`crate::store::trust::Gate`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::base::codec::{checksum, get_string, put_bytes, read_varint, seal, unseal, varint};
use crate::base::time::now_ns;
use crate::cache::format::RACY_NS;
use crate::model::roots::Root;
use crate::store::files::{self, Links, MAX_FILE_BYTES, MAX_GENERATED_BYTES};
use crate::store::scan::Listing;
use crate::store::write::write_atomic;

use crate::store::trust::{ROOT_MD, digest, load, prose, record_path};

const MAGIC: &[u8; 8] = b"MEMTRST\x01";
/// How many held-back files a notice names.
const NAMED: usize = 3;

/// Where a project root stands with the agents of this device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Never trusted here, or another folder at a path that was: agents get
    /// none of it.
    Untrusted,
    /// Trusted; the files changed or added outside `mem` since, held back
    /// ([`ROOT_MD`] or `category/slug.md`, in path order).
    Trusted(Vec<String>),
}

impl Standing {
    /// The files held back (none when untrusted: the whole root is).
    pub fn held(&self) -> &[String] {
        match self {
            Standing::Trusted(held) => held,
            Standing::Untrusted => &[],
        }
    }

    /// "N project files changed outside mem are held back from agents",
    /// naming up to three; None when nothing is.
    pub fn notice(&self) -> Option<String> {
        let held = self.held();
        if held.is_empty() {
            return None;
        }
        let mut named = held.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
        if held.len() > NAMED {
            named.push_str(&format!(", and {} more", held.len() - NAMED));
        }
        let (file, are) = if held.len() == 1 { ("file", "is") } else { ("files", "are") };
        Some(format!(
            "{} project {file} changed outside mem {are} held back from agents ({named}): review with `mem trust`",
            held.len()
        ))
    }

    /// One quiet line for a root never trusted here, for the commands that
    /// describe a root (`inspect`, `stats`, `lint`).
    pub fn untrusted_line(&self) -> Option<String> {
        (*self == Standing::Untrusted).then(|| {
            "this project's memory is not trusted on this device, so agents get none of it: review with `mem trust`".to_string()
        })
    }
}

/// Where the project root `project` stands, as its memory files are listed
/// in `listings` (see [`crate::cache::snapshot::list`]); `keep` writes what
/// was learnt to the cache (not for a command that writes nothing).
pub fn standing(global: &Path, project: &Root, listings: &[Listing], keep: bool) -> Standing {
    let Ok(canonical) = project.dir.canonicalize() else { return Standing::Untrusted };
    let Some(record_stamp) = stamp_of(&record_path(global, &canonical)).map(|s| s.size_stamp)
    else {
        return Standing::Untrusted;
    };
    let listed_at = now_ns();
    let cache_path = cache_path(project);
    let bytes = files::read(&project.dir, &cache_path, Links::Never, u64::from(u32::MAX)).ok();
    let root_md = stamp_of(&project.dir.join(ROOT_MD));
    let listed = listing_digest(listings, root_md);
    // Nothing moved since the cache was made (the trust record, every
    // file's name, size and stamp): its verdicts stand, read from its head.
    if let Some(head) = bytes.as_deref().and_then(decode_head)
        && head.record == Some(record_stamp)
        && head.listed == listed
    {
        return Standing::Trusted(head.held);
    }
    let cached = bytes.as_deref().and_then(decode).unwrap_or_default();
    let now = current(listings, root_md);
    let Some(record) = load(global, project) else { return Standing::Untrusted };
    let mut fresh = Cache { record: Some(record_stamp), ..Cache::default() };
    let mut held = Vec::new();
    for (key, seen) in &now {
        let known = cached.files.get(key).filter(|e| e.size_stamp == seen.size_stamp);
        let digest = match known {
            Some(e) => e.digest.clone(),
            None => match read_digest(project, key) {
                Some(d) => d,
                // Unreadable: never injected, and reported by lint.
                None => continue,
            },
        };
        let ok = record.files.get(key) == Some(&digest);
        if !ok {
            held.push(key.clone());
        }
        // A file changed too recently may change again within the same
        // stamp: it is read again next time.
        if known.is_some() || seen.changed_ns.saturating_add(RACY_NS) < listed_at {
            fresh.files.insert(key.clone(), Entry { size_stamp: seen.size_stamp, digest, ok });
        }
    }
    // The head vouches for the whole listing only when every file in it
    // was settled (none was left out of the cache).
    if fresh.files.len() == now.len() {
        fresh.listed = listed;
        fresh.held = held.clone();
    }
    if keep && fresh != cached {
        // A cache that cannot be written only costs the hashing again.
        let _ = write_atomic(&project.dir, &cache_path, &encode(&fresh));
    }
    Standing::Trusted(held)
}

/// Where `project` stands, its files listed now (the folder snapshot is
/// used, not written).
pub fn standing_now(global: &Path, project: &Root, keep: bool) -> Standing {
    let (listings, _) = crate::cache::snapshot::list(project, false);
    standing(global, project, &listings, keep)
}

fn cache_path(project: &Root) -> PathBuf {
    project.dir.join(".cache").join("trusted")
}

/// The size, stamp and last change (ns) of the file at `path`, None when
/// it cannot be looked at.
fn stamp_of(path: &Path) -> Option<Seen> {
    let meta = std::fs::metadata(path).ok()?;
    let (mtime, ctime, ino) = crate::store::scan::listing::times(&meta);
    Some(Seen {
        size_stamp: (meta.len(), crate::store::scan::stamp(mtime, ctime, ino)),
        changed_ns: mtime.max(ctime),
    })
}

/// A file as listed.
#[derive(Debug, Clone, Copy)]
struct Seen {
    size_stamp: (u64, u64),
    changed_ns: u64,
}

/// Every file that can reach an agent, as listed, by key.
fn current(listings: &[Listing], root_md: Option<Seen>) -> BTreeMap<String, Seen> {
    let mut out = BTreeMap::new();
    if let Some(s) = root_md {
        out.insert(ROOT_MD.to_string(), s);
    }
    for l in listings {
        for (i, f) in l.files.iter().enumerate() {
            let seen = Seen { size_stamp: (f.size, f.stamp()), changed_ns: f.changed_ns() };
            out.insert(format!("{}/{}", l.category, l.name(i)), seen);
        }
    }
    out
}

/// The digest trust records for the file of `key`: ROOT.md's hand-written
/// text, a memory whole.
fn read_digest(project: &Root, key: &str) -> Option<String> {
    let path = project.dir.join(key);
    if key == ROOT_MD {
        let text =
            files::read_text(&project.dir, &path, Links::Inside, MAX_GENERATED_BYTES).ok()?;
        return Some(digest(prose(&text).as_bytes()));
    }
    let text = files::read_text(&project.dir, &path, Links::Inside, MAX_FILE_BYTES).ok()?;
    Some(digest(text.as_bytes()))
}

/// What the cache says at its head: enough for the common case, nothing
/// changed since.
#[derive(Debug, Default, PartialEq, Eq)]
struct Head {
    /// The trust record file's size and stamp when the verdicts were made.
    record: Option<(u64, u64)>,
    /// [`listing_digest`] of the files then (0: not vouched for).
    listed: u64,
    /// The files held back then.
    held: Vec<String>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Cache {
    /// The trust record file's size and stamp when the verdicts were made.
    record: Option<(u64, u64)>,
    listed: u64,
    held: Vec<String>,
    files: BTreeMap<String, Entry>,
}

/// A digest of every memory file's category, name, size and stamp, and
/// of ROOT.md's size and stamp.
fn listing_digest(listings: &[Listing], root_md: Option<Seen>) -> u64 {
    let mut bytes = Vec::with_capacity(64 * listings.len());
    let (size, stamp) = root_md.map_or((u64::MAX, 0), |s| s.size_stamp);
    varint(size, &mut bytes);
    varint(stamp, &mut bytes);
    crate::cache::stamp::encode_listing(listings, &mut bytes);
    // Never 0, which means "not vouched for".
    checksum(&bytes) | 1
}

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    size_stamp: (u64, u64),
    digest: String,
    /// The digest matched the record.
    ok: bool,
}

fn encode(cache: &Cache) -> Vec<u8> {
    let mut body = Vec::new();
    let (size, stamp) = cache.record.unwrap_or_default();
    varint(size, &mut body);
    varint(stamp, &mut body);
    varint(cache.listed, &mut body);
    varint(cache.held.len() as u64, &mut body);
    for key in &cache.held {
        put_bytes(key.as_bytes(), &mut body);
    }
    varint(cache.files.len() as u64, &mut body);
    for (key, e) in &cache.files {
        put_bytes(key.as_bytes(), &mut body);
        varint(e.size_stamp.0, &mut body);
        varint(e.size_stamp.1, &mut body);
        put_bytes(e.digest.as_bytes(), &mut body);
        body.push(u8::from(e.ok));
    }
    seal(MAGIC, &body)
}

/// The head, and where the file entries start.
fn read_head(bytes: &[u8]) -> Option<(Head, &[u8])> {
    let mut at = unseal(MAGIC, bytes)?;
    let record = Some((read_varint(&mut at)?, read_varint(&mut at)?));
    let listed = read_varint(&mut at)?;
    let n = read_varint(&mut at)?;
    let mut held = Vec::new();
    for _ in 0..n {
        held.push(get_string(&mut at)?);
    }
    Some((Head { record, listed, held }, at))
}

fn decode_head(bytes: &[u8]) -> Option<Head> {
    read_head(bytes).map(|(head, _)| head)
}

fn decode(bytes: &[u8]) -> Option<Cache> {
    let (Head { record, listed, held }, mut at) = read_head(bytes)?;
    let count = read_varint(&mut at)?;
    let mut files = BTreeMap::new();
    for _ in 0..count {
        let key = get_string(&mut at)?;
        let size_stamp = (read_varint(&mut at)?, read_varint(&mut at)?);
        let digest = get_string(&mut at)?;
        let (&ok, rest) = at.split_first()?;
        at = rest;
        files.insert(key, Entry { size_stamp, digest, ok: ok == 1 });
    }
    at.is_empty().then_some(Cache { record, listed, held, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_names_three_and_counts_the_rest() {
        let held = |n: usize| Standing::Trusted((0..n).map(|i| format!("rules/r{i}.md")).collect());
        assert_eq!(held(0).notice(), None);
        assert_eq!(
            held(1).notice().unwrap(),
            "1 project file changed outside mem is held back from agents (rules/r0.md): review with `mem trust`"
        );
        let five = held(5).notice().unwrap();
        assert!(five.starts_with("5 project files changed outside mem are held back"), "{five}");
        assert!(five.contains("(rules/r0.md, rules/r1.md, rules/r2.md, and 2 more)"), "{five}");
        assert_eq!(Standing::Untrusted.notice(), None);
        assert!(Standing::Untrusted.untrusted_line().is_some());
        assert!(held(2).untrusted_line().is_none());
    }

    #[test]
    fn the_cache_reads_back_and_damage_is_refused() {
        let mut files = BTreeMap::new();
        files.insert(
            "rules/a.md".to_string(),
            Entry { size_stamp: (10, 20), digest: "ab".into(), ok: true },
        );
        files.insert(
            ROOT_MD.to_string(),
            Entry { size_stamp: (1, u64::MAX), digest: "cd".into(), ok: false },
        );
        let cache =
            Cache { record: Some((3, 4)), listed: 9, held: vec![ROOT_MD.to_string()], files };
        let bytes = encode(&cache);
        assert_eq!(decode(&bytes), Some(cache));
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
    }
}
