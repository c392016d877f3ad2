//! The cache against the files: deltas, racy files, damage.

use super::cached::{delta_path, open, path, read};
use super::docs::Indexed;
use super::format::HEADER;
use super::fresh::{index_at, rebuild};
use super::scan_root;
use crate::base::codec::checksum;
use crate::base::time::now_ns;
use crate::model::roots::{Root, Scope};
use crate::rank::tokenize::Tokenizer;

/// A root of three memories and its cache, built.
fn built() -> (tempfile::TempDir, Root) {
    let tmp = tempfile::tempdir().unwrap();
    let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
    std::fs::create_dir_all(tmp.path().join("facts")).unwrap();
    for slug in ["a", "b", "c"] {
        let text = format!("---\nsummary: fact {slug}\n---\nbody {slug}\n");
        std::fs::write(tmp.path().join(format!("facts/{slug}.md")), text).unwrap();
    }
    let (listings, problems) = crate::store::scan::list(&root);
    rebuild(&root, &listings, problems, &Tokenizer::default(), now_ns());
    (tmp, root)
}

#[test]
fn a_crafted_record_offset_is_refused_not_allocated() {
    let (_tmp, root) = built();
    assert_eq!(open(&root, &path(&root)).unwrap().records(Scope::Project).unwrap().len(), 3);
    let mut bytes = std::fs::read(path(&root)).unwrap();
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let meta_at = HEADER + word(&bytes, super::format::word::NAMES_LEN) as usize;
    let meta_len = word(&bytes, super::format::word::META_LEN) as usize;
    // The meta part: segments, then length-prefixed columns: sizes and
    // mtimes (8 bytes a memory), then the record offsets (n + 1).
    let n = 3;
    let offsets = meta_at + 8 + 2 * (8 + 8 * n) + 8;
    for value in [u64::MAX, u64::MAX / 2, 1 << 36] {
        bytes[offsets + 8 * n..offsets + 8 * n + 8].copy_from_slice(&value.to_le_bytes());
        let sum = checksum(&bytes[meta_at..meta_at + meta_len]);
        super::format::set_word(&mut bytes, super::format::word::META_SUM, sum);
        std::fs::write(path(&root), &bytes).unwrap();
        let cached = open(&root, &path(&root)).expect("the checksums were sealed again");
        assert!(cached.records(Scope::Project).is_none());
        assert!(cached.record(2, Scope::Project).is_none());
        // A command's read falls back to the files themselves.
        assert_eq!(scan_root(&root).memories.len(), 3);
    }
}

const S: u64 = 1_000_000_000;

fn write(root: &Root, rel: &str, text: &str) {
    std::fs::write(root.dir.join(rel), text).unwrap();
}

/// A root of three memories whose cache was built `after` nanoseconds
/// after they were written; returns that build time.
fn built_after(after: u64) -> (tempfile::TempDir, Root, u64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = Root { scope: Scope::Project, dir: tmp.path().to_path_buf() };
    std::fs::create_dir_all(tmp.path().join("facts")).unwrap();
    for slug in ["a", "b", "c"] {
        write(
            &root,
            &format!("facts/{slug}.md"),
            &format!("---\nsummary: fact {slug}\n---\nbody {slug}\n"),
        );
    }
    let at = now_ns() + after;
    let (listings, problems) = crate::store::scan::list(&root);
    rebuild(&root, &listings, problems, &Tokenizer::default(), at);
    (tmp, root, at)
}

fn summary(ix: &Indexed, slug: &str) -> String {
    let doc = ix.find_live("facts", slug).unwrap();
    match ix.part(doc) {
        Some((part, d)) => part.record(d, ix.scope).unwrap().0.summary,
        None => ix.fresh[doc - ix.cached_len()].summary.clone(),
    }
}

#[test]
fn a_changed_file_is_read_once_then_held_by_the_delta() {
    let (_tmp, root, at) = built_after(3 * S);
    write(&root, "facts/b.md", "---\nsummary: fact b, edited\n---\nbody b, longer now\n");
    write(&root, "facts/d.md", "---\nsummary: fact d\n---\nbody d\n");
    std::fs::remove_file(root.dir.join("facts/c.md")).unwrap();
    let tok = Tokenizer::default();
    let first = index_at(&root, &tok, at + 3 * S);
    assert_eq!(first.fresh.len(), 2, "the edited and the added file are read");
    assert!(delta_path(&root).exists());
    let second = index_at(&root, &tok, at + 4 * S);
    assert!(second.fresh.is_empty(), "the second run reads no file");
    assert_eq!(second.parts.len(), 2);
    assert_eq!(second.live.iter().filter(|l| **l).count(), 3);
    assert_eq!(summary(&second, "b"), "fact b, edited");
    assert_eq!(summary(&second, "d"), "fact d");
    assert!(second.find_live("facts", "c").is_none());
    // The listing path reads the delta too, and agrees with the files.
    let listed: Vec<_> = scan_root(&root).memories.into_iter().map(|m| m.summary).collect();
    assert_eq!(listed, ["fact a", "fact b, edited", "fact d"]);
    // A later change rewrites the delta, which then holds both.
    write(&root, "facts/a.md", "---\nsummary: fact a, edited\n---\nbody a\n");
    assert_eq!(index_at(&root, &tok, at + 5 * S).fresh.len(), 3);
    let third = index_at(&root, &tok, at + 6 * S);
    assert!(third.fresh.is_empty());
    assert_eq!(summary(&third, "a"), "fact a, edited");
    assert_eq!(summary(&third, "b"), "fact b, edited");
}

#[test]
fn files_written_as_the_cache_was_built_are_compared_then_trusted() {
    let (_tmp, root, _) = built_after(0);
    write(&root, "facts/c.md", "---\nsummary: fact c\npinned: maybe\n---\nbody c\n");
    let at = now_ns();
    let (listings, problems) = crate::store::scan::list(&root);
    rebuild(&root, &listings, problems, &Tokenizer::default(), at);
    let tok = Tokenizer::default();
    // Within the window: each file is read and compared, none re-indexed.
    let soon = index_at(&root, &tok, at + S / 2);
    assert!(soon.fresh.is_empty());
    let reported = soon.problems.iter().filter(|p| p.path.ends_with("facts/c.md")).count();
    assert_eq!(reported, 1, "{:?}", soon.problems);
    assert_eq!(soon.live.iter().filter(|l| **l).count(), 3);
    assert!(!delta_path(&root).exists());
    assert_eq!(open(&root, &path(&root)).unwrap().names.built_at, at, "not sealed while young");
    // Once old enough, the cache is marked as built then.
    index_at(&root, &tok, at + 3 * S);
    assert_eq!(open(&root, &path(&root)).unwrap().names.built_at, at + 3 * S);
    let (cached, _) = read(&root, &path(&root)).unwrap();
    let (live, changed) = cached.match_listings(&crate::store::scan::list(&root).0);
    assert!(changed.is_empty() && live.iter().all(|l| *l));
}

#[test]
fn a_file_that_does_not_parse_is_reported_every_run_and_never_cached() {
    let (_tmp, root, at) = built_after(3 * S);
    write(&root, "facts/bad.md", "---\nsummary: [unclosed\n---\nbody\n");
    let tok = Tokenizer::default();
    for k in 1..3 {
        let ix = index_at(&root, &tok, at + k * 3 * S);
        assert!(ix.problems.iter().any(|p| p.path.ends_with("facts/bad.md")), "run {k}");
        assert!(!delta_path(&root).exists(), "run {k}: nothing new to hold");
    }
}

#[test]
fn a_damaged_delta_is_passed_over_and_written_again() {
    let (_tmp, root, at) = built_after(3 * S);
    write(&root, "facts/b.md", "---\nsummary: fact b, edited\n---\nbody b\n");
    let tok = Tokenizer::default();
    index_at(&root, &tok, at + 3 * S);
    let mut bytes = std::fs::read(delta_path(&root)).unwrap();
    let last = bytes.len() - 1;
    bytes[HEADER + 1] ^= 0xff;
    bytes[last] ^= 0xff;
    std::fs::write(delta_path(&root), &bytes).unwrap();
    let ix = index_at(&root, &tok, at + 4 * S);
    assert_eq!(ix.fresh.len(), 1);
    assert_eq!(summary(&ix, "b"), "fact b, edited");
    assert!(index_at(&root, &tok, at + 5 * S).fresh.is_empty(), "written again");
}

/// Make the cache file at `path` record `stamp` for `facts/<slug>`, as a
/// file system whose clock ticks once a second would have let a rewrite
/// keep it: the meta part is sealed again.
fn record_stamp(root: &Root, path: &std::path::Path, slug: &str, stamp: u64) {
    let cached = open(root, path).unwrap();
    let doc = cached.find("facts", slug).unwrap();
    let at = cached.meta.at(super::format::Col::Stamps) + 8 * doc;
    drop(cached);
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at..at + 8].copy_from_slice(&stamp.to_le_bytes());
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    use super::format::word::{META_LEN, NAMES_LEN};
    let (meta_at, meta_len) = (HEADER + word(&bytes, NAMES_LEN), word(&bytes, META_LEN));
    let sum = checksum(&bytes[meta_at..meta_at + meta_len]);
    super::format::set_word(&mut bytes, super::format::word::META_SUM, sum);
    std::fs::write(path, &bytes).unwrap();
}

/// The stamp `facts/<slug>` has now.
fn stamp_now(root: &Root, slug: &str) -> u64 {
    let entries = crate::store::scan::entries(&crate::store::scan::list(root).0);
    entries.iter().find(|f| f.rel.slug == slug).unwrap().stamp()
}

#[test]
fn a_stale_base_entry_under_the_deltas_stamp_is_never_sealed_as_current() {
    let (_tmp, root, _) = built_after(0);
    let at = now_ns();
    let (listings, problems) = crate::store::scan::list(&root);
    rebuild(&root, &listings, problems, &Tokenizer::default(), at);
    let tok = Tokenizer::default();
    // Rewritten at the same size in the same tick: the base's stamp holds.
    write(&root, "facts/a.md", "---\nsummary: fact A\n---\nbody A\n");
    record_stamp(&root, &path(&root), "a", stamp_now(&root, "a"));
    assert_eq!(summary(&index_at(&root, &tok, at + S / 2), "a"), "fact A");
    assert!(delta_path(&root).exists());
    // Later runs: b and c are old enough to seal the base, but a's base
    // entry is stale under a stamp the delta holds.
    for k in 1..4 {
        let ix = index_at(&root, &tok, at + k * 3 * S);
        assert_eq!(summary(&ix, "a"), "fact A", "run {k}");
    }
    assert_eq!(open(&root, &path(&root)).unwrap().names.built_at, at, "the base is not sealed");
}

#[test]
fn a_restored_mtime_does_not_make_a_fresh_write_look_settled() {
    let (_tmp, root, _) = built_after(3 * S);
    let tok = Tokenizer::default();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800);
    let set_old = |slug: &str| {
        let file =
            std::fs::File::options().write(true).open(root.dir.join(format!("facts/{slug}.md")));
        file.unwrap().set_modified(old).unwrap();
    };
    write(&root, "facts/a.md", "---\nsummary: fact 2\n---\nbody a\n");
    set_old("a");
    let built = now_ns();
    assert_eq!(summary(&index_at(&root, &tok, built), "a"), "fact 2");
    // Rewritten at the same size within the tick, mtime put back: on a
    // coarse clock the delta's stamp still matches.
    write(&root, "facts/a.md", "---\nsummary: fact 3\n---\nbody a\n");
    set_old("a");
    record_stamp(&root, &delta_path(&root), "a", stamp_now(&root, "a"));
    // Its mtime says 2020; its ctime says just now: it is read again.
    assert_eq!(summary(&index_at(&root, &tok, built + S), "a"), "fact 3");
}
