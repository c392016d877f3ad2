//! Names near a name: what "did you mean" offers for a category or a
//! memory path that is not there. Text in, text out.
//!
//! Nearness is the optimal-string-alignment distance (Levenshtein with a
//! swap of two neighbours counting as one edit, as in `decsions` for
//! `decisions`), on characters.

/// The fewest single-character insertions, deletions, substitutions and
/// swaps of two neighbours that turn `a` into `b`.
pub fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back (for a swap), one back, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

/// How many edits a mistyped category name of `name`'s length may hold:
/// two at most, and fewer than a third of it (`fact` is one edit from
/// `facts`; `ci` and `db` are nobody's typo).
pub fn category_edits(name: &str) -> usize {
    (name.chars().count() / 3).min(2)
}

/// How many edits a mistyped memory path (`category/slug`) may hold: a
/// quarter of its length, at least one and at most three.
pub fn path_edits(path: &str) -> usize {
    (path.chars().count() / 4).clamp(1, 3)
}

/// The categories of `existing` within [`category_edits`] of `name`
/// (`name` itself excluded), nearest first, then by name.
pub fn near_categories<'a>(name: &str, existing: &[&'a str]) -> Vec<&'a str> {
    let most = category_edits(name);
    ranked(existing.iter().filter(|c| **c != name).map(|c| (distance(name, c), *c)), most)
}

/// Up to three memory paths of `existing` (each `category/slug`, without
/// `.md`) near `path`: within [`path_edits`] of it, or with the same slug
/// in another category; nearest first, then by name.
pub fn near_paths<'a>(path: &str, existing: &[&'a str]) -> Vec<&'a str> {
    let most = path_edits(path);
    let slug = |p: &str| p.rsplit_once('/').map_or(p.to_string(), |(_, s)| s.to_string());
    let wanted = slug(path);
    let scored = existing.iter().filter(|p| **p != path).map(|p| {
        let d = distance(path, p);
        // Another category, same slug: as near as the farthest typo allowed.
        let d = if slug(p) == wanted { d.min(most) } else { d };
        (d, *p)
    });
    let mut near = ranked(scored, most);
    near.truncate(3);
    near
}

fn ranked<'a>(scored: impl Iterator<Item = (usize, &'a str)>, most: usize) -> Vec<&'a str> {
    let mut near: Vec<(usize, &str)> = scored.filter(|(d, _)| *d <= most).collect();
    near.sort();
    near.dedup();
    near.into_iter().map(|(_, name)| name).collect()
}

/// "did you mean a?" / "did you mean a, b or c?", for a hint (the names as
/// given, quoted or not); None when there is nothing near.
pub fn did_you_mean(names: &[String]) -> Option<String> {
    match names {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        [init @ .., last] => Some(format!("did you mean {} or {last}?", init.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("decisions", "decisions"), 0);
        assert_eq!(distance("decsions", "decisions"), 1);
        assert_eq!(distance("decisoins", "decisions"), 1);
        assert_eq!(distance("pitfals", "pitfalls"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("部署", "部暑"), 1);
        assert_eq!(distance("ab", "ba"), 1);
    }

    #[test]
    fn a_category_two_edits_away_is_near_a_short_unrelated_one_is_not() {
        let existing = ["rules", "decisions", "pitfalls", "preferences", "facts", "references"];
        assert_eq!(near_categories("decsions", &existing), ["decisions"]);
        assert_eq!(near_categories("decision", &existing), ["decisions"]);
        assert_eq!(near_categories("fact", &existing), ["facts"]);
        assert_eq!(near_categories("rule", &existing), ["rules"]);
        assert_eq!(near_categories("pitfals", &existing), ["pitfalls"]);
        // Nearest first.
        assert_eq!(near_categories("prefrences", &existing), ["preferences", "references"]);
        assert!(near_categories("decisions", &existing).is_empty());
        assert!(near_categories("runbooks", &existing).is_empty());
        assert!(near_categories("ci", &["db", "cd"]).is_empty());
        // Three edits are not a typo.
        assert!(near_categories("dcsns", &existing).is_empty());
    }

    #[test]
    fn paths_near_by_typo_or_by_slug_nearest_first() {
        let existing = ["facts/temp", "facts/team", "pitfalls/tmp", "rules/deploy", "facts/x"];
        assert_eq!(near_paths("facts/tmp", &existing), ["facts/temp", "pitfalls/tmp"]);
        assert_eq!(near_paths("rules/deplyo", &existing), ["rules/deploy"]);
        assert!(near_paths("decisions/orm", &existing).is_empty());
        assert!(near_paths("facts/temp", &["facts/temp"]).is_empty());
    }

    #[test]
    fn the_hint_names_each_suggestion() {
        assert_eq!(did_you_mean(&[]), None);
        assert_eq!(did_you_mean(&["`a`".into()]).unwrap(), "did you mean `a`?");
        assert_eq!(
            did_you_mean(&["a".into(), "b".into(), "c".into()]).unwrap(),
            "did you mean a, b or c?"
        );
    }
}
