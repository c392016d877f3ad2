//! A memory's metadata as a cache record, and back.

use crate::base::codec::{get_string, put_bytes, read_varint, varint};
use crate::memory::Memory;
use crate::relpath::RelPath;
use crate::roots::Scope;

pub(super) fn put_opt(s: &Option<String>, out: &mut Vec<u8>) {
    match s {
        Some(s) => {
            out.push(1);
            put_bytes(s.as_bytes(), out);
        }
        None => out.push(0),
    }
}

pub(super) fn get_opt(at: &mut &[u8]) -> Option<Option<String>> {
    let (&flag, rest) = at.split_first()?;
    *at = rest;
    match flag {
        1 => get_string(at).map(Some),
        0 => Some(None),
        _ => None,
    }
}

pub(super) fn put_list(items: &[String], out: &mut Vec<u8>) {
    varint(items.len() as u64, out);
    for s in items {
        put_bytes(s.as_bytes(), out);
    }
}

pub(super) fn get_list(at: &mut &[u8]) -> Option<Vec<String>> {
    let n = read_varint(at)?;
    (0..n).map(|_| get_string(at)).collect()
}

pub(super) fn put_i64(v: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(super) fn get_i64(at: &mut &[u8]) -> Option<i64> {
    let (bytes, rest) = at.split_first_chunk::<8>()?;
    *at = rest;
    Some(i64::from_le_bytes(*bytes))
}

pub(super) fn put_memory(m: &Memory, out: &mut Vec<u8>) {
    for s in [&m.title, &m.kind, &m.summary, &m.highlight] {
        put_bytes(s.as_bytes(), out);
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
    put_i64(m.content as i64, out);
}

pub(super) fn get_memory(path: RelPath, scope: Scope, at: &mut &[u8]) -> Option<Memory> {
    let (title, kind, summary, highlight) =
        (get_string(at)?, get_string(at)?, get_string(at)?, get_string(at)?);
    let (created, updated) = (get_i64(at)?, get_i64(at)?);
    let (load_when, tags, paths) = (get_list(at)?, get_list(at)?, get_list(at)?);
    let (&flags, rest) = at.split_first()?;
    *at = rest;
    let (role, supersedes, superseded_by) = (get_opt(at)?, get_opt(at)?, get_opt(at)?);
    let content = get_i64(at)? as u64;
    Some(Memory {
        path,
        scope,
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
        content,
    })
}
