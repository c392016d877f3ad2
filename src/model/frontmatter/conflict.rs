//! Git's conflict markers left in a file: a `<<<<<<< ` line, then a
//! `=======` line, then a `>>>>>>> ` line, as `git merge` writes them. Lines
//! inside a fenced code block are text (a memory may document the markers),
//! so only the git shape outside fences counts.

/// Where an unresolved conflict is: the 1-based lines of its `<<<<<<<` and
/// `>>>>>>>` markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    pub start: usize,
    pub end: usize,
}

/// The first unresolved git conflict in `text`, outside fenced code blocks.
pub fn find(text: &str) -> Option<Conflict> {
    // Most files hold no marker at all: one search, no line walk.
    if !text.contains("<<<<<<<") {
        return None;
    }
    let mut fence: Option<(u8, usize)> = None;
    let mut start = None;
    let mut divided = false;
    for (i, line) in text.lines().enumerate() {
        if let Some((ch, len)) = fence {
            if closes(line, ch, len) {
                fence = None;
            }
            continue;
        }
        if let Some(opened) = opens(line) {
            fence = Some(opened);
            continue;
        }
        if marker(line, b'<') {
            start = Some(i + 1);
            divided = false;
        } else if start.is_some() && line == "=======" {
            divided = true;
        } else if divided && marker(line, b'>') {
            return start.map(|start| Conflict { start, end: i + 1 });
        }
    }
    None
}

/// Seven `c` and then a space and a label, or nothing.
fn marker(line: &str, c: u8) -> bool {
    let b = line.as_bytes();
    b.len() >= 7 && b[..7].iter().all(|&x| x == c) && (b.len() == 7 || b[7] == b' ')
}

/// The fence a line opens (its character and length): up to three spaces,
/// then three or more backticks or tildes (a backtick fence's info string
/// holds no backtick).
fn opens(line: &str) -> Option<(u8, usize)> {
    let (_, rest) = split_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 || (ch == b'`' && rest[len..].contains('`')) {
        return None;
    }
    Some((ch, len))
}

/// True when `line` closes a fence of `len` `ch`: up to three spaces, at
/// least as many of the same character, nothing else but spaces.
fn closes(line: &str, ch: u8, len: usize) -> bool {
    let Some((_, rest)) = split_indent(line) else { return false };
    let n = rest.bytes().take_while(|&b| b == ch).count();
    n >= len && rest[n..].trim().is_empty()
}

/// A line's indentation (at most three spaces) and the rest.
fn split_indent(line: &str) -> Option<(usize, &str)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    (indent <= 3).then(|| (indent, &line[indent..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MERGED: &str = "---\ntitle: Orm\n---\nWe use\n<<<<<<< HEAD\nDrizzle.\n=======\nPrisma.\n>>>>>>> feature\nfor the ORM.\n";

    #[test]
    fn git_markers_are_found_with_their_lines() {
        assert_eq!(find(MERGED), Some(Conflict { start: 5, end: 9 }));
        let diff3 = "a\n<<<<<<< ours\nx\n||||||| base\nw\n=======\ny\n>>>>>>> theirs\n";
        assert_eq!(find(diff3), Some(Conflict { start: 2, end: 8 }));
        let crlf = MERGED.replace('\n', "\r\n");
        assert_eq!(find(&crlf), Some(Conflict { start: 5, end: 9 }));
    }

    #[test]
    fn markers_in_a_fenced_block_are_text() {
        for fence in ["```", "~~~", "````text", "   ```"] {
            let close = fence.trim().trim_end_matches("text");
            let doc = format!(
                "A merge leaves:\n\n{fence}\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n{close}\n\nResolve it.\n"
            );
            assert_eq!(find(&doc), None, "{doc}");
        }
    }

    #[test]
    fn a_partial_or_misshapen_set_is_not_a_conflict() {
        for text in [
            "<<<<<<< HEAD\nonly the start\n",
            "<<<<<<< HEAD\nx\n>>>>>>> b\n",
            "=======\n<<<<<<< HEAD\n>>>>>>> b\n",
            "<<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n",
            "<<<<<<<HEAD\nx\n=======\ny\n>>>>>>> b\n",
            "Use `<<<<<<< HEAD` to spot it.\n=======\n",
            "    <<<<<<< HEAD\n    x\n    =======\n    >>>>>>> b\n",
        ] {
            assert_eq!(find(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_conflict_after_a_closed_fence_is_found() {
        let text = "```\n<<<<<<< a\n```\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n";
        assert_eq!(find(text), Some(Conflict { start: 4, end: 8 }));
    }
}
