//! A memory's metadata as a cache record, and back.

use crate::base::codec::{get_string, put_bytes, read_varint, varint};
use crate::model::memory::Memory;
use crate::model::memory::keys::{Field, FieldRef, KEYS, Shape};
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::model::usage::Relevance;

pub(super) fn put_opt(s: Option<&str>, out: &mut Vec<u8>) {
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

/// A byte that is 0 or 1.
fn get_bool(at: &mut &[u8]) -> Option<bool> {
    let (&b, rest) = at.split_first()?;
    *at = rest;
    (b <= 1).then_some(b == 1)
}

/// A relevance level's byte (see [`Relevance`]'s order).
fn get_level(at: &mut &[u8]) -> Option<Relevance> {
    let (&b, rest) = at.split_first()?;
    *at = rest;
    Relevance::ALL.into_iter().find(|l| *l as u8 == b)
}

/// A memory as a record: each kept key of [`KEYS`] by its shape, in that
/// order, then whether the summary was derived and the content checksum.
pub(super) fn put_memory(m: &Memory, out: &mut Vec<u8>) {
    for key in KEYS.iter().filter(|k| k.kept) {
        match m.field(key.name) {
            Some(FieldRef::Text(t)) => put_opt(t, out),
            Some(FieldRef::Date(d)) => put_i64(d, out),
            Some(FieldRef::List(l)) => put_list(l, out),
            Some(FieldRef::Flag(f)) => out.push(u8::from(f)),
            Some(FieldRef::Level(l)) => out.push(l as u8),
            None => unreachable!("every kept key has a field (tested)"),
        }
    }
    out.push(u8::from(m.summary_derived));
    put_i64(m.content as i64, out);
}

/// A record read back; None when it is damaged.
pub(super) fn get_memory(path: RelPath, scope: Scope, at: &mut &[u8]) -> Option<Memory> {
    let mut m = Memory::blank(path, scope);
    for key in KEYS.iter().filter(|k| k.kept) {
        let value = match key.shape {
            Shape::Text => Field::Text(get_opt(at)?),
            Shape::Date => Field::Date(get_i64(at)?),
            Shape::List => Field::List(get_list(at)?),
            Shape::Flag => Field::Flag(get_bool(at)?),
            Shape::Level => Field::Level(get_level(at)?),
        };
        if !m.set_field(key.name, value) {
            return None;
        }
    }
    m.summary_derived = get_bool(at)?;
    m.content = get_i64(at)? as u64;
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kept_key_goes_into_a_record_and_comes_back() {
        let path = RelPath::parse("facts/a").unwrap();
        let mut m = Memory::blank(path.clone(), Scope::Project);
        for (i, key) in KEYS.iter().filter(|k| k.kept).enumerate() {
            let value = match key.shape {
                Shape::Text => Field::Text(Some(format!("text {i}"))),
                Shape::Date => Field::Date(1_000 + i as i64),
                Shape::List => Field::List(vec![format!("a{i}"), format!("b{i}")]),
                Shape::Flag => Field::Flag(true),
                Shape::Level => Field::Level(Relevance::High),
            };
            assert!(m.set_field(key.name, value.clone()), "{} is not set", key.name);
            assert!(m.field(key.name).is_some(), "{} has no field", key.name);
        }
        m.summary_derived = true;
        m.content = 42;
        let mut out = Vec::new();
        put_memory(&m, &mut out);
        let back = get_memory(path, Scope::Project, &mut &out[..]).unwrap();
        for key in KEYS.iter().filter(|k| k.kept) {
            assert_eq!(back.field(key.name), m.field(key.name), "{}", key.name);
        }
        assert!(back.summary_derived);
        assert_eq!(back.content, 42);
        assert!(KEYS.iter().filter(|k| !k.kept).all(|k| m.field(k.name).is_none()));
    }
}
