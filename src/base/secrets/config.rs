//! Credentials in the shapes of configuration files and signed URLs: a
//! `.netrc` `password`, a docker `config.json` `"auth"` value, a
//! HashiCorp Vault token, a Twilio API key, a Power Automate (Teams
//! Workflows) trigger URL and its signature.

/// Hosts whose trigger URLs carry their own signature (`sig=`): anyone
/// holding one can post as the workflow.
const SIGNED_TRIGGERS: &[&str] = &["logic.azure.com", "api.powerplatform.com"];

/// Words standing in for a password where one would be (`user:password@`,
/// `password changeme`): not a credential.
pub(super) const URL_PLACEHOLDERS: &[&str] =
    &["password", "pass", "passwd", "pwd", "secret", "changeme", "redacted", "token", "xxx"];

/// The `.netrc` keywords that take a value.
const NETRC_KEYS: &[&str] = &["login", "password", "account", "port"];

/// A Power Automate / Teams Workflows trigger URL with its signature.
pub(super) fn signed_trigger(line: &str) -> Option<&'static str> {
    if !SIGNED_TRIGGERS.iter().any(|h| line.contains(h)) {
        return None;
    }
    let mut from = 0;
    while let Some(at) = line[from..].find("sig=") {
        let start = from + at + 4;
        from = start;
        let before = line[..start - 4].chars().next_back();
        if !matches!(before, Some('&' | '?')) {
            continue;
        }
        let sig: String = line[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "_-%".contains(*c))
            .collect();
        if sig.len() >= 30 && sig.chars().any(|c| c.is_ascii_digit()) {
            return Some("a Teams Workflows (Power Automate) webhook URL");
        }
    }
    None
}

/// A HashiCorp Vault service, batch or recovery token (`hvs.…`, `hvb.…`,
/// `hvr.…`), given the parts of a dotted word.
pub(super) fn vault_token(parts: &[&str]) -> Option<&'static str> {
    let [prefix, rest] = parts else { return None };
    let token = matches!(*prefix, "hvs" | "hvb" | "hvr")
        && rest.len() >= 24
        && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && rest.chars().any(|c| c.is_ascii_digit())
        && rest.chars().any(|c| c.is_ascii_alphabetic());
    token.then_some("a HashiCorp Vault token")
}

/// A Twilio API key: `SK` and 32 hexadecimal digits. (An account's `AC…`
/// SID has the same shape but names the account; it grants nothing.)
pub(super) fn twilio_key(word: &str) -> Option<&'static str> {
    let hex = word.strip_prefix("SK")?;
    let key = hex.len() == 32
        && hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        && hex.chars().any(|c| c.is_ascii_digit())
        && hex.chars().any(|c| c.is_ascii_alphabetic());
    key.then_some("a Twilio API key")
}

/// `machine HOST login USER password PASS` (or `default …`), or a `.netrc`
/// line of its own: `password PASS`.
pub(super) fn netrc(line: &str) -> Option<&'static str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let real = |v: &str| {
        let v = v.trim_matches(['"', '\'']);
        v.len() >= 2
            && !v.starts_with(['$', '<', '{', '*', '['])
            && !URL_PLACEHOLDERS.contains(&v.to_lowercase().as_str())
    };
    // A line of its own: the value must look like one (a digit or a sign),
    // so that "password protected" stays prose.
    if let ["password", value] = words.as_slice() {
        let v = value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        let marked = v.chars().any(|c| c.is_ascii_digit() || "!#%&*+=@^~_-".contains(c));
        return (real(v) && v.len() >= 6 && marked).then_some("a .netrc password");
    }
    for (i, w) in words.iter().enumerate() {
        let pairs_from = match *w {
            "machine" => i + 2,
            "default" => i + 1,
            "login" => i,
            _ => continue,
        };
        if *w == "machine" && words.get(i + 1).is_none_or(|h| NETRC_KEYS.contains(h)) {
            continue;
        }
        let mut k = pairs_from;
        while let (Some(key), Some(value)) = (words.get(k), words.get(k + 1)) {
            if !NETRC_KEYS.contains(key) || NETRC_KEYS.contains(value) {
                break;
            }
            if *key == "password" && real(value) {
                return Some("a .netrc password");
            }
            k += 2;
        }
    }
    None
}

/// A docker `config.json` `"auth": "<base64 of user:password>"`.
pub(super) fn docker_auth(line: &str) -> Option<&'static str> {
    let mut from = 0;
    while let Some(at) = line[from..].find("\"auth\"") {
        from += at + 6;
        let Some(rest) = line[from..].trim_start().strip_prefix(':') else { continue };
        let Some(rest) = rest.trim_start().strip_prefix('"') else { continue };
        let value = &rest[..rest.find('"').unwrap_or(rest.len())];
        let decoded = base64(value).unwrap_or_default();
        let pair = decoded.iter().position(|&b| b == b':').filter(|&at| at + 1 < decoded.len());
        if pair.is_some() {
            return Some("a docker registry login (\"auth\")");
        }
    }
    None
}

/// Standard base64 (padding optional); `None` when `s` is not that.
fn base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_what_docker_writes() {
        assert_eq!(base64("dXNlcjpwYXNz").unwrap(), b"user:pass");
        assert_eq!(base64("YWxpY2U6czNjcmV0IQ==").unwrap(), b"alice:s3cret!");
        assert!(base64("not base64!").is_none());
    }

    #[test]
    fn a_docker_auth_needs_a_user_and_a_password() {
        assert!(docker_auth(r#""auth": "dXNlcjpwYXNz""#).is_some());
        assert!(docker_auth(r#""auth": """#).is_none());
        assert!(docker_auth(r#""auth": "dXNlcjo=""#).is_none(), "user: and no password");
    }
}
