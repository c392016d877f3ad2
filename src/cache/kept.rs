//! What a long-lived process (a watching `mem mcp`, see [`super::watch`])
//! keeps of the cache files between calls: each file as opened and checked,
//! by its identity (a file replaced or written has another, see
//! [`Identity`]) and the entries a kept listing matched in it; and the
//! memories of the last library read whole ([`MEMORIES`]); the library
//! itself is kept by `library`, under the same [`LibraryKey`]. A fresh
//! process keeps nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::model::memory::Memory;
use crate::store::identity::Identity;
use crate::store::scan::FileEntry;

/// A kept listing's id, which entries it found live, and the files to read.
pub(super) type Matched = Option<(u64, (Vec<bool>, Vec<FileEntry>))>;

/// Files as opened and checked, by path and identity: a file replaced or
/// changed has another identity, so a kept one is exactly the file there now.
pub(super) struct Files<T>(Mutex<Option<HashMap<PathBuf, (Identity, T)>>>);

impl<T: Clone> Files<T> {
    pub(super) const fn new() -> Self {
        Files(Mutex::new(None))
    }

    /// The file at `path` as kept, if it is still that file.
    pub(super) fn get(&self, path: &Path, identity: Identity) -> Option<T> {
        let files = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (kept, value) = files.as_ref()?.get(path)?;
        (*kept == identity).then(|| value.clone())
    }

    pub(super) fn keep(&self, path: &Path, identity: Identity, value: &T) {
        let mut files = self.0.lock().unwrap_or_else(|p| p.into_inner());
        files.get_or_insert_default().insert(path.to_path_buf(), (identity, value.clone()));
    }
}

/// What a library of roots was built from, in a watching process: per
/// root, its kept listing and the identity of each cache file. The same
/// key means the same documents in the same order.
pub(super) type LibraryKey = Vec<(u64, Option<Identity>, Option<Identity>)>;

/// The memories of the last library read whole, by its key.
pub(super) static MEMORIES: Mutex<Option<(LibraryKey, Arc<Vec<Memory>>)>> = Mutex::new(None);

/// The value kept in `slot` for `key`, else `make`'s, kept there.
pub(super) fn once<K: PartialEq, V: Clone>(
    slot: &Mutex<Option<(K, V)>>,
    key: K,
    make: impl FnOnce() -> Option<V>,
) -> Option<V> {
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((of, value)) = slot.as_ref()
        && *of == key
    {
        return Some(value.clone());
    }
    let value = make()?;
    *slot = Some((key, value.clone()));
    Some(value)
}
