//! The memory vectors of one root, in `<root>/.cache/vectors.bin`: derived
//! data, keyed by each memory file's content checksum and made by one
//! model. A file of another model, another recipe, or damaged, is empty.
//!
//! Layout: `MEMVEC01`, a checksum of the rest, then the recipe, the model
//! id, the dimensions, the count, every key, then every vector (f32, LE).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::codec::checksum;
use crate::base::error::Result;
use crate::store::files;
use crate::store::identity::{Parsed, Unread};

const MAGIC: &[u8; 8] = b"MEMVEC01";
/// What a memory contributes to its vector (see [`super::passage`]);
/// changing it makes every stored vector stale.
pub const RECIPE: u32 = 1;
const LIMIT: u64 = 4 << 30;

/// The file under `root`.
pub fn file(root: &Path) -> PathBuf {
    root.join(".cache").join("vectors.bin")
}

/// The vectors files last read in this process.
static PARSED: Parsed<Vectors> = Parsed::new();

/// One root's vectors.
#[derive(Debug, Default, Clone)]
pub struct Vectors {
    pub model: String,
    pub dims: usize,
    pub by_key: HashMap<u64, Vec<f32>>,
}

impl Vectors {
    /// The vectors stored under `root` for `model`; empty when there are
    /// none, they are another model's, or the file is damaged (a warning
    /// says so for the last). Read once while the file stays the same (a
    /// running `mem mcp` keeps them between calls).
    pub fn load(root: &Path, model: &str) -> (Arc<Vectors>, Option<String>) {
        let empty = || Arc::new(Vectors { model: model.to_string(), ..Vectors::default() });
        let path = file(root);
        match PARSED.read((root, &path), LIMIT, |bytes| decode(bytes).ok_or(())) {
            Ok(v) if v.model == model => (v, None),
            Ok(_) | Err(Unread::Refused(files::Refusal::Missing)) => (empty(), None),
            Err(Unread::Refused(why)) => {
                (empty(), Some(format!("{}: {why}; vectors made again", path.display())))
            }
            Err(Unread::Unparsed(())) => {
                (empty(), Some(format!("{} is damaged; vectors made again", path.display())))
            }
        }
    }

    /// Write them under `root`, atomically.
    pub fn save(&self, root: &Path) -> Result<()> {
        crate::store::write::write_atomic(root, &file(root), &self.encode())
    }

    /// [`save`](Self::save), and keep them as what the file holds: the next
    /// [`load`](Self::load) does not read back what was just written. A
    /// vector depends only on the model and the memory's content, so a file
    /// another process wrote meanwhile holds the same vector for each key.
    pub fn save_kept(vectors: &Arc<Vectors>, root: &Path) -> Result<()> {
        vectors.save(root)?;
        PARSED.wrote((root, &file(root)), Arc::clone(vectors));
        Ok(())
    }

    fn encode(&self) -> Vec<u8> {
        let mut keys: Vec<&u64> = self.by_key.keys().collect();
        keys.sort();
        let mut body = Vec::with_capacity(32 + keys.len() * (8 + self.dims * 4));
        body.extend_from_slice(&RECIPE.to_le_bytes());
        body.extend_from_slice(&(self.model.len() as u32).to_le_bytes());
        body.extend_from_slice(self.model.as_bytes());
        body.extend_from_slice(&(self.dims as u32).to_le_bytes());
        body.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        for k in &keys {
            body.extend_from_slice(&k.to_le_bytes());
        }
        for k in &keys {
            for x in &self.by_key[*k] {
                body.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&checksum(&body).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }
}

fn take_u32(at: &mut &[u8]) -> Option<u32> {
    let (b, rest) = at.split_first_chunk::<4>()?;
    *at = rest;
    Some(u32::from_le_bytes(*b))
}

fn decode(bytes: &[u8]) -> Option<Vectors> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (sum, mut at) = rest.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*sum) != checksum(at) || take_u32(&mut at)? != RECIPE {
        return None;
    }
    let len = take_u32(&mut at)? as usize;
    let model = String::from_utf8(at.get(..len)?.to_vec()).ok()?;
    at = &at[len..];
    let (dims, n) = (take_u32(&mut at)? as usize, take_u32(&mut at)? as usize);
    if dims == 0 || at.len() != n.checked_mul(8 + dims.checked_mul(4)?)? {
        return None;
    }
    let (keys, vectors) = at.split_at(n * 8);
    let mut by_key = HashMap::with_capacity(n);
    for (k, v) in keys.chunks_exact(8).zip(vectors.chunks_exact(dims * 4)) {
        let key = u64::from_le_bytes(k.try_into().ok()?);
        let vector: Vec<f32> =
            v.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        // Only unit vectors: one stretched by hand would outrank everything.
        let norm: f32 = vector.iter().map(|x| x * x).sum();
        if !vector.iter().all(|x| x.is_finite()) || (norm - 1.0).abs() > 1e-3 {
            return None;
        }
        by_key.insert(key, vector);
    }
    Some(Vectors { model, dims, by_key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_as_written_and_damage_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut v = Vectors { model: "m1".into(), dims: 3, ..Vectors::default() };
        v.by_key.insert(7, vec![0.6, -0.8, 0.0]);
        v.by_key.insert(1, vec![1.0, 0.0, 0.0]);
        v.save(root).unwrap();
        let (back, warning) = Vectors::load(root, "m1");
        assert_eq!((back.dims, back.by_key.len(), warning), (3, 2, None));
        assert_eq!(back.by_key[&7], [0.6, -0.8, 0.0]);
        assert!(Arc::ptr_eq(&back, &Vectors::load(root, "m1").0), "the same file: read once");
        let saved = Arc::new(v.clone());
        Vectors::save_kept(&saved, root).unwrap();
        assert!(Arc::ptr_eq(&saved, &Vectors::load(root, "m1").0), "what was written: kept");
        // Another model's vectors are not this model's.
        assert!(Vectors::load(root, "m2").0.by_key.is_empty());
        // A vector stretched by hand, checksum and all, is refused.
        v.by_key.insert(9, vec![100.0, 0.0, 0.0]);
        v.save(root).unwrap();
        assert!(Vectors::load(root, "m1").1.unwrap().contains("damaged"));
        v.by_key.remove(&9);
        v.save(root).unwrap();
        // A flipped byte is damage.
        let mut bytes = std::fs::read(file(root)).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(file(root), bytes).unwrap();
        let (back, warning) = Vectors::load(root, "m1");
        assert!(back.by_key.is_empty() && warning.unwrap().contains("damaged"));
    }
}
