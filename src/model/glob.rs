//! Path globs for the `paths:` frontmatter key: `*` matches within one path
//! segment, `**` matches any number of segments, `?` one character. Paths
//! and patterns use `/` and are relative to the project.

/// True when `path` matches `pattern`.
///
/// ```
/// use mem::model::glob::matches;
/// assert!(matches("src/**/*.rs", "src/commands/recall.rs"));
/// assert!(matches("src/**/*.rs", "src/main.rs"));
/// assert!(!matches("src/*.rs", "src/commands/recall.rs"));
/// ```
pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let path = path.trim_start_matches("./");
    let pat: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match_segments(&pat, &segs)
}

/// Segment by segment, from the end: `ok[j]` says whether the pattern's
/// tail matches `segs[j..]`. Time is patterns × segments, whatever the
/// number of `**` (a backtracking match is exponential in it).
fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    let n = segs.len();
    let mut ok = vec![false; n + 1];
    ok[n] = true;
    for p in pat.iter().rev() {
        let mut next = vec![false; n + 1];
        if *p == "**" {
            // `**` then the tail: the tail matches at j or at any later start.
            let mut any = false;
            for j in (0..=n).rev() {
                any |= ok[j];
                next[j] = any;
            }
        } else {
            for j in 0..n {
                next[j] = ok[j + 1] && match_segment(p, segs[j]);
            }
        }
        ok = next;
    }
    ok[0]
}

fn match_segment(pat: &str, seg: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = seg.chars().collect();
    let (mut pi, mut si, mut star, mut mark) = (0, 0, None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_double_stars_cost_no_more_than_one() {
        let pattern = format!("{}/zz", vec!["**"; 60].join("/"));
        assert!(!matches(&pattern, "a/b/c/d/e/f/g/h/i/j/k/l.rs"));
        assert!(matches(&pattern, "a/b/c/d/e/f/g/h/i/j/k/zz"));
    }

    #[test]
    fn globs() {
        let yes = [
            ("*.md", "README.md"),
            ("src/*.rs", "src/main.rs"),
            ("src/**", "src/a/b/c.rs"),
            ("**/migrations/*.sql", "db/migrations/001.sql"),
            ("**/migrations/*.sql", "migrations/001.sql"),
            ("./web/**/*.tsx", "web/app/page.tsx"),
            ("a?c", "abc"),
            ("部署/*", "部署/脚本.sh"),
        ];
        for (p, s) in yes {
            assert!(matches(p, s), "{p} !~ {s}");
        }
        let no = [
            ("*.md", "docs/a.md"),
            ("src/*.rs", "src/a/b.rs"),
            ("a?c", "ac"),
            ("web/**/*.tsx", "api/x.tsx"),
        ];
        for (p, s) in no {
            assert!(!matches(p, s), "{p} ~ {s}");
        }
    }
}
