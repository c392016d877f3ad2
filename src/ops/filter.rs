//! Which memories a command picks: the criteria `list`, `recall`,
//! `export`, `clean` and `stats` share (one name and one meaning each).
//! The minimum relevance and the tier go by each memory's use as of now
//! (see [`crate::model::usage`]), read from the roots' hit records. Who
//! may see a memory at all is [`crate::ops::visibility`]'s to say.

use std::collections::BTreeSet;

use crate::base::error::{Error, Result};
use crate::model::memory::{CATEGORY_KINDS, Memory};
use crate::model::roots::Root;
use crate::model::usage::{Relevance, Tier};
use crate::ops::visibility::visible_to;
use crate::store::usage::Uses;

/// The criteria: a memory passes when it meets every one given.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this category.
    pub category: Option<String>,
    /// Only this kind (case does not matter).
    pub kind: Option<String>,
    /// Only memories with this tag (case does not matter).
    pub tag: Option<String>,
    /// As this agent role sees them: shared memories and the role's own.
    pub role: Option<String>,
    /// Only memories whose relevance in effect is at least this.
    pub min_relevance: Option<Relevance>,
    /// Only memories used this recently.
    pub tier: Option<Tier>,
}

impl Filter {
    /// Whether any filter is given.
    pub fn is_set(&self) -> bool {
        self.category.is_some()
            || self.kind.is_some()
            || self.tag.is_some()
            || self.role.is_some()
            || self.min_relevance.is_some()
            || self.tier.is_some()
    }

    /// Whether `m` passes every filter given, its use read from `uses`.
    /// Without `--role`, a memory private to a role passes (the people's
    /// commands see everything; `recall` and `context` add their own rule,
    /// see [`crate::ops::visibility::visible_to`]).
    pub fn matches(&self, m: &Memory, uses: &Uses) -> bool {
        self.category.as_ref().is_none_or(|c| &m.path.category == c)
            && self.kind.as_ref().is_none_or(|k| m.kind.eq_ignore_ascii_case(k))
            && self.tag.as_ref().is_none_or(|t| m.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
            && self.role.as_ref().is_none_or(|r| visible_to(m, Some(r)))
            && (self.min_relevance.is_none() && self.tier.is_none() || {
                let used = uses.of(m);
                self.min_relevance.is_none_or(|min| used.effective >= min)
                    && self.tier.is_none_or(|t| used.tier == t)
            })
    }

    /// A `--category` that names no category of `roots`, or a `--kind` no
    /// memory has and no default category implies, is bad input (exit 2)
    /// that lists the ones there are, not an empty answer. A category is a
    /// folder of a root: every memory of it lives there.
    pub fn check_category(&self, roots: &[&Root]) -> Result<()> {
        self.check_kind(roots)?;
        let Some(category) = &self.category else { return Ok(()) };
        let folder = |r: &&Root| r.dir.join(category).symlink_metadata().is_ok_and(|m| m.is_dir());
        if roots.iter().any(folder) {
            return Ok(());
        }
        let mut have = BTreeSet::new();
        for root in roots {
            for entry in std::fs::read_dir(&root.dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entry.file_type().is_ok_and(|t| t.is_dir()) && !name.starts_with('.') {
                    have.insert(name);
                }
            }
        }
        let have: Vec<String> = have.into_iter().collect();
        Err(Error::input(format!("no category `{category}` in the selected roots"))
            .hint(format!("the categories are: {}", have.join(", "))))
    }

    fn check_kind(&self, roots: &[&Root]) -> Result<()> {
        let Some(kind) = &self.kind else { return Ok(()) };
        let known = |k: &str| CATEGORY_KINDS.iter().any(|(_, d)| d.eq_ignore_ascii_case(k));
        if known(kind) {
            return Ok(());
        }
        // A kind of the person's own: valid when some memory has it.
        let tree = crate::cache::scan_all(roots);
        if tree.memories.iter().any(|m| m.kind.eq_ignore_ascii_case(kind)) {
            return Ok(());
        }
        let mut kinds: BTreeSet<String> =
            CATEGORY_KINDS.iter().map(|(_, k)| k.to_string()).collect();
        kinds.extend(tree.memories.iter().map(|m| m.kind.to_lowercase()));
        let kinds: Vec<String> = kinds.into_iter().collect();
        Err(Error::input(format!("no kind `{kind}`"))
            .hint(format!("the kinds are: {}", kinds.join(", "))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::relpath::RelPath;
    use crate::model::roots::Scope;

    fn memory(path: &str, kind: &str, tags: &[&str], role: Option<&str>) -> Memory {
        let mut m = Memory::blank(RelPath::parse(path).unwrap(), Scope::Project);
        m.kind = kind.into();
        m.tags = tags.iter().map(|t| (*t).to_string()).collect();
        m.role = role.map(Into::into);
        m
    }

    #[test]
    fn each_flag_narrows_and_role_keeps_shared_memories() {
        let shared = memory("facts/a", "fact", &["DB"], None);
        let mine = memory("facts/b", "fact", &[], Some("reviewer"));
        let theirs = memory("decisions/c", "decision", &["db"], Some("writer"));
        let uses = Uses::default();
        let all = Filter::default();
        assert!([&shared, &mine, &theirs].iter().all(|m| all.matches(m, &uses)));
        let by = |f: Filter| {
            [&shared, &mine, &theirs]
                .iter()
                .filter(|m| f.matches(m, &uses))
                .map(|m| m.file())
                .collect::<Vec<_>>()
        };
        let role = Filter { role: Some("reviewer".into()), ..Filter::default() };
        assert_eq!(by(role), ["facts/a.md", "facts/b.md"]);
        let tag = Filter { tag: Some("db".into()), ..Filter::default() };
        assert_eq!(by(tag), ["facts/a.md", "decisions/c.md"]);
        let kind = Filter { kind: Some("DECISION".into()), ..Filter::default() };
        assert_eq!(by(kind), ["decisions/c.md"]);
        let category = Filter { category: Some("facts".into()), ..Filter::default() };
        assert_eq!(by(category), ["facts/a.md", "facts/b.md"]);
        assert!(!visible_to(&mine, None) && visible_to(&shared, None));
    }

    #[test]
    fn relevance_and_tier_go_by_use_as_of_now() {
        let day = crate::base::time::DAY_MS;
        let mut old = memory("facts/old", "fact", &[], None);
        old.relevance = Relevance::High;
        let mut new = memory("facts/new", "fact", &[], None);
        new.updated = 40 * day;
        // A root that has recorded use from the start.
        let state = crate::store::state::State { since: Some(0), ..Default::default() };
        let uses =
            Uses::from_states(&[(crate::model::roots::Scope::Project, state.into())], 41 * day);
        let by = |f: Filter| {
            [&old, &new]
                .iter()
                .filter(|m| f.matches(m, &uses))
                .map(|m| m.file())
                .collect::<Vec<_>>()
        };
        // 41 days unused: high is medium now; 1 day: medium stays medium.
        let min = |r| Filter { min_relevance: Some(r), ..Filter::default() };
        assert_eq!(by(min(Relevance::High)), Vec::<String>::new());
        assert_eq!(by(min(Relevance::Medium)), ["facts/old.md", "facts/new.md"]);
        let tier = |t| Filter { tier: Some(t), ..Filter::default() };
        assert_eq!(by(tier(Tier::Cool)), ["facts/old.md"]);
        assert_eq!(by(tier(Tier::Hot)), ["facts/new.md"]);
        assert!(tier(Tier::Warm).is_set() && by(tier(Tier::Warm)).is_empty());
    }
}
