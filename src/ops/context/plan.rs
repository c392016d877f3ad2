//! ROOT.md's hand-written text as the agent gets it: outside the generated
//! regions, without HTML comments, template placeholders (`- (…)`) and the
//! template's own explanations, and without headings left with nothing
//! under them. An unedited template says nothing.

const TEMPLATES: [&str; 4] = [
    include_str!("../../../templates/root.en.md"),
    include_str!("../../../templates/root.zh.md"),
    include_str!("../../../templates/root.global.en.md"),
    include_str!("../../../templates/root.global.zh.md"),
];

/// The plan in `prose` (ROOT.md outside its generated regions), or `None`
/// when nothing in it was written by a person.
pub fn plan(prose: &str) -> Option<String> {
    let text = strip_comments(prose);
    let template_line = |line: &str| {
        !line.is_empty()
            && !line.starts_with('#')
            && TEMPLATES.iter().any(|t| t.lines().any(|l| l.trim() == line))
    };
    let placeholder = |line: &str| {
        let item = line.trim_start_matches(['-', '*', '+']).trim();
        line.starts_with(['-', '*', '+'])
            && ((item.starts_with('(') && item.ends_with(')'))
                || (item.starts_with('（') && item.ends_with('）')))
    };
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !placeholder(l.trim_start()) && !template_line(l.trim()))
        .collect();
    // Drop headings with nothing under them (up to the next heading of the
    // same or a higher level), then runs of blank lines.
    let level = |l: &str| l.starts_with('#').then(|| l.chars().take_while(|&c| c == '#').count());
    let mut out: Vec<&str> = Vec::new();
    for (i, line) in kept.iter().enumerate() {
        if let Some(depth) = level(line) {
            let has_content = kept[i + 1..]
                .iter()
                .take_while(|l| level(l).is_none_or(|d| d > depth))
                .any(|l| !l.trim().is_empty() && level(l).is_none());
            if !has_content {
                continue;
            }
        }
        if line.trim().is_empty() && out.last().is_none_or(|l| l.trim().is_empty()) {
            continue;
        }
        out.push(line);
    }
    let text = out.join("\n").trim().to_string();
    // Only a title left: nothing was written.
    let words = text.lines().filter(|l| !l.trim().is_empty() && level(l).is_none()).count();
    (words > 0).then_some(text)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => {
                rest = &rest[start + end + 3..];
                // A comment on lines of its own takes its line with it.
                if out.is_empty() || out.ends_with('\n') {
                    rest = rest.strip_prefix("\r\n").or(rest.strip_prefix('\n')).unwrap_or(rest);
                }
            }
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::regions::outside;

    #[test]
    fn an_unedited_template_says_nothing() {
        for t in TEMPLATES {
            assert_eq!(plan(&outside(t).unwrap()), None, "{t}");
        }
    }

    #[test]
    fn what_a_person_wrote_is_kept_in_full() {
        let edited = TEMPLATES[0].replace(
            "- (rules every agent and person must follow; put longer ones in `rules/`)",
            "- Never push directly to main.\n<!-- a note to self -->\n- Run the tests before a merge.",
        );
        let plan = plan(&outside(&edited).unwrap()).unwrap();
        assert_eq!(
            plan,
            "# Project memory\n\n## Hard rules\n\n- Never push directly to main.\n- Run the tests before a merge."
        );
    }
}
