//! Credentials in text: private keys, cloud and provider tokens, passwords
//! inside URLs (`scheme://user:password@host`), chat webhook URLs, JSON Web
//! Tokens, `password=`-style assignments, configuration-file credentials
//! (`.netrc`, docker `"auth"`), and high-entropy strings next to
//! `key` / `token` / `secret`. Project memory is committed to git, so a
//! finding refuses the write unless the user says otherwise.
//!
//! `tests/data/credentials.txt` and `tests/data/look-alikes.txt` hold a
//! labelled corpus: every line of the first is found, none of the second.

mod config;

use config::URL_PLACEHOLDERS;

/// What a generated table or a derived summary shows instead of a field
/// that looks like a credential: generated files are committed, and read
/// by agents.
pub const WITHHELD: &str = "(withheld: looks like a credential)";

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
    ("gldt-", 20, "a GitLab deploy token"),
    ("glrt-", 20, "a GitLab runner token"),
    ("glptt-", 20, "a GitLab trigger token"),
    ("xoxb-", 10, "a Slack token"),
    ("xoxp-", 10, "a Slack token"),
    ("xoxa-", 10, "a Slack token"),
    ("xoxs-", 10, "a Slack token"),
    ("xoxr-", 10, "a Slack token"),
    ("xoxe-", 10, "a Slack token"),
    ("xapp-", 10, "a Slack app token"),
    ("sk-ant-", 20, "an Anthropic API key"),
    ("sk-proj-", 20, "an OpenAI API key"),
    ("sk-", 32, "an API secret key"),
    ("sk_live_", 20, "a Stripe secret key"),
    ("sk_test_", 20, "a Stripe secret key"),
    ("rk_live_", 20, "a Stripe restricted key"),
    ("rk_test_", 20, "a Stripe restricted key"),
    ("whsec_", 24, "a webhook signing secret"),
    ("AIza", 35, "a Google API key"),
    ("GOCSPX-", 20, "a Google OAuth client secret"),
    ("npm_", 36, "an npm token"),
    ("pypi-", 50, "a PyPI token"),
    ("hf_", 30, "a Hugging Face token"),
    ("dop_v1_", 60, "a DigitalOcean token"),
    ("doo_v1_", 60, "a DigitalOcean token"),
    ("shpat_", 32, "a Shopify token"),
    ("shpss_", 32, "a Shopify secret"),
    ("shpca_", 32, "a Shopify token"),
    ("shppa_", 32, "a Shopify token"),
    ("lin_api_", 32, "a Linear API key"),
    ("PMAK-", 40, "a Postman API key"),
    ("glc_", 30, "a Grafana token"),
    ("glsa_", 30, "a Grafana service account token"),
    ("sbp_", 36, "a Supabase token"),
    ("ATATT3", 40, "an Atlassian API token"),
    ("dapi", 32, "a Databricks token"),
    ("sq0atp-", 20, "a Square token"),
    ("sq0csp-", 30, "a Square secret"),
    ("AGE-SECRET-KEY-1", 50, "an age secret key"),
];

/// Chat webhook URLs: anyone holding one can post as the integration.
const WEBHOOKS: &[(&str, &str)] = &[
    ("hooks.slack.com/services/", "a Slack webhook URL"),
    ("hooks.slack.com/workflows/", "a Slack webhook URL"),
    ("discord.com/api/webhooks/", "a Discord webhook URL"),
    ("discordapp.com/api/webhooks/", "a Discord webhook URL"),
    ("webhook.office.com/webhookb2/", "a Microsoft Teams webhook URL"),
    ("outlook.office.com/webhook/", "a Microsoft Teams webhook URL"),
    ("api.telegram.org/bot", "a Telegram bot token"),
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
    "accountkey",
    "sharedaccesskey",
    "auth_token",
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
    // Cheap gates first: most lines of prose hold nothing any rule wants.
    let longest = line.split_whitespace().map(str::len).max().unwrap_or(0);
    let assigns = line.contains(['=', ':', '：']);
    let netrc = line.contains("password");
    if longest < 15 && !assigns && !netrc && !line.contains(" -") && !line.starts_with('-') {
        return None;
    }
    let lower = line.to_lowercase();
    let slash = line.contains('/');
    if let Some(what) = url_credentials(line)
        .or_else(|| if slash { webhook(line) } else { None })
        .or_else(|| if slash { config::signed_trigger(line) } else { None })
        .or_else(|| if longest >= 28 { dotted(line) } else { None })
        .or_else(|| command_line(line, &lower))
        .or_else(|| if netrc { config::netrc(line) } else { None })
        .or_else(|| if assigns { config::docker_auth(line) } else { None })
    {
        return Some(what);
    }
    // The shortest provider token is 15 characters (`xoxb-` and ten more).
    let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    for word in words.filter(|w| w.len() >= 15) {
        if let Some(what) = config::twilio_key(word) {
            return Some(what);
        }
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
    let assigned = if assigns { assignment(line, &lower) } else { None };
    assigned.or_else(|| if longest >= 24 { entropy_near_keyword(line, &lower) } else { None })
}

/// `scheme://user:password@host` with a real password, for any scheme.
fn url_credentials(line: &str) -> Option<&'static str> {
    let mut from = 0;
    while let Some(at) = line[from..].find("://") {
        let start = from + at + 3;
        from = start;
        let rest = &line[start..];
        // Up to the end of the word: a password may hold `/`, `#` or `?`.
        let end = rest.find(|c: char| c.is_whitespace() || "\"'<>`".contains(c));
        let word = &rest[..end.unwrap_or(rest.len())];
        let Some((userinfo, host)) = word.rsplit_once('@') else { continue };
        let Some((user, password)) = userinfo.split_once(':') else { continue };
        if host.is_empty() || password.is_empty() || user.contains('/') {
            continue;
        }
        let lower = password.to_lowercase();
        let template =
            |open: &str, close: char| password.starts_with(open) && password.ends_with(close);
        let placeholder = password.starts_with(['$', '<', '{'])
            || template("[", ']')
            || template("%(", 's')
            || password == "%s"
            || password.chars().all(|c| c == '*' || c == 'x' || c == 'X' || c == '.' || c == '…')
            || URL_PLACEHOLDERS.contains(&lower.as_str());
        if !placeholder {
            return Some("a password inside a URL");
        }
    }
    None
}

/// A bearer token, or a password given on a command line (`curl -u
/// user:pass`, `mysql -pPASS`, `sshpass -p PASS`, `--password=PASS`).
fn command_line(line: &str, lower: &str) -> Option<&'static str> {
    if !lower.contains("bearer") && !line.contains(" -") && !line.starts_with('-') {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let real = |v: &str| {
        let v = v.trim_matches(['"', '\'']);
        v.len() >= 2
            && !v.starts_with(['$', '<', '{', '*'])
            && !URL_PLACEHOLDERS.contains(&v.to_lowercase().as_str())
    };
    let mysql =
        words.iter().any(|x| matches!(*x, "mysql" | "mysqldump" | "mariadb" | "mysqladmin"));
    let sshpass = words.iter().any(|x| *x == "sshpass" || x.ends_with("/sshpass"));
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        if w.eq_ignore_ascii_case("bearer") {
            let token = next.trim_matches(['"', '\'', ',']);
            let mixed = token.chars().any(|c| c.is_ascii_digit())
                && token.chars().any(|c| c.is_ascii_alphabetic());
            if token.len() >= 20 && mixed && !token.starts_with(['$', '<', '{']) {
                return Some("a bearer token");
            }
        }
        let user_pass =
            (*w == "-u" || *w == "--user") && next.split_once(':').is_some_and(|(_, p)| real(p));
        let short = mysql && w.strip_prefix("-p").is_some_and(|p| !p.is_empty() && real(p));
        let long = w.strip_prefix("--password=").is_some_and(real);
        let sshpass = sshpass
            && (*w == "-p" && real(next)
                || w.strip_prefix("-p").is_some_and(|p| p.len() >= 2 && real(p)));
        if user_pass || short || long || sshpass {
            return Some("a password on a command line");
        }
    }
    None
}

/// A chat webhook URL with its secret path.
fn webhook(line: &str) -> Option<&'static str> {
    WEBHOOKS.iter().find_map(|(marker, what)| {
        let at = line.find(marker)?;
        let secret = &line[at + marker.len()..];
        let secret: String = secret
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/_-:".contains(*c))
            .collect();
        let real = secret.chars().filter(char::is_ascii_alphanumeric).count() >= 20
            && secret.chars().any(|c| c.is_ascii_digit());
        real.then_some(*what)
    })
}

/// Tokens with dots inside: SendGrid keys, Google OAuth access tokens,
/// HashiCorp Vault tokens, JSON Web Tokens.
fn dotted(line: &str) -> Option<&'static str> {
    let b64 = |s: &str, min: usize| {
        s.len() >= min && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    // The shortest of them is 28 characters (`hvs.` and twenty-four more).
    let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || "_-.".contains(c)));
    for word in words.filter(|w| w.len() >= 28 && w.contains('.')) {
        let parts: Vec<&str> = word.split('.').collect();
        if let Some(what) = config::vault_token(&parts) {
            return Some(what);
        }
        match parts.as_slice() {
            ["SG", a, b] if b64(a, 16) && b64(b, 30) => return Some("a SendGrid API key"),
            ["ya29", rest @ ..] if rest.iter().map(|p| p.len()).sum::<usize>() >= 30 => {
                return Some("a Google OAuth access token");
            }
            [h, p, s]
                if h.starts_with("eyJ")
                    && p.starts_with("eyJ")
                    && b64(h, 10)
                    && b64(p, 10)
                    && b64(s, 16) =>
            {
                return Some("a JSON Web Token");
            }
            _ => {}
        }
    }
    None
}

/// `password = hunter22`, `token: "abc…"`, `密码：xxx` with a real value.
fn assignment(line: &str, lower: &str) -> Option<&'static str> {
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
        // Words in a CJK script are a sentence ("ask ops for it"), not a password.
        || v.chars().any(|c| ('\u{3040}'..='\u{9fff}').contains(&c) || ('\u{ac00}'..='\u{d7af}').contains(&c))
        || ["changeme", "example", "your", "redacted", "none", "null", "true", "false"]
            .iter()
            .any(|p| v.to_lowercase().contains(p));
    v.chars().count() >= 6 && !placeholder
}

/// A long random-looking string on a line that mentions key, token or secret.
fn entropy_near_keyword(line: &str, lower: &str) -> Option<&'static str> {
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

    fn corpus(text: &str) -> impl Iterator<Item = &str> {
        text.lines().filter(|l| !l.is_empty() && !l.starts_with("# "))
    }

    #[test]
    fn the_labelled_corpus_has_no_miss_and_no_false_alarm() {
        let credentials = include_str!("../../../tests/data/credentials.txt");
        let look_alikes = include_str!("../../../tests/data/look-alikes.txt");
        assert!(corpus(credentials).count() >= 40 && corpus(look_alikes).count() >= 40);
        let missed: Vec<&str> = corpus(credentials).filter(|l| scan(l).is_empty()).collect();
        let alarms: Vec<&str> = corpus(look_alikes).filter(|l| !scan(l).is_empty()).collect();
        assert!(missed.is_empty(), "missed: {missed:#?}");
        assert!(alarms.is_empty(), "false alarms: {alarms:#?}");
    }

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
