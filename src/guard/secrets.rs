//! Credentials in text: private keys, cloud and provider tokens,
//! `password=`-style assignments, and high-entropy strings next to
//! `key` / `token` / `secret`. Project memory is committed to git, so a
//! finding refuses the write unless the user says otherwise.

/// One suspected secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line within the scanned text.
    pub line: usize,
    pub what: &'static str,
}

/// Token prefixes of common providers, with the minimum length of the rest
/// and what they are.
const PREFIXES: &[(&str, usize, &str)] = &[
    ("AKIA", 16, "an AWS access key id"),
    ("ASIA", 16, "an AWS temporary access key id"),
    ("ghp_", 30, "a GitHub token"),
    ("gho_", 30, "a GitHub token"),
    ("ghu_", 30, "a GitHub token"),
    ("ghs_", 30, "a GitHub token"),
    ("ghr_", 30, "a GitHub token"),
    ("github_pat_", 22, "a GitHub token"),
    ("glpat-", 20, "a GitLab token"),
    ("xoxb-", 10, "a Slack token"),
    ("xoxp-", 10, "a Slack token"),
    ("xoxa-", 10, "a Slack token"),
    ("sk-ant-", 20, "an Anthropic API key"),
    ("sk-proj-", 20, "an OpenAI API key"),
    ("sk-", 32, "an API secret key"),
    ("sk_live_", 20, "a Stripe secret key"),
    ("rk_live_", 20, "a Stripe restricted key"),
    ("AIza", 35, "a Google API key"),
    ("npm_", 36, "an npm token"),
];

/// Words that make the value after them a credential.
const ASSIGNED: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "secret_key",
    "client_secret",
    "private_key",
    "密码",
];

/// Every suspected secret in `text`.
pub fn scan(text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(what) = check_line(line) {
            out.push(Finding { line: i + 1, what });
        }
    }
    out
}

fn check_line(line: &str) -> Option<&'static str> {
    if line.contains("-----BEGIN") && line.contains("PRIVATE KEY") {
        return Some("a private key block");
    }
    for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
        for (prefix, min, what) in PREFIXES {
            if let Some(rest) = word.strip_prefix(prefix)
                && rest.len() >= *min
                && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && rest.chars().any(|c| c.is_ascii_digit())
            {
                return Some(what);
            }
        }
    }
    assignment(line).or_else(|| entropy_near_keyword(line))
}

/// `password = hunter22`, `token: "abc…"`, `密码：xxx` with a real value.
fn assignment(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    for key in ASSIGNED {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(key) {
            let after = &line[from + pos + key.len()..];
            from += pos + key.len();
            let after = after.trim_start_matches(['"', '\'']).trim_start();
            let Some(value) = after.strip_prefix(['=', ':', '：']) else { continue };
            let value = value.trim().trim_matches(['"', '\'', '`', ',', ';']);
            let value = value.split_whitespace().next().unwrap_or("");
            if is_real_value(value) {
                return Some("a credential assignment");
            }
        }
    }
    None
}

/// Not empty, not a placeholder like `<token>`, `${TOKEN}`, `***`, `xxx`, `changeme`.
fn is_real_value(v: &str) -> bool {
    let placeholder = v.starts_with('<')
        || v.starts_with("${")
        || v.starts_with('$')
        || v.starts_with('{')
        || v.chars().all(|c| c == '*' || c == 'x' || c == 'X' || c == '.' || c == '…')
        || ["changeme", "example", "your", "redacted", "none", "null", "true", "false"]
            .iter()
            .any(|p| v.to_lowercase().contains(p));
    v.chars().count() >= 6 && !placeholder
}

/// A long random-looking string on a line that mentions key, token or secret.
fn entropy_near_keyword(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    if !["key", "token", "secret"].iter().any(|k| lower.contains(k)) {
        return None;
    }
    line.split(|c: char| !(c.is_ascii_alphanumeric() || "_-+/=".contains(c)))
        .filter(|w| w.len() >= 24)
        .any(|w| {
            let classes = [
                w.chars().any(|c| c.is_ascii_lowercase()),
                w.chars().any(|c| c.is_ascii_uppercase()),
                w.chars().any(|c| c.is_ascii_digit()),
            ];
            classes.iter().filter(|x| **x).count() >= 2 && entropy(w) >= 4.0
        })
        .then_some("a high-entropy string next to key/token/secret")
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_common_credentials() {
        let cases = [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "aws key AKIAIOSFODNN7EXAMPLE1 in ci",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "SLACK=xoxb-1234567890-abcdefghij",
            "export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890",
            "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "password = hunter2hunter2",
            "db: {\"password\": \"s3cr3t-Pa55\"}",
            "数据库密码：Qw3rty!234",
            "the signing secret is 9fK2mZq8Lx4vTb7Wn1Rc5Yh3Gd6Js0Ae",
        ];
        for c in cases {
            assert_eq!(scan(c).len(), 1, "{c}");
        }
        assert_eq!(scan("ok\nok\npassword=correcthorse\n")[0].line, 3);
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let cases = [
            "Secrets live in Vault; never commit them.",
            "set password=<your password> in .env",
            "TOKEN=${GITHUB_TOKEN}",
            "password: ******",
            "the api_key field is required",
            "use a key: value map for settings",
            "部署脚本用 pnpm 而不是 npm",
            "commit 3f2a9c1d7e4b5a6f8c9d0e1f2a3b4c5d6e7f8a9b fixed it",
            "skip-the-token-refresh-step-when-offline-mode",
        ];
        for c in cases {
            assert!(scan(c).is_empty(), "{c}: {:?}", scan(c));
        }
    }
}
