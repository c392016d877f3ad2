//! Reading memory files: bounded, through the root's open folders, parsed
//! into memories, every failure a problem.

use std::path::Path;

use super::found::{FileEntry, Problem, Scan, skip};
use crate::base::parallel;
use crate::base::time::epoch_ms;
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::Scope;
use crate::store::files::MAX_FILE_BYTES;
use crate::store::files::{self, Links, Refusal};

/// Read and parse `files` on every core; memories keep the order of `files`.
pub fn load_files(scope: Scope, files: &[FileEntry]) -> Scan {
    load_files_counted(scope, files, &std::sync::atomic::AtomicUsize::new(0))
}

/// [`load_files`], advancing `done` as files are read (for a progress line).
pub fn load_files_counted(
    scope: Scope,
    files: &[FileEntry],
    done: &std::sync::atomic::AtomicUsize,
) -> Scan {
    let parts = parallel::chunks(files, 256, |part| {
        let mut scan = Scan::default();
        let mut folders = files::Folders::default();
        for f in part {
            read_memory(&mut folders, scope, f.rel.clone(), &f.path, &mut scan);
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        scan
    });
    let mut scan = Scan::default();
    for part in parts {
        scan.memories.extend(part.memories);
        scan.problems.extend(part.problems);
    }
    scan
}

fn read_memory(
    folders: &mut files::Folders,
    scope: Scope,
    rel: RelPath,
    path: &Path,
    scan: &mut Scan,
) {
    match load_in(folders, scope, rel, path) {
        Ok((memory, fields)) => {
            scan.problems.extend(fields.into_iter().map(|m| Problem::field(path.to_path_buf(), m)));
            scan.memories.push(memory);
        }
        Err(problem) => scan.problems.push(problem),
    }
}

/// Read and parse one memory file, `<root>/<category>/<slug>.md`: a regular
/// file, or a symlink to one inside the root, of at most [`MAX_FILE_BYTES`].
pub fn load(scope: Scope, rel: RelPath, path: &Path) -> Result<(Memory, Vec<String>), Problem> {
    load_in(&mut files::Folders::default(), scope, rel, path)
}

/// [`load`], keeping the last folder open in `folders` for the next file.
fn load_in(
    folders: &mut files::Folders,
    scope: Scope,
    rel: RelPath,
    path: &Path,
) -> Result<(Memory, Vec<String>), Problem> {
    let root = path.ancestors().nth(2).unwrap_or(path);
    let (file, size) =
        folders.open(root, path, Links::Inside).map_err(|why| Problem::refused(path, &why))?;
    let meta = file.metadata().map_err(|e| skip(path, &e.to_string()))?;
    let bytes = files::read_open(file, size, MAX_FILE_BYTES).map_err(|why| match why {
        Refusal::TooBig { .. } => {
            skip(path, &format!("file is {} bytes, over the 1 MiB limit", meta.len().max(size)))
        }
        why => Problem::refused(path, &why),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| skip(path, "file is not valid UTF-8; save it as UTF-8"))?;
    let doc = Document::parse(&text).map_err(|e| Problem {
        path: path.to_path_buf(),
        line: Some(e.line),
        message: e.message,
        skipped: true,
        target: None,
    })?;
    let mtime = meta.modified().map(epoch_ms).unwrap_or(0);
    let (mut memory, fields) = Memory::from_document(rel, scope, &doc, mtime);
    memory.content = crate::base::codec::checksum(text.as_bytes());
    Ok((memory, fields))
}
