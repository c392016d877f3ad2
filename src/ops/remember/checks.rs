//! What `mem remember` checks and tells around a write: text no command
//! could read back or that holds a credential is refused; near-duplicates,
//! the category's listing and the resident size are reported.

use crate::base::error::{Error, Result};
use crate::base::secrets;
use crate::cache::{self, Library};
use crate::guard::{DUPLICATE_THRESHOLD, bigrams, jaccard};
use crate::model::frontmatter::Document;
use crate::model::memory::Memory;
use crate::model::memory::over_budget;
use crate::model::relpath::RelPath;
use crate::model::roots::{Root, Scope};
use crate::rank::score::{Memories, Params, Request, rank};
use crate::store::scan;

/// Refuse a memory that no command could read back.
pub(super) fn refuse_unreadable(rel: &RelPath, text: &str) -> Result<()> {
    if text.len() as u64 > scan::MAX_FILE_BYTES {
        return Err(Error::input(format!(
            "{rel}: the memory would be {} KiB, over the 1 MiB limit every command reads",
            text.len().div_ceil(1024)
        ))
        .hint("keep a memory short; link to a document in the repository for the details"));
    }
    Document::parse(text).map(drop).map_err(|e| {
        let hint = match crate::model::frontmatter::conflict::find(text) {
            // Read back, the text would be taken for a merge left unresolved.
            Some(_) => "to show conflict markers, put them in a fenced code block (```)",
            None => "shorten the fields given as flags",
        };
        Error::input(format!("{rel}: {}", e.message)).hint(hint)
    })
}

/// Refuse text that looks like it holds a credential.
pub(super) fn refuse_secrets(rel: &RelPath, text: &str, allowed: bool) -> Result<()> {
    let Some(found) = secrets::scan(text).into_iter().next() else { return Ok(()) };
    if allowed {
        return Ok(());
    }
    Err(Error::input(format!(
        "{rel}:{}: this looks like {}; mem does not save credentials (project memory is committed to git)",
        found.line, found.what
    ))
    .hint("remove it and say where the secret lives instead, or pass --allow-secret if it is not one"))
}

/// How many of the memories that rank best for a new memory's text are
/// compared with it: a near-duplicate shares most of its words, so it ranks
/// near the top.
const DUPLICATE_CANDIDATES: usize = 50;

/// Live memories of either root whose text is nearly the same as `memory`'s:
/// the best-ranked ones for its text, read and compared.
pub(super) fn near_duplicates(
    lib: &Library,
    roots: &[&Root],
    memory: &Memory,
    now_ms: i64,
    may_name: &dyn Fn(&Memory) -> bool,
) -> Vec<String> {
    let text = memory_text(memory);
    let filter = |_, m: &Memory| m.path != memory.path && !m.is_superseded() && may_name(m);
    let request = Request {
        query: &text,
        limit: DUPLICATE_CANDIDATES,
        now_ms,
        signals: &[],
        filter: &filter,
        explain: false,
    };
    let hits = rank(&lib.corpus, &lib.docs, &Params::default(), &request);
    if lib.is_damaged() {
        // The hint is only a hint: the next run rebuilds the index.
        cache::distrust(roots);
    }
    let mine = bigrams(&text);
    hits.iter()
        .filter_map(|hit| {
            let m = lib.docs.memory(hit.doc)?;
            let root = roots.iter().find(|r| r.scope == m.scope)?;
            let (full, _) = scan::load(m.scope, m.path.clone(), &m.path.under(&root.dir)).ok()?;
            let score = jaccard(&mine, &bigrams(&memory_text(&full)));
            (score >= DUPLICATE_THRESHOLD).then(|| {
                format!(
                    "nearly the same as {} {} (similarity {score:.2}): update that one, or pass --supersedes {}",
                    m.scope.name(),
                    m.file(),
                    m.file().trim_end_matches(".md")
                )
            })
        })
        .collect()
}

/// Every memory of `root` as its frontmatter says, through the index; the
/// always-resident ones (rules and pinned) with their bodies, which the
/// context budget counts.
pub(super) fn root_memories(lib: &Library, root: &Root) -> Vec<Memory> {
    let mut memories =
        lib.docs.root_memories(root.scope).unwrap_or_else(|| cache::scan_root(root).memories);
    for m in memories.iter_mut().filter(|m| m.is_resident()) {
        if let Ok((full, _)) = scan::load(m.scope, m.path.clone(), &m.path.under(&root.dir)) {
            m.body = full.body;
        }
    }
    memories
}

pub(super) fn memory_text(m: &Memory) -> String {
    format!("{}\n{}\n{}", m.title, m.summary, m.body)
}

/// The written category after the write: (file, summary) per memory.
/// The written category after the write: (file, summary) of the memory just
/// written and the most recently updated others, at most [`MANIFEST`] rows
/// in path order, and how many more there are.
pub(super) fn manifest(
    after: &[Memory],
    rel: &RelPath,
    may_name: &dyn Fn(&Memory) -> bool,
) -> (Vec<(String, String)>, usize) {
    let mut mine: Vec<&Memory> =
        after.iter().filter(|m| m.path.category == rel.category && may_name(m)).collect();
    mine.sort_by_key(|m| (m.path != *rel, std::cmp::Reverse(m.updated), m.file()));
    let more = mine.len().saturating_sub(MANIFEST);
    let mut rows: Vec<(String, String)> =
        mine.into_iter().take(MANIFEST).map(|m| (m.file(), m.summary.clone())).collect();
    rows.sort();
    (rows, more)
}

/// Rows of the category shown after a write; a category of thousands is a
/// count, not a listing.
const MANIFEST: usize = 30;

/// A warning when the always-resident memories (rules and pinned) of the
/// written root exceed the default context budget.
pub(super) fn resident_warning(after: &[Memory], scope: Scope) -> Option<String> {
    over_budget(after, scope)
        .map(|said| format!("{said}: shorten them, move detail elsewhere, or unpin"))
}

/// The memories of the written root (`before` the write) as they are after it.
pub(super) fn after_write(
    before: Vec<Memory>,
    scope: Scope,
    rel: &RelPath,
    draft: Option<&Document>,
    now: i64,
) -> Vec<Memory> {
    match draft {
        Some(doc) => {
            let mut out: Vec<Memory> = before.into_iter().filter(|m| &m.path != rel).collect();
            out.push(Memory::from_document(rel.clone(), scope, doc, now).0);
            out
        }
        None => before,
    }
}
