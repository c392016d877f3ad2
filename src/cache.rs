//! The per-root index cache, `<root>/.cache/index.bin`: every memory's
//! metadata and field lengths, and packed term tables (one per segment of
//! memories; postings are read per query term), keyed by each file's path,
//! size and modification time.
//!
//! It is derived and disposable. A missing, truncated, corrupt or
//! other-version cache is rebuilt; files whose size or mtime changed are
//! re-read and indexed on the side; deleted files are left out. The file is
//! replaced atomically, so concurrent readers never see half of it.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::PathBuf;

use crate::memory::Memory;
use crate::progress::Progress;
use crate::rank::corpus::{FIELDS, Segment, Terms};
use crate::rank::packed::{Packed, checksum, read_varint, varint};
use crate::rank::tokenize::Tokenizer;
use crate::relpath::RelPath;
use crate::roots::Root;
use crate::scan::{FileEntry, Problem, load_files, load_files_counted, walk};
use crate::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMIDX\0\x01";
/// Bump when the tokenizer, the fields or this format change.
const FORMAT: u64 = 5;

/// Files changed this close to the listing a cache was built from are read
/// again: two seconds covers the coarsest file system clocks.
const RACY_NS: u64 = 2_000_000_000;

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A root ready for ranking.
pub struct Indexed {
    /// Every memory known (bodies are empty for those read from the cache).
    pub memories: Vec<Memory>,
    /// Which memories exist now (a changed file's old entry is dead).
    pub live: Vec<bool>,
    /// Segments covering `memories` in order.
    pub segments: Vec<Segment>,
    pub problems: Vec<Problem>,
}

/// One cached memory.
struct Entry {
    size: u64,
    mtime_ns: u64,
    memory: Memory,
    lengths: [u32; FIELDS],
    problems: Vec<String>,
}

/// Remove a root's cache (after it turned out damaged).
pub fn discard(root: &Root) {
    let _ = fs::remove_file(path(root));
}

/// The cache file of a root.
pub fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("index.bin")
}

/// Index a root, using and refreshing its cache.
pub fn index_root(root: &Root, tokenizer: &Tokenizer) -> Indexed {
    let listed_at = now_ns();
    // Listing the files and reading the cache do not depend on each other.
    let ((files, mut problems), cache) = std::thread::scope(|s| {
        let cache = s.spawn(|| read(root));
        (walk(root), cache.join().ok().flatten())
    });
    let Some((entries, cached, built_at)) = cache else {
        return rebuild(root, &files, problems, tokenizer, listed_at);
    };
    let (mut live, changed) = match_files(&entries, &files, built_at);
    // Past a few percent of changed files, a fresh cache pays for itself.
    if changed.len() > 64.max(entries.len() / 20) {
        return rebuild(root, &files, problems, tokenizer, listed_at);
    }
    let fresh = load_files(root.scope, &changed);
    problems.extend(fresh.problems);
    let mut memories = Vec::with_capacity(entries.len() + fresh.memories.len());
    for (e, alive) in entries.into_iter().zip(&live) {
        if *alive {
            problems.extend(e.problems.into_iter().map(|message| Problem {
                path: e.memory.path.under(&root.dir),
                line: None,
                message,
                skipped: false,
            }));
        }
        memories.push(e.memory);
    }
    let overlay = Segment::build(&fresh.memories, tokenizer);
    live.extend(std::iter::repeat_n(true, fresh.memories.len()));
    memories.extend(fresh.memories);
    let mut segments = cached;
    segments.push(overlay);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Indexed { memories, live, segments, problems }
}

/// Which cached entries are still current, and which files must be read.
/// Both lists are in walk order (category, then file name): merge them.
///
/// An entry is trusted only if its file was last changed clearly before the
/// listing the cache was built from (`built_at`): a file written in the same
/// clock tick as that listing could have changed unseen (git's "racy" case),
/// so it is read again.
fn match_files(
    entries: &[Entry],
    files: &[FileEntry],
    built_at: u64,
) -> (Vec<bool>, Vec<FileEntry>) {
    let mut live = vec![false; entries.len()];
    let mut changed = Vec::new();
    let mut i = 0;
    for f in files {
        while i < entries.len() && walk_order(&entries[i].memory.path, &f.rel) == Ordering::Less {
            i += 1;
        }
        match entries.get(i) {
            Some(e)
                if e.memory.path == f.rel
                    && e.size == f.size
                    && e.mtime_ns == f.mtime_ns
                    && f.mtime_ns.saturating_add(RACY_NS) < built_at =>
            {
                live[i] = true;
                i += 1;
            }
            _ => changed.push(f.clone()),
        }
    }
    (live, changed)
}

/// A root's memories as their frontmatter says, through the cache when it
/// is there (only changed files are read), never writing it: for commands
/// that need metadata, not ranking.
pub fn memories(root: &Root) -> Vec<Memory> {
    let (files, _) = walk(root);
    let Some((entries, _, built_at)) = read(root) else {
        return load_files(root.scope, &files).memories;
    };
    let (live, changed) = match_files(&entries, &files, built_at);
    let fresh = load_files(root.scope, &changed).memories;
    entries
        .into_iter()
        .zip(live)
        .filter_map(|(e, live)| live.then_some(e.memory))
        .chain(fresh)
        .collect()
}

/// The order [`walk`] lists files in: category, then file name (`<slug>.md`).
fn walk_order(a: &RelPath, b: &RelPath) -> Ordering {
    fn name(r: &RelPath) -> impl Iterator<Item = u8> + '_ {
        r.slug.bytes().chain(*b".md")
    }
    a.category.cmp(&b.category).then_with(|| name(a).cmp(name(b)))
}

/// Read every file, index it, and write a new cache.
fn rebuild(
    root: &Root,
    files: &[FileEntry],
    mut problems: Vec<Problem>,
    tokenizer: &Tokenizer,
    listed_at: u64,
) -> Indexed {
    // Reading counts one step per file, indexing another.
    let progress = Progress::start("indexing memories", 2 * files.len());
    let scan = load_files_counted(root.scope, files, progress.counter());
    progress
        .counter()
        .fetch_add(files.len() - scan.memories.len(), std::sync::atomic::Ordering::Relaxed);
    let segments = Segment::build_packed(&scan.memories, tokenizer, progress.counter());
    drop(progress);
    let mut field_problems: HashMap<PathBuf, Vec<String>> = HashMap::new();
    for p in scan.problems.iter().filter(|p| !p.skipped) {
        field_problems.entry(p.path.clone()).or_default().push(p.message.clone());
    }
    let bytes = encode(root, files, &scan.memories, &segments, &field_problems, listed_at);
    // A cache that cannot be written only costs time on the next run.
    let _ = write_atomic(&root.dir, &path(root), &bytes);
    problems.extend(scan.problems);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let live = vec![true; scan.memories.len()];
    Indexed { memories: scan.memories, live, segments, problems }
}

/// Header: magic, version tag, checked length, checksum, total length.
const HEADER: usize = 40;

/// The cache file: header, a checked region (documents, segment table,
/// term indexes) read whole, then the postings, read per term on demand.
fn encode(
    root: &Root,
    files: &[FileEntry],
    memories: &[Memory],
    segments: &[Segment],
    field_problems: &HashMap<PathBuf, Vec<String>>,
    listed_at: u64,
) -> Vec<u8> {
    let keys: HashMap<String, &FileEntry> = files.iter().map(|f| (f.rel.file(), f)).collect();
    let mut checked = Vec::new();
    varint(listed_at, &mut checked);
    varint(memories.len() as u64, &mut checked);
    let lengths = segments.iter().flat_map(|s| s.lengths.iter());
    for (m, len) in memories.iter().zip(lengths) {
        let (size, mtime) = keys.get(&m.file()).map_or((0, 0), |f| (f.size, f.mtime_ns));
        put_str(&m.file(), &mut checked);
        varint(size, &mut checked);
        varint(mtime, &mut checked);
        put_memory(m, &mut checked);
        for l in len {
            varint(u64::from(*l), &mut checked);
        }
        let problems =
            field_problems.get(&m.path.under(&root.dir)).map_or(&[][..], |v| v.as_slice());
        put_list(problems, &mut checked);
    }
    let tables: Vec<(&[u8], &[u8], usize)> = segments
        .iter()
        .filter_map(|s| match &s.terms {
            Terms::Packed(p) => match p.bytes() {
                (index, Some(postings)) => Some((index, postings, s.lengths.len())),
                _ => None,
            },
            Terms::Built(_) => None,
        })
        .collect();
    varint(tables.len() as u64, &mut checked);
    for (index, postings, docs) in &tables {
        varint(*docs as u64, &mut checked);
        varint(index.len() as u64, &mut checked);
        varint(postings.len() as u64, &mut checked);
    }
    for (index, _, _) in &tables {
        checked.extend_from_slice(index);
    }
    let postings_len: usize = tables.iter().map(|t| t.1.len()).sum();
    let total = HEADER + checked.len() + postings_len;
    let mut file = Vec::with_capacity(total);
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&version_tag().to_le_bytes());
    file.extend_from_slice(&(checked.len() as u64).to_le_bytes());
    file.extend_from_slice(&checksum(&checked).to_le_bytes());
    file.extend_from_slice(&(total as u64).to_le_bytes());
    file.extend_from_slice(&checked);
    for (_, postings, _) in &tables {
        file.extend_from_slice(postings);
    }
    file
}

/// Read a root's cache: the entries and the packed segments (postings stay
/// in the file). None when it is missing, damaged or from another version.
fn read(root: &Root) -> Option<(Vec<Entry>, Vec<Segment>, u64)> {
    let mut file = fs::File::open(path(root)).ok()?;
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    let (checked_len, sum, total) = (word(16), word(24), word(32));
    if &header[..8] != MAGIC || word(8) != version_tag() || file.metadata().ok()?.len() != total {
        return None;
    }
    let mut checked = vec![0u8; usize::try_from(checked_len).ok()?];
    file.read_exact(&mut checked).ok()?;
    if checksum(&checked) != sum {
        return None;
    }
    let mut at = checked.as_slice();
    let built_at = read_varint(&mut at)?;
    let count = read_varint(&mut at)? as usize;
    let mut entries = Vec::with_capacity(count.min(1 << 24));
    for _ in 0..count {
        let rel = RelPath::parse(&get_str(&mut at)?).ok()?;
        let size = read_varint(&mut at)?;
        let mtime_ns = read_varint(&mut at)?;
        let memory = get_memory(rel, root, &mut at)?;
        let mut lengths = [0u32; FIELDS];
        for l in &mut lengths {
            *l = read_varint(&mut at)? as u32;
        }
        let problems = get_list(&mut at)?;
        entries.push(Entry { size, mtime_ns, memory, lengths, problems });
    }
    let tables = read_varint(&mut at)? as usize;
    let mut dims = Vec::with_capacity(tables.min(1 << 16));
    for _ in 0..tables {
        dims.push((
            read_varint(&mut at)? as usize,
            read_varint(&mut at)? as usize,
            read_varint(&mut at)?,
        ));
    }
    let mut segments = Vec::with_capacity(dims.len());
    let mut offset = HEADER as u64 + checked_len;
    let mut first = 0;
    for (docs, index_len, postings_len) in dims {
        let index = at.get(..index_len)?.to_vec();
        at = &at[index_len..];
        let packed = Packed::from_file(index, file.try_clone().ok()?, offset, postings_len)?;
        let lengths = entries.get(first..first + docs)?.iter().map(|e| e.lengths).collect();
        segments.push(Segment { terms: Terms::Packed(packed), lengths });
        offset += postings_len;
        first += docs;
    }
    (first == entries.len() && offset == total).then_some((entries, segments, built_at))
}

/// The format number mixed with the program version: an upgrade rebuilds.
fn version_tag() -> u64 {
    checksum(env!("CARGO_PKG_VERSION").as_bytes()) ^ FORMAT
}

fn put_str(s: &str, out: &mut Vec<u8>) {
    varint(s.len() as u64, out);
    out.extend_from_slice(s.as_bytes());
}

fn get_str(at: &mut &[u8]) -> Option<String> {
    let len = read_varint(at)? as usize;
    let bytes = at.get(..len)?;
    *at = &at[len..];
    String::from_utf8(bytes.to_vec()).ok()
}

fn put_opt(s: &Option<String>, out: &mut Vec<u8>) {
    match s {
        Some(s) => {
            out.push(1);
            put_str(s, out);
        }
        None => out.push(0),
    }
}

fn get_opt(at: &mut &[u8]) -> Option<Option<String>> {
    let (&flag, rest) = at.split_first()?;
    *at = rest;
    if flag == 1 { get_str(at).map(Some) } else { Some(None) }
}

fn put_list(items: &[String], out: &mut Vec<u8>) {
    varint(items.len() as u64, out);
    for s in items {
        put_str(s, out);
    }
}

fn get_list(at: &mut &[u8]) -> Option<Vec<String>> {
    let n = read_varint(at)? as usize;
    (0..n).map(|_| get_str(at)).collect()
}

fn put_i64(v: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn get_i64(at: &mut &[u8]) -> Option<i64> {
    let bytes = at.get(..8)?;
    *at = &at[8..];
    Some(i64::from_le_bytes(bytes.try_into().ok()?))
}

fn put_memory(m: &Memory, out: &mut Vec<u8>) {
    for s in [&m.title, &m.kind, &m.summary, &m.highlight] {
        put_str(s, out);
    }
    put_i64(m.created, out);
    put_i64(m.updated, out);
    put_list(&m.load_when, out);
    put_list(&m.tags, out);
    put_list(&m.paths, out);
    out.push(u8::from(m.pinned) | u8::from(m.summary_derived) << 1);
    for s in [&m.role, &m.supersedes, &m.superseded_by] {
        put_opt(s, out);
    }
}

fn get_memory(path: RelPath, root: &Root, at: &mut &[u8]) -> Option<Memory> {
    let (title, kind, summary, highlight) =
        (get_str(at)?, get_str(at)?, get_str(at)?, get_str(at)?);
    let (created, updated) = (get_i64(at)?, get_i64(at)?);
    let (load_when, tags, paths) = (get_list(at)?, get_list(at)?, get_list(at)?);
    let (&flags, rest) = at.split_first()?;
    *at = rest;
    let (role, supersedes, superseded_by) = (get_opt(at)?, get_opt(at)?, get_opt(at)?);
    Some(Memory {
        path,
        scope: root.scope,
        title,
        kind,
        summary,
        summary_derived: flags & 2 != 0,
        highlight,
        created,
        updated,
        load_when,
        pinned: flags & 1 != 0,
        tags,
        role,
        paths,
        supersedes,
        superseded_by,
        body: String::new(),
    })
}

/// The selected roots indexed as one corpus, project first. A global memory
/// at the same path as a live project memory is shadowed: known, not ranked.
pub fn index_all(roots: &[&Root]) -> (Vec<Memory>, crate::rank::corpus::Corpus, Vec<Problem>) {
    let tokenizer = Tokenizer::new();
    let mut indexed: Vec<Indexed> = roots.iter().map(|root| index_root(root, &tokenizer)).collect();
    // A later root's memory at a path an earlier root has is shadowed.
    for k in 1..indexed.len() {
        let (earlier, later) = indexed.split_at_mut(k);
        let taken: std::collections::HashSet<&RelPath> = earlier
            .iter()
            .flat_map(|ix| {
                ix.memories.iter().zip(&ix.live).filter(|(_, l)| **l).map(|(m, _)| &m.path)
            })
            .collect();
        let last = &mut later[0];
        for (m, alive) in last.memories.iter().zip(last.live.iter_mut()) {
            *alive = *alive && !taken.contains(&m.path);
        }
    }
    let mut memories = Vec::new();
    let mut live = Vec::new();
    let mut segments = Vec::new();
    let mut problems = Vec::new();
    for ix in indexed {
        if memories.is_empty() {
            memories = ix.memories;
            live = ix.live;
        } else {
            memories.extend(ix.memories);
            live.extend(ix.live);
        }
        segments.extend(ix.segments);
        problems.extend(ix.problems);
    }
    let corpus = crate::rank::corpus::Corpus::assemble(&memories, live, segments);
    (memories, corpus, problems)
}
