//! `docs/json.md` is the contract of `--json`: each command it shows is run,
//! in order, on a copy of the demo tree, and its JSON must have exactly the
//! names the document shows, at every level. `MEM_BLESS=1` rewrites the
//! examples from the real output.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::env::Env;
use crate::readme::shell_words;

/// Maps whose keys are data, not names (said so in the document).
const DATA_MAPS: [&str; 7] =
    ["by_category", "by_kind", "by_role", "by_tag", "categories", "frontmatter", "actions"];

fn doc_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md")
}

/// (command line, JSON block's first and last line index) per section.
fn sections(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut command: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("### `").and_then(|r| r.strip_suffix('`')) {
            command = Some(rest.to_string());
        } else if line == "```json" {
            let start = i + 1;
            let end = start + lines[start..].iter().position(|l| *l == "```").unwrap();
            out.push((
                command.take().expect("a ### `mem …` heading before each example"),
                start,
                end,
            ));
            i = end;
        }
        i += 1;
    }
    out
}

/// Where `actual`'s names differ from `doc`'s, as `at.path: what`.
fn differences(at: &str, doc: &Value, actual: &Value, out: &mut Vec<String>) {
    match (doc, actual) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(d), Value::Object(a)) => {
            let key = at.rsplit('.').next().unwrap_or("");
            if DATA_MAPS.contains(&key) {
                return;
            }
            for k in d.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{at}.{k}: in the document, not in the output"));
            }
            for k in a.keys().filter(|k| !d.contains_key(*k)) {
                out.push(format!("{at}.{k}: in the output, not in the document"));
            }
            for (k, dv) in d {
                if let Some(av) = a.get(k) {
                    differences(&format!("{at}.{k}"), dv, av, out);
                }
            }
        }
        (Value::Array(d), Value::Array(a)) => {
            if let (Some(dv), Some(av)) = (d.first(), a.first()) {
                differences(&format!("{at}[0]"), dv, av, out);
            }
        }
        (d, a) if std::mem::discriminant(d) == std::mem::discriminant(a) => {}
        (Value::Number(_), Value::Number(_)) => {}
        (d, a) => out.push(format!("{at}: {} in the document, {} in the output", kind(d), kind(a))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The output as the document shows it: one element per array, a few
/// keys per data map, long text cut.
fn shorten(key: &str, v: &Value) -> Value {
    match v {
        Value::Array(list) => Value::Array(list.iter().take(1).map(|x| shorten(key, x)).collect()),
        Value::Object(map) => {
            let keep = if DATA_MAPS.contains(&key) { 3 } else { usize::MAX };
            Value::Object(map.iter().take(keep).map(|(k, x)| (k.clone(), shorten(k, x))).collect())
        }
        Value::String(s) if s.chars().count() > 72 => {
            Value::from(format!("{}…", s.chars().take(72).collect::<String>()))
        }
        other => other.clone(),
    }
}

#[test]
fn every_command_in_docs_json_md_writes_the_names_it_shows() {
    let env = Env::with_fixture("demo");
    let work = env.work();
    let git = Command::new("git").current_dir(&work).args(["init", "-q"]).output().unwrap();
    assert!(git.status.success());
    let text = std::fs::read_to_string(doc_path()).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let bless = std::env::var_os("MEM_BLESS").is_some();
    let mut problems = Vec::new();
    let mut commands = std::collections::BTreeSet::new();
    // Replaced from the end, so earlier line numbers stay right.
    let mut blessed = Vec::new();
    for (line, start, end) in sections(&text) {
        let words = shell_words(&line);
        assert_eq!(words[0], "mem", "{line}");
        let out = env.process(&words[1..]).env("VISUAL", "true").output().unwrap();
        let actual: Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => panic!("{line}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)),
        };
        commands.insert(actual["schema"].as_str().unwrap_or("").to_string());
        let doc: Value = serde_json::from_str(&lines[start..end].join("\n"))
            .unwrap_or_else(|e| panic!("{line}: the document's example is not JSON: {e}"));
        let mut found = Vec::new();
        differences("", &doc, &actual, &mut found);
        problems.extend(found.into_iter().map(|d| format!("`{line}`: {d}")));
        // Paths as a reader's would be, so a rewrite changes only what changed.
        let shown = serde_json::to_string_pretty(&shorten("", &actual)).unwrap();
        let shown = shown
            .replace(&env.work().display().to_string(), "/home/you/shop")
            .replace(&env.global().display().to_string(), "/home/you/.config/mem/memory")
            .replace(&env.tmp.path().join("home").display().to_string(), "/home/you");
        blessed.push((start, end, shown));
    }
    if bless {
        for (start, end, json) in blessed.into_iter().rev() {
            lines.splice(start..end, json.lines().map(String::from));
        }
        std::fs::write(doc_path(), lines.join("\n") + "\n").unwrap();
        return;
    }
    assert!(problems.is_empty(), "docs/json.md differs:\n{}", problems.join("\n"));
    // Every command that writes JSON is in the document.
    for name in [
        "recall", "list", "inspect", "stats", "context", "prompt", "remember", "history", "edit",
        "forget", "trash", "restore", "rename", "lint", "compile", "clean", "export", "import",
        "init", "trust", "untrust", "hook", "model", "setup", "doctor", "error",
    ] {
        let schema = if name == "export" { "mem-export/1".into() } else { format!("mem-{name}/1") };
        assert!(commands.contains(&schema), "docs/json.md shows no `{name}`: {commands:?}");
    }
}
