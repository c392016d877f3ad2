//! Quality warnings for a memory's text: too short, transient, vague, or
//! mostly code. Warnings, never refusals. The word lists live here.

use crate::base::text::is_cjk;

/// A memory shorter than this many letters, digits or CJK characters is too short.
pub const MIN_MEANINGFUL: usize = 10;

/// Phrases that describe a passing state rather than something that stays true.
pub const TRANSIENT: &[&str] = &[
    "currently",
    "right now",
    "at the moment",
    "for now",
    "as of today",
    "this week",
    "today",
    "正在",
    "目前",
    "现在",
    "暂时",
    "今天",
    "这周",
];

/// Hedges that make a memory unreliable.
pub const VAGUE: &[&str] = &[
    "maybe",
    "probably",
    "perhaps",
    "possibly",
    "i think",
    "not sure",
    "might be",
    "可能",
    "大概",
    "也许",
    "好像",
    "似乎",
    "不确定",
];

/// The warnings for `text` (frontmatter summary and body together).
pub fn check(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let meaningful = text.chars().filter(|c| c.is_alphanumeric() || is_cjk(*c)).count();
    if meaningful < MIN_MEANINGFUL {
        out.push(format!(
            "too short ({meaningful} letters): say what is true, why, and when it applies"
        ));
    }
    if let Some(word) = find_phrase(text, TRANSIENT) {
        out.push(format!(
            "reads like passing state (`{word}`): keep what stays true, or date it explicitly"
        ));
    }
    if let Some(word) = find_phrase(text, VAGUE) {
        out.push(format!("vague (`{word}`): say what is known, or check before saving"));
    }
    if is_code_dump(text) {
        out.push(
            "mostly code: save the why and where to look, not code that can be read from the repo"
                .into(),
        );
    }
    out
}

/// The first phrase of `list` found in `text`: Latin phrases on word
/// boundaries (so `currently` is not found in `concurrently`), CJK as substrings.
pub fn find_phrase<'a>(text: &str, list: &[&'a str]) -> Option<&'a str> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() || is_cjk(c))
        .filter(|w| !w.is_empty())
        .collect();
    list.iter().copied().find(|phrase| {
        if phrase.chars().any(is_cjk) {
            return lower.contains(phrase);
        }
        let parts: Vec<&str> = phrase.split(' ').collect();
        words.windows(parts.len()).any(|w| w == parts.as_slice())
    })
}

/// More than 60 % of at least six non-blank lines are code.
fn is_code_dump(text: &str) -> bool {
    let mut fenced = false;
    let (mut code, mut total) = (0, 0);
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if t.is_empty() {
            continue;
        }
        total += 1;
        let looks_like_code = line.starts_with("    ")
            || line.starts_with('\t')
            || t.ends_with(';')
            || t.ends_with('{')
            || t == "}"
            || t.starts_with("//");
        if fenced || looks_like_code {
            code += 1;
        }
    }
    total >= 6 && code * 10 > total * 6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_each_kind_of_weak_text() {
        assert!(check("ok")[0].starts_with("too short"));
        assert!(
            check("We are currently migrating the orders table to v2")
                .iter()
                .any(|w| w.contains("`currently`"))
        );
        assert!(
            check("目前正在迁移订单表到新的数据库集群").iter().any(|w| w.contains("passing state"))
        );
        assert!(
            check("The cache is probably invalidated on deploy")
                .iter()
                .any(|w| w.contains("`probably`"))
        );
        assert!(check("缓存可能在部署时失效，需要进一步确认").iter().any(|w| w.contains("`可能`")));
        let code = "```ts\nconst a = 1;\nconst b = 2;\nfunction f() {\n  return a + b;\n}\nexport { f };\n```\n";
        assert!(check(code).iter().any(|w| w.starts_with("mostly code")));
    }

    #[test]
    fn good_text_passes() {
        assert!(check("Deploys use pnpm, never npm: npm writes a different lockfile.").is_empty());
        assert!(check("部署脚本用 pnpm 而不是 npm，因为 npm 会生成不同的 lockfile。").is_empty());
        assert!(
            check("Writes happen concurrently across shards; each shard locks its own rows.")
                .is_empty()
        );
    }

    #[test]
    fn lists_are_lowercase() {
        for w in TRANSIENT.iter().chain(VAGUE) {
            assert_eq!(*w, w.to_lowercase());
        }
    }
}
