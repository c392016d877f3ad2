//! Text helpers of the host files: headings moved down, marker lines
//! defused, brace globs spelled out, YAML values on one line.

/// A line of a memory that reads as a region marker, written so it no
/// longer is one (`&lt;!--` shows as `<!--`): a memory that documents the
/// markers cannot end the region or open another.
pub(super) fn defuse(line: &str) -> String {
    let trimmed = line.trim_start();
    if trimmed.starts_with("<!--") && trimmed.contains("auto:") {
        line.replacen("<!--", "&lt;!--", 1)
    } else {
        line.to_string()
    }
}

/// Markdown headings moved `by` levels down (at most `######`), outside
/// code fences.
pub(super) fn demote(text: &str, by: usize) -> String {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        let level = line.chars().take_while(|&c| c == '#').count();
        if !fenced && level > 0 && line[level..].starts_with(' ') {
            let deeper = (level + by).min(6);
            out.push(format!("{}{}", "#".repeat(deeper), &line[level..]));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// `src/{a,b}/*.ts` as `src/a/*.ts` and `src/b/*.ts` (every group, nested
/// ones included); a glob without braces as it is.
pub(super) fn expand_braces(glob: &str) -> Vec<String> {
    let Some(open) = glob.find('{') else { return vec![glob.to_string()] };
    let mut depth = 0;
    let mut close = None;
    let mut cuts = Vec::new();
    for (i, c) in glob[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => cuts.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close else { return vec![glob.to_string()] };
    let (head, tail) = (&glob[..open], &glob[close + 1..]);
    let mut starts = vec![open + 1];
    starts.extend(cuts.iter().map(|c| c + 1));
    let mut ends = cuts.clone();
    ends.push(close);
    starts
        .iter()
        .zip(&ends)
        .flat_map(|(&a, &b)| expand_braces(&format!("{head}{}{tail}", &glob[a..b])))
        .collect()
}

/// A body without its first heading when that heading is the title.
pub(super) fn strip_title(body: &str, title: &str) -> String {
    let trimmed = body.trim_start();
    let first = trimmed.lines().next().unwrap_or("");
    if first.starts_with('#') && first.trim_start_matches('#').trim() == title.trim() {
        trimmed[first.len()..].trim_start().to_string()
    } else {
        body.to_string()
    }
}

pub(super) fn one_line(s: &str) -> String {
    crate::base::text::flat(s).into_owned()
}

/// A YAML scalar on one line, quoted.
pub(super) fn yaml_line(s: &str) -> String {
    serde_json::to_string(&one_line(s)).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_move_down_outside_code_only() {
        let text = "# A\n\n```sh\n# not a heading\n```\n## B\n#tag\n";
        assert_eq!(demote(text, 2), "### A\n\n```sh\n# not a heading\n```\n#### B\n#tag");
        assert_eq!(demote("##### deep", 4), "###### deep");
    }

    #[test]
    fn a_body_loses_only_a_first_heading_that_repeats_the_title() {
        assert_eq!(strip_title("# Use pnpm\n\nText.", "Use pnpm"), "Text.");
        assert_eq!(strip_title("# Other\n\nText.", "Use pnpm"), "# Other\n\nText.");
    }

    #[test]
    fn brace_groups_are_spelled_out_for_cursor() {
        assert_eq!(expand_braces("src/{a,b}/*.ts"), ["src/a/*.ts", "src/b/*.ts"]);
        assert_eq!(expand_braces("{x,y{1,2}}.md"), ["x.md", "y1.md", "y2.md"]);
        assert_eq!(expand_braces("plain/**"), ["plain/**"]);
        assert_eq!(expand_braces("open{a,b"), ["open{a,b"]);
    }

    #[test]
    fn yaml_values_stay_on_one_quoted_line() {
        assert_eq!(yaml_line("a: b\nc"), "\"a: b c\"");
    }
}
