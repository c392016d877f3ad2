//! What `mem model pull` does on this machine: the names it takes (a repo
//! id, a revision, both become paths in the cache), the digests it checks
//! files by, the snapshot's links to blobs, and the progress line.

use std::fs;
use std::io::Read;
use std::path::Path;

use sha1::Digest;

use crate::base::error::{Error, Result};

/// The model `mem model pull` takes when none is named.
pub const DEFAULT_REPO: &str = "intfloat/multilingual-e5-small";

/// The digest the Hub names `path` by, as `etag` says which: the sha256 of
/// the bytes (64 hex digits) or their git blob id (40).
pub fn verify(path: &Path, etag: &str) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut buf = vec![0u8; 1 << 20];
    let mut feed = |update: &mut dyn FnMut(&[u8])| -> std::io::Result<()> {
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            update(&buf[..n]);
        }
    };
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    if etag.len() == 64 {
        let mut h = sha2::Sha256::new();
        feed(&mut |b| h.update(b))?;
        Ok(hex(&h.finalize()))
    } else {
        let mut h = sha1::Sha1::new();
        h.update(format!("blob {len}\0").as_bytes());
        feed(&mut |b| h.update(b))?;
        Ok(hex(&h.finalize()))
    }
}

/// `snapshots/<commit>/<name>` → `../../blobs/<etag>`, as the Hub's
/// clients link a snapshot's file to its blob.
pub(super) fn link(pointer: &Path, etag: &str) -> std::io::Result<()> {
    if pointer.exists() {
        return Ok(());
    }
    let _ = fs::remove_file(pointer);
    if let Some(parent) = pointer.parent() {
        fs::create_dir_all(parent)?;
    }
    let target = Path::new("..").join("..").join("blobs").join(etag);
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, pointer);
    #[cfg(not(unix))]
    return fs::copy(pointer.parent().unwrap_or(Path::new(".")).join(target), pointer).map(|_| ());
}

/// A repo id as the Hub takes it: `name` or `owner/name`, of letters,
/// digits, `-`, `_` and `.`, without `--` or `..`.
pub fn check_repo(repo: &str) -> Result<()> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            && !p.starts_with(['-', '.'])
            && !p.ends_with(['-', '.'])
    };
    let parts: Vec<&str> = repo.split('/').collect();
    let ok = repo.len() <= 96
        && parts.len() <= 2
        && parts.iter().all(|p| part_ok(p))
        && !repo.contains("--")
        && !repo.contains("..");
    if ok {
        return Ok(());
    }
    Err(Error::input(format!("{repo:?} is not a Hugging Face repo id"))
        .hint(format!("name it as owner/name, e.g. {DEFAULT_REPO}")))
}

/// A revision: a branch, tag or commit, without `..` or an empty part
/// (it becomes a path in the cache).
pub fn check_revision(revision: &str) -> Result<()> {
    let ok = !revision.is_empty()
        && revision.len() <= 255
        && revision.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        && revision.split('/').all(|p| !p.is_empty() && p != "." && p != "..");
    if ok {
        return Ok(());
    }
    Err(Error::input(format!("--revision {revision:?} is not a branch, tag or commit name"))
        .hint("name a branch (main), a tag or a commit id"))
}

/// A progress line on stderr: the file, a bar, MiB done of all.
pub(super) struct Bar {
    show: bool,
    name: String,
    total: u64,
    done: u64,
    drawn: Option<std::time::Instant>,
}

impl Bar {
    pub(super) fn new(show: bool) -> Bar {
        Bar { show, name: String::new(), total: 0, done: 0, drawn: None }
    }

    fn draw(&mut self) {
        use std::io::Write;
        let width = 30u64;
        let filled = (self.done.min(self.total) * width / self.total.max(1)) as usize;
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        eprint!(
            "\r{} [{}{}] {:.1}/{:.1} MiB",
            self.name,
            "#".repeat(filled),
            " ".repeat(width as usize - filled),
            mib(self.done),
            mib(self.total)
        );
        let _ = std::io::stderr().flush();
        self.drawn = Some(std::time::Instant::now());
    }
}

impl hf_hub::api::Progress for Bar {
    fn init(&mut self, size: usize, filename: &str) {
        self.name = crate::base::text::terminal_safe(filename, false).into_owned();
        self.total = size as u64;
        self.done = 0;
    }

    fn update(&mut self, size: usize) {
        self.done += size as u64;
        let due = self.drawn.is_none_or(|t| t.elapsed().as_millis() >= 100);
        if self.show && due {
            self.draw();
        }
    }

    fn finish(&mut self) {
        self.clear();
    }
}

impl Bar {
    fn clear(&mut self) {
        if self.show && self.drawn.take().is_some() {
            eprint!("\r\x1b[2K");
        }
    }
}

/// A download that failed leaves no half-drawn line above its error.
impl Drop for Bar {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_hubs_sha256_and_git_blob_id() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hello");
        fs::write(&file, "hello\n").unwrap();
        // `git hash-object` and `sha256sum` of the same bytes.
        assert_eq!(
            verify(&file, &"0".repeat(40)).unwrap(),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(
            verify(&file, &"0".repeat(64)).unwrap(),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
    }

    #[test]
    fn repo_ids_and_revisions_that_would_leave_the_cache_are_refused() {
        for ok in ["intfloat/multilingual-e5-small", "gpt2", "BAAI/bge-small-en-v1.5"] {
            assert!(check_repo(ok).is_ok(), "{ok}");
        }
        for bad in ["", "../x", "a/b/c", "a//b", "a--b/c", "/a", "a/", "a b", ".a/b", "a/b."] {
            assert!(check_repo(bad).is_err(), "{bad}");
        }
        for ok in ["main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567"] {
            assert!(check_revision(ok).is_ok(), "{ok}");
        }
        for bad in ["", "..", "a/../b", "/main", "main/", "a b", "a\\b"] {
            assert!(check_revision(bad).is_err(), "{bad}");
        }
    }
}
