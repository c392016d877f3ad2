//! Keeping a cache true to the files: which entries still hold, the delta
//! of files changed since the build, the racy check, confirming and
//! rebuilding.

use super::cached::{Cached, delta_path, path, read};
use super::docs::Indexed;
use super::format::{HEADER, PROBLEMS, RACY_NS, encode, set_word, word};
use super::names::name_order;
use super::{kept, packed, snapshot};
use crate::base::codec::{checksum, u64_at};
use crate::base::progress::Progress;
use crate::base::time::now_ns;
use crate::model::memory::Memory;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::rank::tokenize::Tokenizer;
use crate::store::scan::{FileEntry, Listing, Problem, entries, load_files, load_files_counted};
use crate::store::write::write_atomic;

impl Cached {
    /// The document holding `f` with its current size and stamp, if any.
    pub(super) fn held(&self, f: &FileEntry) -> Option<usize> {
        self.find(&f.rel.category, &f.rel.slug)
            .filter(|&d| self.size(d) == f.size && self.mtime(d) == f.stamp())
    }

    /// [`held`](Self::held), when `f` was also last changed clearly before
    /// this cache was built (see [`match_listings`](Self::match_listings)).
    pub(super) fn current(&self, f: &FileEntry) -> Option<usize> {
        self.held(f).filter(|_| f.changed_ns().saturating_add(RACY_NS) < self.names.built_at)
    }

    /// Which cached documents are still current, and which files must be
    /// read. Both sides are in walk order: merge them.
    ///
    /// An entry is trusted only if its file was last changed clearly before
    /// the listing the cache was built from: a file written in the same
    /// clock tick as that listing could have changed unseen (git's "racy"
    /// case), so it is read again.
    pub(super) fn match_listings(&self, listings: &[Listing]) -> (Vec<bool>, Vec<FileEntry>) {
        // Two halves, split between categories, matched side by side.
        let total: usize = listings.iter().map(|l| l.files.len()).sum();
        let mut half = 0;
        let mut files = 0;
        while half < listings.len() && 2 * files < total {
            files += listings[half].files.len();
            half += 1;
        }
        let (first, second) = listings.split_at(half);
        let cut = second.first().map_or(self.len(), |l| {
            let c = self.names.categories.partition_point(|c| c.0 < l.category);
            self.names.categories.get(c).map_or(self.len(), |c| c.1)
        });
        let cut = cut.min(self.len());
        let halves = [(first, 0..cut), (second, cut..self.len())];
        let matched = crate::base::parallel::run(2, |k| self.match_part(halves[k].0, &halves[k].1));
        let (mut live, mut changed) = (Vec::with_capacity(self.len()), Vec::new());
        for (l, c) in matched {
            live.extend(l);
            changed.extend(c);
        }
        (live, changed)
    }

    /// [`match_listings`](Self::match_listings), worked out once per kept
    /// listing (`kept`, see [`super::watch`]) of this very cache file.
    pub(super) fn match_kept(
        &self,
        listings: &[Listing],
        kept: Option<u64>,
    ) -> (Vec<bool>, Vec<FileEntry>) {
        let Some(id) = kept else { return self.match_listings(listings) };
        kept::once(&self.matched, id, || Some(self.match_listings(listings)))
            .unwrap_or_else(|| self.match_listings(listings))
    }

    /// [`match_listings`](Self::match_listings) for `listings`, whose
    /// cached documents are `docs`: which of those are live, and the files
    /// to read.
    pub(super) fn match_part(
        &self,
        listings: &[Listing],
        docs: &std::ops::Range<usize>,
    ) -> (Vec<bool>, Vec<FileEntry>) {
        let mut live = vec![false; docs.len()];
        let mut changed = Vec::new();
        for listing in listings {
            let run = self.run(&listing.category);
            let mut d = run.start;
            for (i, f) in listing.files.iter().enumerate() {
                let slug = listing.slug_bytes(i);
                // Most files are where the cache has them: test that first.
                if d >= run.end || self.names.slug_bytes(d) != slug {
                    while d < run.end && name_order(self.names.slug_bytes(d), slug).is_lt() {
                        d += 1;
                    }
                }
                let current = d < run.end
                    && self.size(d) == f.size
                    && self.mtime(d) == f.stamp()
                    && f.changed_ns().saturating_add(RACY_NS) < self.names.built_at
                    && self.names.slug_bytes(d) == slug;
                match live.get_mut(d.wrapping_sub(docs.start)) {
                    Some(slot) if current => {
                        *slot = true;
                        d += 1;
                    }
                    _ => changed.push(listing.entry(i)),
                }
            }
        }
        (live, changed)
    }
}

/// Index a root, using and refreshing its cache.
///
/// The base cache holds the tree as it was when last built; the delta
/// (`delta.bin`, same format) holds the files changed since, so a change is
/// read and indexed once, not on every run. A file the base holds with its
/// current size and stamp is taken from the base, else one the delta holds
/// so, else it is read. A file written within [`RACY_NS`] of the build that
/// holds it is read again and its content compared: the same content keeps
/// its entry, and once every such file is old enough the cache is marked as
/// built now, so the next run trusts them without reading.
pub fn index_root(root: &Root, tokenizer: &Tokenizer) -> Indexed {
    index_at(root, tokenizer, now_ns())
}

/// [`index_root`] with the tree listed at `listed_at` (nanoseconds).
pub(super) fn index_at(root: &Root, tokenizer: &Tokenizer, listed_at: u64) -> Indexed {
    // Listing the files and reading the cache do not depend on each other:
    // the cache is read on one of the listing threads.
    let cache = std::sync::OnceLock::new();
    let (listings, mut problems, kept) = snapshot::list_kept(root, true, &|| {
        let _ = cache.set(read(root, &path(root)));
    });
    let cache = cache.into_inner().flatten();
    let Some((base, (mut stats, mut tables))) = cache else {
        return rebuild(root, &listings, problems, tokenizer, listed_at);
    };
    let (mut live, changed) = base.match_kept(&listings, kept);
    let delta = if changed.is_empty() { None } else { read(root, &delta_path(root)) };
    let mut delta_live = vec![false; delta.as_ref().map_or(0, |(d, _)| d.len())];
    let Sorted { checks, moved, base_stale } =
        sort_changed(&changed, &base, delta.as_ref().map(|(d, _)| d), &mut delta_live);
    // Past a few percent of changed files, a fresh cache pays for itself.
    let in_delta = checks.iter().filter(|c| c.0 == 1).count();
    let held_apart = moved.len() + in_delta + delta_live.iter().filter(|l| **l).count();
    if held_apart > 64.max(base.len() / 20) {
        return rebuild(root, &listings, problems, tokenizer, listed_at);
    }
    let parts: Vec<&Cached> =
        std::iter::once(&base).chain(delta.as_ref().map(|(d, _)| d)).collect();
    let checked = verify(&parts, root.scope, &checks, listed_at);
    for &(part, doc, _) in checks.iter().filter(|c| checked.same.contains(&(c.0, c.1))) {
        if part == 0 { live[doc] = true } else { delta_live[doc] = true }
    }
    let read_now = load_files(root.scope, &moved);
    // Files that do not parse are read and reported on every run; only a
    // file that reads as a memory the cache lacks is folded into a delta.
    let changed_now = !read_now.memories.is_empty() || checked.differ.iter().any(|d| d.2);
    for (k, part) in parts.iter().enumerate() {
        // The delta is about to be replaced: no point sealing it.
        if checked.settled(k) && !(changed_now && k == 1) && !(k == 0 && base_stale) {
            confirm(root, part, listed_at);
        }
    }
    if changed_now {
        // Fold every file the base does not hold into a new delta: read
        // again, indexed once, written for the next runs.
        let apart: Vec<FileEntry> =
            changed.into_iter().filter(|f| !base.held(f).is_some_and(|d| live[d])).collect();
        let fresh = load_files(root.scope, &apart);
        let counted = std::sync::atomic::AtomicUsize::new(0);
        let segments = packed::segments(&fresh.memories, tokenizer, &counted);
        let bytes = encode(root, &apart, &fresh.memories, &fresh.problems, &segments, listed_at);
        let _ = write_atomic(&root.dir, &delta_path(root), &bytes);
        problems.extend(fresh.problems);
        for doc in (0..base.len()).filter(|&d| live[d] && base.flags(d) & PROBLEMS != 0) {
            match field_problems(root, &base, doc) {
                Some(found) => problems.extend(found),
                None => return rebuild(root, &listings, problems, tokenizer, listed_at),
            }
        }
        let (docs, overlay) = packed::split(segments);
        let first = stats.len() as u32;
        tables.extend(overlay.into_iter().map(|(f, t)| (f + first, t)));
        stats.push(docs);
        live.extend(std::iter::repeat_n(true, fresh.memories.len()));
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        return Indexed {
            scope: root.scope,
            parts: vec![base],
            fresh: fresh.memories,
            live,
            stats,
            tables,
            problems,
        };
    }
    // Nothing new; files that failed to parse are reported.
    problems.extend(checked.problems);
    problems.extend(read_now.problems);
    let mut parts = vec![base];
    if let Some((delta, (delta_stats, delta_tables))) = delta {
        let first = stats.len() as u32;
        tables.extend(delta_tables.into_iter().map(|(f, t)| (f + first, t)));
        stats.append(delta_stats);
        live.extend(delta_live);
        parts.push(delta);
    }
    let mut first = 0;
    for part in &parts {
        for doc in (0..part.len()).filter(|&d| live[first + d] && part.flags(d) & PROBLEMS != 0) {
            match field_problems(root, part, doc) {
                Some(found) => problems.extend(found),
                // A damaged record: the whole cache goes.
                None => return rebuild(root, &listings, problems, tokenizer, listed_at),
            }
        }
        first += part.len();
    }
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Indexed { scope: root.scope, parts, fresh: Vec::new(), live, stats, tables, problems }
}

/// The changed files of a run, by what the caches hold of them.
struct Sorted {
    /// Files to read and compare with a cached entry (part 0 is the base,
    /// part 1 the delta), with that entry's document.
    checks: Vec<(usize, usize, FileEntry)>,
    /// Files neither cache holds: to read and index.
    moved: Vec<FileEntry>,
    /// A file the delta holds may also match a stale base entry (a
    /// same-size rewrite within one tick of a coarse clock keeps the
    /// stamp): the base is then not marked as built later, or that entry
    /// would count as current and win over the delta.
    base_stale: bool,
}

/// Sort `changed`; a file the delta holds as current is marked live in
/// `delta_live` at once.
fn sort_changed(
    changed: &[FileEntry],
    base: &Cached,
    delta: Option<&Cached>,
    delta_live: &mut [bool],
) -> Sorted {
    let mut sorted = Sorted { checks: Vec::new(), moved: Vec::new(), base_stale: false };
    for f in changed {
        let in_delta = delta.and_then(|d| Some((d.held(f)?, d.current(f))));
        let in_base = base.held(f);
        sorted.base_stale |= in_delta.is_some() && in_base.is_some();
        match (in_delta, in_base) {
            (Some((doc, Some(_))), _) => delta_live[doc] = true,
            (Some((doc, None)), _) => sorted.checks.push((1, doc, f.clone())),
            (None, Some(doc)) => sorted.checks.push((0, doc, f.clone())),
            (None, None) => sorted.moved.push(f.clone()),
        }
    }
    sorted
}

/// The messages of `doc`'s defaulted fields, from its record; None when the
/// record is damaged.
pub(super) fn field_problems(root: &Root, cached: &Cached, doc: usize) -> Option<Vec<Problem>> {
    let (m, messages) = cached.record(doc, root.scope)?;
    let path = m.path.under(&root.dir);
    Some(messages.into_iter().map(|msg| Problem::field(path.clone(), msg)).collect())
}

/// What reading the files written close to a cache build found.
pub(super) struct Checked {
    /// The entries whose file holds the content indexed: (part, document).
    pub(super) same: std::collections::HashSet<(usize, usize)>,
    /// Entries whose file changed under the same size and stamp, with
    /// whether it still parses: (part, document, parses).
    pub(super) differ: Vec<(usize, usize, bool)>,
    /// Parts with a checked file not yet old enough to be trusted.
    pub(super) young: Vec<usize>,
    /// Parts with a checked file.
    pub(super) checked: Vec<usize>,
    pub(super) problems: Vec<Problem>,
}

impl Checked {
    /// True when part `k` had files checked, all held what was indexed and
    /// all are old enough: the part can be marked as built now.
    pub(super) fn settled(&self, k: usize) -> bool {
        self.checked.contains(&k)
            && !self.young.contains(&k)
            && !self.differ.iter().any(|d| d.0 == k)
    }
}

/// Read the files of `checks` (part, document, file) and compare each with
/// the content its entry was indexed from.
pub(super) fn verify(
    parts: &[&Cached],
    scope: Scope,
    checks: &[(usize, usize, FileEntry)],
    at: u64,
) -> Checked {
    let files: Vec<FileEntry> = checks.iter().map(|c| c.2.clone()).collect();
    let read = load_files(scope, &files);
    let mut by_path: std::collections::HashMap<&RelPath, &Memory> =
        read.memories.iter().map(|m| (&m.path, m)).collect();
    let mut out = Checked {
        same: Default::default(),
        differ: Vec::new(),
        young: Vec::new(),
        checked: Vec::new(),
        problems: read.problems,
    };
    for (part, doc, f) in checks {
        if !out.checked.contains(part) {
            out.checked.push(*part);
        }
        if f.changed_ns().saturating_add(RACY_NS) >= at && !out.young.contains(part) {
            out.young.push(*part);
        }
        let now = by_path.remove(&f.rel);
        let same = now.is_some_and(|m| {
            parts[*part]
                .record(*doc, scope)
                .is_some_and(|(c, _)| c.content != 0 && c.content == m.content)
        });
        if same {
            out.same.insert((*part, *doc));
        } else {
            out.differ.push((*part, *doc, now.is_some()));
        }
    }
    // A file that holds what was indexed has its field messages reported
    // from its record, as every cached file does.
    let same: std::collections::HashSet<&std::path::Path> = checks
        .iter()
        .filter(|c| out.same.contains(&(c.0, c.1)))
        .map(|c| c.2.path.as_path())
        .collect();
    out.problems.retain(|p| !same.contains(p.path.as_path()));
    out
}

/// Mark a cache file of `root` (still the one `cached` was read from) as
/// built at `at`: every file it holds was checked to be as indexed. The
/// whole file is rewritten with the new time and the names part sealed again.
pub(super) fn confirm(root: &Root, cached: &Cached, at: u64) {
    let limit = cached.total;
    let Ok(mut bytes) = crate::store::files::read(
        &root.dir,
        &cached.path,
        crate::store::files::Links::Never,
        limit,
    ) else {
        return;
    };
    let names_len = u64_at(&bytes, word::NAMES_LEN).and_then(|v| usize::try_from(v).ok());
    let Some(names_end) = names_len.and_then(|l| HEADER.checked_add(l)) else { return };
    let same = bytes.len() as u64 == cached.total
        && names_end <= bytes.len()
        && u64_at(&bytes, HEADER) == Some(cached.names.built_at);
    if !same {
        return;
    }
    bytes[HEADER..HEADER + 8].copy_from_slice(&at.to_le_bytes());
    let sum = checksum(&bytes[HEADER..names_end]);
    set_word(&mut bytes, word::NAMES_SUM, sum);
    // A cache that cannot be written only costs the re-reads next time.
    let _ = write_atomic(&root.dir, &cached.path, &bytes);
}

/// Read every file, index it, and write a new cache.
pub(super) fn rebuild(
    root: &Root,
    listings: &[Listing],
    mut problems: Vec<Problem>,
    tokenizer: &Tokenizer,
    listed_at: u64,
) -> Indexed {
    let files = entries(listings);
    let files = files.as_slice();
    // Reading counts one step per file, indexing another.
    let progress = Progress::start("indexing memories", 2 * files.len());
    let scan = load_files_counted(root.scope, files, progress.counter());
    progress
        .counter()
        .fetch_add(files.len() - scan.memories.len(), std::sync::atomic::Ordering::Relaxed);
    let segments = packed::segments(&scan.memories, tokenizer, progress.counter());
    drop(progress);
    let bytes = encode(root, files, &scan.memories, &scan.problems, &segments, listed_at);
    // A cache that cannot be written only costs time on the next run; the
    // delta of the cache it replaces holds nothing the new one lacks.
    let _ = write_atomic(&root.dir, &path(root), &bytes);
    let _ = crate::store::write::remove_file(&root.dir, &delta_path(root));
    problems.extend(scan.problems);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let (stats, tables) = packed::split(segments);
    Indexed {
        scope: root.scope,
        parts: Vec::new(),
        live: vec![true; scan.memories.len()],
        fresh: scan.memories,
        stats: stats.into(),
        tables,
        problems,
    }
}
