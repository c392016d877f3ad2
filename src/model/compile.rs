//! The compiler: one root's memories → its generated text. Pure: the
//! command reads the files, this decides what they should say, and the
//! command writes only what differs.
//!
//! Generated are each `<category>/index.md` (a table, one row per memory,
//! sorted by slug) and the `registry` and `routing` regions of `ROOT.md`.
//! Everything outside the markers belongs to the user.

use std::collections::BTreeMap;

use crate::base::time::Lang;
use crate::model::bound::fit::{Table, Words, fit};
use crate::model::bound::rows::{Mark, Row, Totals, Trigger};
use crate::model::memory::Memory;
use crate::model::regions;
use crate::model::table::cell;

const STRINGS_EN: &str = include_str!("../../templates/strings.en");
const STRINGS_ZH: &str = include_str!("../../templates/strings.zh");

/// The words generated text is written in, from `templates/strings.<lang>`.
pub struct Strings {
    map: BTreeMap<&'static str, &'static str>,
    zh: bool,
}

impl Strings {
    /// The strings of a language.
    pub fn of(lang: Lang) -> Strings {
        let text = match lang {
            Lang::En => STRINGS_EN,
            Lang::Zh => STRINGS_ZH,
        };
        let map = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        Strings { map, zh: lang == Lang::Zh }
    }

    fn get(&self, key: &str) -> &'static str {
        self.map.get(key).copied().unwrap_or("")
    }

    fn header(&self, key: &str) -> Vec<String> {
        let header = self.get(key);
        let columns = header.matches('|').count().saturating_sub(1);
        vec![header.to_string(), format!("|{}", "---|".repeat(columns))]
    }

    /// What the bounded region `label` (`registry` or `routing`) says
    /// besides its rows.
    pub fn words(&self, label: &str) -> Words {
        let header = self.header(&format!("{label}.header"));
        let keyed_header = match label {
            "routing" => self.header("routing.header.bounded"),
            _ => header.clone(),
        };
        let empty = match label {
            "routing" => vec![self.get("routing.empty").to_string()],
            _ => header.clone(),
        };
        Words { header, keyed_header, empty, more: self.get(&format!("{label}.more")).into() }
    }
}

/// The language of a root, judged from its ROOT.md's hand-written text
/// (never from the tables generated in it, which would sway it as they
/// change): Chinese when CJK text outweighs Latin letters.
pub fn root_lang(root_md: &str) -> Lang {
    let text = regions::outside(root_md).unwrap_or_else(|| root_md.to_string());
    let cjk = text.chars().filter(|&c| crate::base::text::is_cjk(c)).count();
    let latin = text.chars().filter(char::is_ascii_alphabetic).count();
    if cjk * 3 >= latin && cjk > 0 { Lang::Zh } else { Lang::En }
}

/// What one root's files hold now.
pub struct Sources<'a> {
    /// The memories of this root only.
    pub memories: &'a [Memory],
    /// ROOT.md's text, if the file exists.
    pub root_md: Option<&'a str>,
    /// Each category's existing `index.md` text.
    pub indexes: &'a BTreeMap<String, String>,
}

/// One file to bring up to date; paths are relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Write { path: String, before: Option<String>, after: String },
    Remove { path: String, before: String },
}

impl Change {
    /// The file's path relative to the root.
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Remove { path, .. } => path,
        }
    }
}

/// A file that was left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
    /// True for a problem (broken markers), false for information.
    pub error: bool,
}

/// What compiling a root would change.
#[derive(Debug, Default)]
pub struct Plan {
    pub changes: Vec<Change>,
    pub notes: Vec<Note>,
}

/// Decide every generated file of one root. With `fix_markers`, a ROOT.md
/// that lacks a region gets its section appended.
pub fn plan(src: &Sources, fix_markers: bool) -> Plan {
    let lang = src.root_md.map_or(Lang::En, root_lang);
    let strings = Strings::of(lang);
    let mut plan = Plan::default();
    // Checked once, here: a memory with a field that looks like a credential
    // is compiled from a copy with that field withheld.
    let withheld: Vec<Option<Memory>> =
        src.memories.iter().map(|m| withhold(m, &mut plan.notes)).collect();
    let mut by_category: BTreeMap<&str, Vec<&Memory>> = BTreeMap::new();
    for (m, w) in src.memories.iter().zip(&withheld) {
        by_category.entry(m.path.category.as_str()).or_default().push(w.as_ref().unwrap_or(m));
    }
    for (category, memories) in &mut by_category {
        memories.sort_by(|a, b| a.path.slug.cmp(&b.path.slug));
        index(&mut plan, &strings, category, memories, src.indexes.get(*category));
    }
    for (category, text) in src.indexes {
        if !by_category.contains_key(category.as_str()) {
            prune(&mut plan, category, text);
        }
    }
    if let Some(text) = src.root_md {
        root(&mut plan, &strings, &by_category, text, fix_markers);
    }
    plan
}

fn index(
    plan: &mut Plan,
    s: &Strings,
    category: &str,
    memories: &[&Memory],
    existing: Option<&String>,
) {
    let path = format!("{category}/index.md");
    let mut rows = s.header("index.header");
    rows.extend(memories.iter().map(|m| index_row(s, m)));
    let Some(text) = existing else {
        let begin = format!("<!-- auto:begin {category} -->");
        let title = s.get("index.title").replace("{category}", category);
        let after = format!("{title}\n\n{begin}\n{}\n<!-- auto:end -->\n", rows.join("\n"));
        plan.changes.push(Change::Write { path, before: None, after });
        return;
    };
    let regions = match regions::find(text) {
        Ok(r) => r,
        Err(e) => return plan.notes.push(broken(&path, e)),
    };
    if !regions.iter().any(|r| r.label == category) {
        plan.notes.push(Note {
            path,
            line: None,
            message: format!(
                "hand-written (no `<!-- auto:begin {category} -->` region): left as it is"
            ),
            error: false,
        });
        return;
    }
    let after = regions::replace(text, &regions, |label| (label == category).then(|| rows.clone()));
    if &after != text {
        plan.changes.push(Change::Write { path, before: Some(text.clone()), after });
    }
}

/// A compiled index whose category has no memories left is removed.
fn prune(plan: &mut Plan, category: &str, text: &str) {
    let compiled = regions::find(text).is_ok_and(|r| r.iter().any(|r| r.label == category));
    if compiled {
        plan.changes
            .push(Change::Remove { path: format!("{category}/index.md"), before: text.into() });
    }
}

fn root(
    plan: &mut Plan,
    s: &Strings,
    cats: &BTreeMap<&str, Vec<&Memory>>,
    original: &str,
    fix: bool,
) {
    let path = "ROOT.md".to_string();
    let mut text = original.to_string();
    let mut regions = match regions::find(&text) {
        Ok(r) => r,
        Err(e) => return plan.notes.push(broken(&path, e)),
    };
    let missing: Vec<&str> = ["registry", "routing"]
        .into_iter()
        .filter(|l| !regions.iter().any(|r| r.label == *l))
        .collect();
    if !missing.is_empty() {
        if fix {
            for label in &missing {
                text = append_section(&text, s, label);
            }
            regions = regions::find(&text).unwrap_or_default();
        } else {
            plan.notes.push(Note {
                path: path.clone(),
                line: None,
                message: format!(
                    "no `{}` region; run `mem compile --fix-markers` to append it",
                    missing.join("` or `")
                ),
                error: false,
            });
        }
    }
    let tables: Vec<Table> = [registry(s, cats), routing(s, cats)]
        .into_iter()
        .filter(|t| regions.iter().any(|r| r.label == t.label))
        .collect();
    let bodies = bounded(&text, &regions, &tables);
    let after = regions::replace(&text, &regions, |label| {
        tables.iter().position(|t| t.label == label).map(|i| bodies[i].clone())
    });
    if after != original {
        plan.changes.push(Change::Write { path, before: Some(original.to_string()), after });
    }
}

fn append_section(text: &str, s: &Strings, label: &str) -> String {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let heading = s.get(&format!("{label}.section"));
    out.push_str(&format!("\n{heading}\n\n<!-- auto:begin {label} -->\n<!-- auto:end -->\n"));
    out
}

/// The bodies of ROOT.md's bounded regions, `tables`, in `text`: whole
/// when the file fits its bound with them, else cut (see
/// [`crate::model::bound::fit`]).
pub fn bounded(text: &str, regions: &[regions::Region], tables: &[Table]) -> Vec<Vec<String>> {
    let outside =
        regions::replace(text, regions, |l| tables.iter().any(|t| t.label == l).then(Vec::new));
    // Every row is known here, so nothing is left to guess.
    fit(&outside, tables).unwrap_or_else(|_| tables.iter().map(|t| t.words.empty.clone()).collect())
}

fn table(label: &str, s: &Strings, mut rows: Vec<Row>) -> Table {
    rows.sort_by(|a, b| a.key.cmp(&b.key).then_with(|| a.keyed.cmp(&b.keyed)));
    rows.dedup_by(|a, b| a.keyed == b.keyed);
    let totals = Totals::of(&rows);
    Table {
        label: label.into(),
        words: s.words(label),
        rows,
        complete: true,
        ordered: true,
        totals,
    }
}

/// One row per category: its name and description, and no count. A count
/// line is what two branches that each add a memory to one category both
/// change the same way, which git merges without asking the merge driver
/// and gets wrong; without it, every merge, rebase and cherry-pick of
/// generated text is exact (the rows differ, and the driver merges rows).
fn registry(s: &Strings, cats: &BTreeMap<&str, Vec<&Memory>>) -> Table {
    let rows = cats.keys().map(|category| {
        let desc = s.get(&format!("desc.{category}"));
        Row::registry(&format!("| [{category}]({category}/index.md) | {} |", cell(desc)))
    });
    table("registry", s, rows.collect())
}

/// One row per `load_when` trigger of a memory that is not superseded.
fn routing(s: &Strings, cats: &BTreeMap<&str, Vec<&Memory>>) -> Table {
    let rows = cats.values().flatten().filter(|m| !m.is_superseded()).flat_map(|m| {
        let file = m.file();
        let rows: Vec<Row> = m
            .load_when
            .iter()
            .filter_map(|t| {
                let trigger = Trigger {
                    trigger: t,
                    file: &file,
                    kind: &m.kind,
                    updated_ms: m.updated,
                    mark: Mark::of(m.pinned, m.is_rule(), m.relevance).map(|k| k.word(s.zh)),
                };
                Row::routing(&trigger.keyed())
            })
            .collect();
        rows
    });
    table("routing", s, rows.collect())
}

fn index_row(s: &Strings, m: &Memory) -> String {
    let file = format!("{}.md", m.path.slug);
    let summary = match &m.superseded_by {
        Some(by) => format!("({} {by}) {}", s.get("superseded"), m.summary),
        None => m.summary.clone(),
    };
    format!("| [{file}]({file}) | {} | {} |", cell(&summary), cell(&m.highlight))
}

fn is_secret(text: &str) -> bool {
    !text.is_empty() && !crate::base::secrets::scan(text).is_empty()
}

/// A copy of `m` with each field that looks like a credential replaced by
/// [`WITHHELD`](crate::base::secrets::WITHHELD), and a note per field; `None` when there is none.
fn withhold(m: &Memory, notes: &mut Vec<Note>) -> Option<Memory> {
    let mut copy: Option<Memory> = None;
    let mut note = |key: &str| {
        notes.push(Note {
            path: m.file(),
            line: None,
            message: format!(
                "its {key} looks like a credential: withheld from the generated tables; remove it from the memory"
            ),
            error: false,
        });
    };
    if is_secret(&m.summary) {
        note("summary");
        copy.get_or_insert_with(|| m.clone()).summary = crate::base::secrets::WITHHELD.into();
    }
    if is_secret(&m.highlight) {
        note("highlight");
        copy.get_or_insert_with(|| m.clone()).highlight = crate::base::secrets::WITHHELD.into();
    }
    for (i, t) in m.load_when.iter().enumerate() {
        if is_secret(t) {
            note("load_when");
            copy.get_or_insert_with(|| m.clone()).load_when[i] =
                crate::base::secrets::WITHHELD.into();
        }
    }
    copy
}

fn broken(path: &str, e: regions::MarkerError) -> Note {
    Note {
        path: path.to_string(),
        line: Some(e.line),
        message: format!("{}; the file was left as it is", e.message),
        error: true,
    }
}
