//! Listing a root from file-system events, for a long-lived process.
//!
//! A fresh `mem` lists a root by `stat`ing every memory file (at a hundred
//! thousand files that is most of a recall). `mem mcp` answers many calls
//! in one process, so once [`enable`]d it watches each root it lists
//! (`notify`: inotify, FSEvents, ReadDirectoryChangesW) and keeps the last
//! listing while no event has touched the root since that listing began.
//! Any event under the root counts, except in hidden entries (`.cache/`,
//! `.state.json`, which `mem` itself writes and which are never memories):
//! an editor's write in place or by rename, a removal, a folder renamed, a
//! branch checked out. An event the watcher reports as lost (the kernel's
//! queue overflowed: said in one line on stderr), an error, or an event on
//! the root folder itself
//! (removed, renamed, replaced) drops what was kept, and the next call
//! lists the root by `stat` again, as a fresh process does. So does a root
//! path that names another folder than the one watched (a root that is a
//! link pointed elsewhere, a parent folder renamed and made again), which
//! makes no event in the folder watched: each call `stat`s the root folder
//! itself. A root that
//! cannot be watched (inotify's watch limit reached) is listed by `stat` on
//! every call, after one warning.
//!
//! What is kept is the listing, and each cache file as opened and checked
//! (by its identity: a file replaced or written has another): the index is
//! then matched against the listing exactly as for a fresh one, so an
//! answer equals a fresh process's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

use crate::model::roots::Root;
use crate::store::scan::{Listing, Problem};

static ENABLED: AtomicBool = AtomicBool::new(false);
static WARNED: AtomicBool = AtomicBool::new(false);

/// Watch the roots this process lists from now on. `MEM_WATCH=off` keeps
/// listing by `stat` (the fallback, on purpose).
pub fn enable() {
    let off = std::env::var_os("MEM_WATCH").is_some_and(|v| v == "off");
    ENABLED.store(!off, Ordering::SeqCst);
}

/// True once [`enable`]d: this process lives long.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// What a root's events have said since its watch began: a counter that
/// any relevant event moves, and whether the watch itself was lost.
#[derive(Default)]
struct Signals {
    changes: AtomicU64,
    lost: AtomicBool,
}

struct Watched {
    /// Held only to keep the watch alive; dropping it ends the watch.
    _watcher: RecommendedWatcher,
    /// This watch, among every watch begun in the process.
    id: u64,
    /// The folder watched, as the root path named it when the watch began.
    folder: Option<Folder>,
    signals: Arc<Signals>,
    kept: Option<Kept>,
}

struct Kept {
    /// This listing, among every listing kept in the process.
    id: u64,
    changes: u64,
    listings: Vec<Listing>,
    problems: Vec<Problem>,
}

fn roots() -> &'static Mutex<HashMap<PathBuf, Watched>> {
    static ROOTS: OnceLock<Mutex<HashMap<PathBuf, Watched>>> = OnceLock::new();
    ROOTS.get_or_init(Default::default)
}

/// Where a listing stands: kept and still true, or to be made by `stat`,
/// then handed to [`Ticket::keep`].
pub(super) enum Looked {
    /// The listing, its problems, and its id ([`Ticket::keep`]).
    Kept(Vec<Listing>, Vec<Problem>, u64),
    List(Option<Ticket>),
}

/// A listing about to be made of a watched root: the event count before
/// it began, so an event during the listing is never lost.
pub(super) struct Ticket {
    dir: PathBuf,
    changes: u64,
}

/// The kept listing of `root` when no event has touched it since, else a
/// ticket to keep the listing the caller makes now (None: not watched).
pub(super) fn look(root: &Root) -> Looked {
    if !ENABLED.load(Ordering::SeqCst) {
        return Looked::List(None);
    }
    let mut roots = roots().lock().unwrap_or_else(|p| p.into_inner());
    let Some(watched) = watching(&mut roots, &root.dir) else { return Looked::List(None) };
    let changes = watched.signals.changes.load(Ordering::SeqCst);
    match &watched.kept {
        Some(kept) if kept.changes == changes => {
            Looked::Kept(kept.listings.clone(), kept.problems.clone(), kept.id)
        }
        _ => Looked::List(Some(Ticket { dir: root.dir.clone(), changes })),
    }
}

/// Where `root`'s events stand, for a process that asks from time to time
/// whether anything a listing could see changed: a value that differs
/// after any such change (an edit in place included), without reading or
/// `stat`ing the files. None when the root is not watched (not enabled,
/// missing, or beyond the watch limit): the caller looks at the files.
pub fn events(root: &Root) -> Option<(u64, u64)> {
    if !ENABLED.load(Ordering::SeqCst) {
        return None;
    }
    let mut roots = roots().lock().unwrap_or_else(|p| p.into_inner());
    let watched = watching(&mut roots, &root.dir)?;
    Some((watched.id, watched.signals.changes.load(Ordering::SeqCst)))
}

/// The live watch of `dir`, begun again when the last one was lost or the
/// path now names another folder; None when it cannot be watched.
fn watching<'a>(roots: &'a mut HashMap<PathBuf, Watched>, dir: &Path) -> Option<&'a mut Watched> {
    let folder = folder(dir);
    if roots.get(dir).is_some_and(|w| {
        w.signals.lost.load(Ordering::SeqCst) || folder.is_none() || w.folder != folder
    }) {
        roots.remove(dir);
    }
    if !roots.contains_key(dir) {
        roots.insert(dir.to_path_buf(), start(dir, folder)?);
    }
    roots.get_mut(dir)
}

/// The id of `root`'s kept listing while no event has touched it since
/// (None when not watched, or changed).
pub(super) fn kept_id(root: &Root) -> Option<u64> {
    let roots = roots().lock().unwrap_or_else(|p| p.into_inner());
    let watched = roots.get(&root.dir)?;
    let kept = watched.kept.as_ref()?;
    (kept.changes == watched.signals.changes.load(Ordering::SeqCst)).then_some(kept.id)
}

impl Ticket {
    /// Keep `listings` for the next call, unless an event came in since
    /// the ticket was taken (then the next call lists again). The kept
    /// listing's id, unique in the process: what was worked out from it
    /// (which cached entries it matches) holds while the id comes back.
    pub(super) fn keep(self, listings: &[Listing], problems: &[Problem]) -> Option<u64> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let mut roots = roots().lock().unwrap_or_else(|p| p.into_inner());
        let watched = roots.get_mut(&self.dir)?;
        if watched.signals.changes.load(Ordering::SeqCst) != self.changes {
            return None;
        }
        let (listings, problems) = (listings.to_vec(), problems.to_vec());
        let id = NEXT.fetch_add(1, Ordering::SeqCst);
        watched.kept = Some(Kept { id, changes: self.changes, listings, problems });
        Some(id)
    }
}

/// Which folder a path names now, links followed.
#[cfg(unix)]
type Folder = (u64, u64);
#[cfg(not(unix))]
type Folder = PathBuf;

#[cfg(unix)]
fn folder(dir: &Path) -> Option<Folder> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn folder(dir: &Path) -> Option<Folder> {
    std::fs::canonicalize(dir).ok().filter(|p| p.is_dir())
}

/// Start watching `dir`, which named `folder` before the watch began (so
/// that a folder put there since is not taken for the one watched). None
/// when it does not exist yet (tried again on the next call) or cannot be
/// watched (one warning per process).
fn start(dir: &Path, folder: Option<Folder>) -> Option<Watched> {
    folder.as_ref()?;
    let signals = Arc::new(Signals::default());
    let heard = Arc::clone(&signals);
    let top = dir.to_path_buf();
    let watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        if event.as_ref().is_ok_and(Event::need_rescan) {
            // One line each time: what changed meanwhile is unknown.
            eprintln!(
                "mem: warning: file events under {} were lost (the event queue overflowed); listing it again",
                top.display()
            );
        }
        match event {
            Ok(event) => match relevance(&top, &event) {
                Relevance::None => return,
                Relevance::Change => {}
                Relevance::Lost => heard.lost.store(true, Ordering::SeqCst),
            },
            Err(_) => heard.lost.store(true, Ordering::SeqCst),
        }
        heard.changes.fetch_add(1, Ordering::SeqCst);
    });
    let watching = watcher.and_then(|mut w| w.watch(dir, RecursiveMode::Recursive).map(|()| w));
    match watching {
        Ok(watcher) => {
            static NEXT: AtomicU64 = AtomicU64::new(1);
            let id = NEXT.fetch_add(1, Ordering::SeqCst);
            Some(Watched { _watcher: watcher, id, folder, signals, kept: None })
        }
        Err(e) => {
            if !WARNED.swap(true, Ordering::SeqCst) {
                eprintln!(
                    "mem: warning: cannot watch {} for changes ({e}); listing it by stat on every call",
                    dir.display()
                );
            }
            None
        }
    }
}

/// What an event means for a root's listing.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Relevance {
    /// Only hidden entries (`mem`'s own cache and state) changed.
    None,
    /// Something a listing could see changed.
    Change,
    /// Events were lost, or the root folder itself changed: watch again.
    Lost,
}

pub(super) fn relevance(top: &Path, event: &Event) -> Relevance {
    if event.need_rescan() || event.paths.is_empty() {
        return Relevance::Lost;
    }
    if event.paths.iter().any(|p| p == top) {
        return match event.kind {
            notify::EventKind::Access(_) => Relevance::None,
            _ => Relevance::Lost,
        };
    }
    let hidden = |p: &PathBuf| {
        p.strip_prefix(top)
            .ok()
            .and_then(|rel| rel.components().next())
            .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('.'))
    };
    if event.paths.iter().all(hidden) || matches!(event.kind, notify::EventKind::Access(_)) {
        Relevance::None
    } else {
        Relevance::Change
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{AccessKind, CreateKind, Flag, ModifyKind, RemoveKind};
    use notify::{Event, EventKind};

    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> Event {
        let mut e = Event::new(kind);
        for p in paths {
            e = e.add_path(PathBuf::from(p));
        }
        e
    }

    #[test]
    fn mem_s_own_files_are_quiet_and_memories_are_changes() {
        let top = Path::new("/p/.memory");
        let write = EventKind::Modify(ModifyKind::Any);
        let quiet = [&["/p/.memory/.cache/index.bin"][..], &["/p/.memory/.state.json"]];
        for paths in quiet {
            assert_eq!(relevance(top, &event(write, paths)), Relevance::None, "{paths:?}");
        }
        let loud = [
            &["/p/.memory/facts/a.md"][..],
            &["/p/.memory/facts"],
            &["/p/.memory/ROOT.md"],
            &["/p/.memory/.cache/x", "/p/.memory/facts/b.md"],
            &["/p/.memory/stray.md"],
        ];
        for paths in loud {
            assert_eq!(relevance(top, &event(write, paths)), Relevance::Change, "{paths:?}");
        }
        let read = EventKind::Access(AccessKind::Any);
        assert_eq!(relevance(top, &event(read, &["/p/.memory/facts/a.md"])), Relevance::None);
        let made = EventKind::Create(CreateKind::Folder);
        assert_eq!(relevance(top, &event(made, &["/p/.memory/decisions"])), Relevance::Change);
    }

    #[test]
    fn a_lost_queue_or_a_changed_root_folder_means_listing_again() {
        let top = Path::new("/p/.memory");
        let overflow = Event::new(EventKind::Other).set_flag(Flag::Rescan);
        assert_eq!(relevance(top, &overflow), Relevance::Lost);
        let gone = EventKind::Remove(RemoveKind::Folder);
        assert_eq!(relevance(top, &event(gone, &["/p/.memory"])), Relevance::Lost);
        let unknown = Event::new(EventKind::Any);
        assert_eq!(relevance(top, &unknown), Relevance::Lost);
    }
}
