//! The per-root index cache, `<root>/.cache/index.bin`: every memory's
//! metadata and field lengths, and the packed term table, keyed by each
//! file's path, size and modification time.
//!
//! It is derived and disposable. A missing, truncated, corrupt or
//! other-version cache is rebuilt; files whose size or mtime changed are
//! re-read and indexed on the side; deleted files are left out. The file is
//! replaced atomically, so concurrent readers never see half of it.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use crate::memory::Memory;
use crate::rank::corpus::{FIELDS, Segment, Terms};
use crate::rank::packed::{Packed, read_varint, varint};
use crate::rank::tokenize::Tokenizer;
use crate::relpath::RelPath;
use crate::roots::Root;
use crate::scan::{FileEntry, Problem, load_files, walk};
use crate::write::write_atomic;

const MAGIC: &[u8; 8] = b"MEMIDX\0\x01";
/// Bump when the tokenizer, the fields or this format change.
const FORMAT: u64 = 3;

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

/// The cache file of a root.
pub fn path(root: &Root) -> PathBuf {
    root.dir.join(".cache").join("index.bin")
}

/// Index a root, using and refreshing its cache.
pub fn index_root(root: &Root, tokenizer: &Tokenizer) -> Indexed {
    let (files, mut problems) = walk(root);
    let Some((entries, packed)) = read(root) else {
        return rebuild(root, &files, problems, tokenizer);
    };
    let by_rel: HashMap<String, usize> =
        entries.iter().enumerate().map(|(i, e)| (e.memory.path.file(), i)).collect();
    let mut live = vec![false; entries.len()];
    let mut changed = Vec::new();
    for f in &files {
        match by_rel.get(&f.rel.file()) {
            Some(&i) if entries[i].size == f.size && entries[i].mtime_ns == f.mtime_ns => {
                live[i] = true
            }
            _ => changed.push(f.clone()),
        }
    }
    // Past a few percent of changed files, a fresh cache pays for itself.
    if changed.len() > 64.max(entries.len() / 20) {
        return rebuild(root, &files, problems, tokenizer);
    }
    let fresh = load_files(root.scope, &changed);
    problems.extend(fresh.problems);
    let mut memories = Vec::with_capacity(entries.len() + fresh.memories.len());
    let mut lengths = Vec::with_capacity(entries.len());
    for (e, alive) in entries.into_iter().zip(&live) {
        if *alive {
            problems.extend(e.problems.into_iter().map(|message| Problem {
                path: e.memory.path.under(&root.dir),
                line: None,
                message,
                skipped: false,
            }));
        }
        lengths.push(e.lengths);
        memories.push(e.memory);
    }
    let overlay = Segment::build(&fresh.memories, tokenizer);
    live.extend(std::iter::repeat_n(true, fresh.memories.len()));
    memories.extend(fresh.memories);
    let segments = vec![Segment { terms: Terms::Packed(packed), lengths }, overlay];
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Indexed { memories, live, segments, problems }
}

/// Read every file, index it, and write a new cache.
fn rebuild(
    root: &Root,
    files: &[FileEntry],
    mut problems: Vec<Problem>,
    tokenizer: &Tokenizer,
) -> Indexed {
    let scan = load_files(root.scope, files);
    let segments = Segment::build_parallel(&scan.memories, tokenizer);
    let field_problems: HashMap<PathBuf, Vec<String>> =
        scan.problems.iter().filter(|p| !p.skipped).fold(HashMap::new(), |mut map, p| {
            map.entry(p.path.clone()).or_default().push(p.message.clone());
            map
        });
    let bytes = encode(root, files, &scan.memories, &segments, &field_problems);
    // A cache that cannot be written only costs time on the next run.
    let _ = write_atomic(&root.dir, &path(root), &bytes);
    problems.extend(scan.problems);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let live = vec![true; scan.memories.len()];
    Indexed { memories: scan.memories, live, segments, problems }
}

fn encode(
    root: &Root,
    files: &[FileEntry],
    memories: &[Memory],
    segments: &[Segment],
    field_problems: &HashMap<PathBuf, Vec<String>>,
) -> Vec<u8> {
    let keys: HashMap<String, &FileEntry> = files.iter().map(|f| (f.rel.file(), f)).collect();
    let mut out = Vec::new();
    varint(memories.len() as u64, &mut out);
    let lengths = segments.iter().flat_map(|s| s.lengths.iter());
    for (m, len) in memories.iter().zip(lengths) {
        let (size, mtime) = keys.get(&m.file()).map_or((0, 0), |f| (f.size, f.mtime_ns));
        put_str(&m.file(), &mut out);
        varint(size, &mut out);
        varint(mtime, &mut out);
        put_memory(m, &mut out);
        for l in len {
            varint(u64::from(*l), &mut out);
        }
        let problems =
            field_problems.get(&m.path.under(&root.dir)).map_or(&[][..], |v| v.as_slice());
        put_list(problems, &mut out);
    }
    let mut firsts = Vec::new();
    let mut first = 0u32;
    for s in segments {
        if let Terms::Built(b) = &s.terms {
            firsts.push((b, first));
        }
        first += s.lengths.len() as u32;
    }
    out.extend_from_slice(&Packed::pack(&firsts));
    let mut file = Vec::with_capacity(out.len() + 32);
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&version_tag().to_le_bytes());
    file.extend_from_slice(&(out.len() as u64).to_le_bytes());
    file.extend_from_slice(&checksum(&out).to_le_bytes());
    file.extend_from_slice(&out);
    file
}

/// Read a root's cache; None when it is missing, damaged or from another version.
fn read(root: &Root) -> Option<(Vec<Entry>, Packed)> {
    let bytes = fs::read(path(root)).ok()?;
    let header = bytes.get(..32)?;
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    if &header[..8] != MAGIC || word(8) != version_tag() {
        return None;
    }
    let body = bytes.get(32..)?;
    if word(16) != body.len() as u64 || word(24) != checksum(body) {
        return None;
    }
    let mut at = &bytes[32..];
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
    let table_at = bytes.len() - at.len();
    let packed = Packed::from_bytes_at(bytes, table_at)?;
    Some((entries, packed))
}

/// The format number mixed with the program version: an upgrade rebuilds.
fn version_tag() -> u64 {
    checksum(env!("CARGO_PKG_VERSION").as_bytes()) ^ FORMAT
}

/// A fast 64-bit checksum over 8-byte words (not cryptographic: it catches
/// truncation and damage, not tampering; the cache is rebuilt from the files).
fn checksum(bytes: &[u8]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .wrapping_mul(0x0100_0000_01b3)
            .rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
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
    let mut memories = Vec::new();
    let mut live = Vec::new();
    let mut segments = Vec::new();
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        let indexed = index_root(root, &tokenizer);
        for (m, alive) in indexed.memories.iter().zip(&indexed.live) {
            live.push(*alive && !seen.contains(&m.path));
        }
        for (m, alive) in indexed.memories.iter().zip(&indexed.live) {
            if *alive {
                seen.insert(m.path.clone());
            }
        }
        memories.extend(indexed.memories);
        segments.extend(indexed.segments);
        problems.extend(indexed.problems);
    }
    let corpus = crate::rank::corpus::Corpus::assemble(&memories, live, segments);
    (memories, corpus, problems)
}
