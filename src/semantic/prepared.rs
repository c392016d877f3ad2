//! The prepared form of a model folder, `mem-prepared.bin` beside its
//! files: what a start would otherwise compute again from 250 MB. It holds
//! the checksum of every model file (the model's identity hashes every
//! byte) and, for a Unigram tokenizer, its vocabulary as [`Pieces`] with
//! the rest of `tokenizer.json`. It is keyed by each file's [`Stamp`] and
//! sealed with the program's version: a changed file, another `mem`, or a
//! damaged byte, and the model is loaded from its files and prepared again.

use std::path::Path;

use super::pieces::Pieces;
use crate::base::codec::{get_bytes, put_bytes, read_varint, seal, unseal, varint};

/// The file's name in the model folder.
pub const NAME: &str = "mem-prepared.bin";
const MAGIC: &[u8; 8] = b"MEMPREP1";
/// The files a prepared form stands for, in this order.
pub const SOURCES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// What changes when a file is written: its size, its modification time,
/// and on Unix its change time (which no one can set back) and identity.
/// Two writes in place of the same size within one tick of the file
/// system's clock look alike; `mem` installs a model by renaming a new
/// folder in, and prepares it after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub len: u64,
    parts: [u64; 5],
}

impl Stamp {
    /// The stamp of `path`, following links (the folder is the user's).
    pub fn of(path: &Path) -> std::io::Result<Stamp> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let parts = {
            use std::os::unix::fs::MetadataExt;
            let n = |v: i64| v as u64;
            [
                n(meta.mtime()),
                n(meta.mtime_nsec()),
                n(meta.ctime()),
                n(meta.ctime_nsec()),
                meta.ino(),
            ]
        };
        #[cfg(not(unix))]
        let parts = {
            let since = meta.modified()?.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            [since.as_secs(), u64::from(since.subsec_nanos()), 0, 0, 0]
        };
        Ok(Stamp { len: meta.len(), parts })
    }
}

/// The stamps of a folder's [`SOURCES`].
pub fn stamps(dir: &Path) -> std::io::Result<[Stamp; 3]> {
    Ok([
        Stamp::of(&dir.join(SOURCES[0]))?,
        Stamp::of(&dir.join(SOURCES[1]))?,
        Stamp::of(&dir.join(SOURCES[2]))?,
    ])
}

/// A model folder, prepared.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub stamps: [Stamp; 3],
    /// The checksum of each of [`SOURCES`].
    pub sums: [u64; 3],
    /// `tokenizer.json` without its model, and its vocabulary; none when
    /// its model is not a Unigram one (the crate's tokenizer is built).
    pub tokenizer: Option<(String, Pieces)>,
}

impl Prepared {
    /// The folder's prepared form, if there is one for files with these
    /// `stamps`, written by this version of `mem`, undamaged.
    pub fn read(dir: &Path, stamps: &[Stamp; 3]) -> Option<Prepared> {
        let bytes = std::fs::read(dir.join(NAME)).ok()?;
        let prepared = Prepared::decode(unseal(MAGIC, &bytes)?)?;
        (prepared.stamps == *stamps).then_some(prepared)
    }

    /// Write it into `dir`, atomically.
    pub fn write(&self, dir: &Path) -> crate::base::error::Result<()> {
        crate::store::write::write_atomic(dir, &dir.join(NAME), &seal(MAGIC, &self.encode()))
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (stamp, sum) in self.stamps.iter().zip(self.sums) {
            for v in [stamp.len, sum].iter().chain(&stamp.parts) {
                varint(*v, &mut out);
            }
        }
        match &self.tokenizer {
            None => out.push(0),
            Some((rest, pieces)) => {
                out.push(1);
                put_bytes(rest.as_bytes(), &mut out);
                pieces.encode(&mut out);
            }
        }
        out
    }

    fn decode(mut at: &[u8]) -> Option<Prepared> {
        let mut stamps = [Stamp::default(); 3];
        let mut sums = [0; 3];
        for (stamp, sum) in stamps.iter_mut().zip(&mut sums) {
            stamp.len = read_varint(&mut at)?;
            *sum = read_varint(&mut at)?;
            for part in &mut stamp.parts {
                *part = read_varint(&mut at)?;
            }
        }
        let (&kind, mut at) = at.split_first()?;
        let tokenizer = match kind {
            0 => None,
            1 => {
                let rest = String::from_utf8(get_bytes(&mut at)?.to_vec()).ok()?;
                Some((rest, Pieces::decode(&mut at)?))
            }
            _ => return None,
        };
        at.is_empty().then_some(Prepared { stamps, sums, tokenizer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prepared_form_reads_back_only_for_its_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in SOURCES {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        let vocab = [("<unk>".to_string(), 0.0), ("▁部署".to_string(), -2.0)];
        let prepared = Prepared {
            stamps: stamps(dir.path()).unwrap(),
            sums: [1, 2, u64::MAX],
            tokenizer: Some((
                "{\"version\":\"1.0\"}".into(),
                Pieces::new(&vocab, Some(0), false).unwrap(),
            )),
        };
        prepared.write(dir.path()).unwrap();
        assert_eq!(Prepared::read(dir.path(), &prepared.stamps), Some(prepared.clone()));
        // A model file replaced by the same bytes is another file; so is
        // one written in place to another size.
        std::fs::write(dir.path().join("new"), "config.json").unwrap();
        std::fs::rename(dir.path().join("new"), dir.path().join("config.json")).unwrap();
        let replaced = stamps(dir.path()).unwrap();
        assert_ne!(replaced, prepared.stamps);
        assert_eq!(Prepared::read(dir.path(), &replaced), None);
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        assert_ne!(stamps(dir.path()).unwrap()[1], prepared.stamps[1]);
        // A flipped byte is damage.
        let file = dir.path().join(NAME);
        let mut bytes = std::fs::read(&file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&file, bytes).unwrap();
        assert_eq!(Prepared::read(dir.path(), &prepared.stamps), None);
    }
}
