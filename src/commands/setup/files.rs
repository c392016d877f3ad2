//! The host configuration files `mem setup` writes: a JSON file with one
//! entry merged in, a file mem owns whole (marked on its first line), a
//! TOML table appended. Each change is planned first (the text before and
//! after), so `--dry-run` shows it and a second run finds nothing to do.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::base::error::{Error, Result};
use crate::store::files::{self, Links, Refusal};

/// A host's configuration file is never this big.
const MAX_BYTES: u64 = 4 << 20;

/// One file as it is and as setup would leave it.
#[derive(Debug)]
pub struct Change {
    pub file: PathBuf,
    pub before: Option<String>,
    pub after: String,
    /// What was left as it is, and why (another entry of that name).
    pub kept: Option<String>,
}

impl Change {
    /// `created`, `updated`, `unchanged`, or `kept`.
    pub fn action(&self) -> &'static str {
        match (&self.before, &self.kept) {
            (_, Some(_)) => "kept",
            (Some(b), _) if *b == self.after => "unchanged",
            (Some(_), _) => "updated",
            (None, _) => "created",
        }
    }
}

/// A file's text, `None` when it does not exist; a link, a folder, a FIFO
/// or a file that is not UTF-8 is refused, naming it.
pub fn read(top: &Path, file: &Path) -> Result<Option<String>> {
    match files::read_text(top, file, Links::Never, MAX_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(Some(Refusal::Missing)) => Ok(None),
        Err(why) => Err(Error::input(format!(
            "{}: {}",
            file.display(),
            why.map_or_else(|| "is not valid UTF-8".to_string(), |r| r.to_string())
        ))
        .hint("mem setup writes only regular files; move this one out of the way")),
    }
}

impl Change {
    /// `file` as it is: nothing changed yet.
    pub fn of(top: &Path, file: &Path) -> Result<Change> {
        let before = read(top, file)?;
        let after = before.clone().unwrap_or_default();
        Ok(Change { file: file.to_path_buf(), before, after, kept: None })
    }

    /// The JSON as it would be now (an empty or new file is `{}`).
    fn json(&self, hint: &str) -> Result<Value> {
        if self.after.trim().is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        serde_json::from_str(&self.after).map_err(|e| {
            Error::input(format!(
                "{}:{}: not JSON mem can merge into: {e}",
                self.file.display(),
                e.line()
            ))
            .hint(hint.to_string())
        })
    }

    /// Take `doc` as the new text, unless it means what the text says
    /// already: then the file stays byte for byte.
    fn set_json(&mut self, doc: &Value) {
        let same = serde_json::from_str::<Value>(&self.after).is_ok_and(|v| v == *doc);
        if !same {
            self.after = format!("{}\n", serde_json::to_string_pretty(doc).unwrap_or_default());
        }
    }

    /// Set `entry` at `path` (keys from the top), unless something is there
    /// already: the same entry (nothing to do), or another one (kept, and said).
    pub fn json_entry(&mut self, path: &[&str], entry: Value) -> Result<()> {
        let hint = format!(
            "add this under {} by hand: {}",
            path.join("."),
            serde_json::to_string(&entry).unwrap_or_default()
        );
        let mut doc = self.json(&hint)?;
        let (last, parents) = path.split_last().expect("a path");
        let mut at = &mut doc;
        for key in parents {
            let Value::Object(map) = at else { return Err(self.not_an_object(key)) };
            at = map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
        }
        let Value::Object(map) = at else { return Err(self.not_an_object(last)) };
        match map.get(*last) {
            Some(there) if *there == entry => {}
            Some(_) => {
                self.kept = Some(format!(
                    "{} already has another `{}`; left as it is",
                    self.file.display(),
                    path.join(".")
                ));
            }
            None => {
                map.insert(last.to_string(), entry);
            }
        }
        self.set_json(&doc);
        Ok(())
    }

    /// Add `group` to the hooks of `event` unless a hook running `command`
    /// is there already (Claude Code's `hooks` layout).
    pub fn json_hook(&mut self, event: &str, group: Value, command: &str) -> Result<()> {
        let mut doc =
            self.json("fix the file, or add the hooks `mem setup --dry-run` shows by hand")?;
        let Value::Object(map) = &mut doc else { return Err(self.not_an_object("hooks")) };
        let hooks = map.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(hooks) = hooks else { return Err(self.not_an_object("hooks")) };
        let groups = hooks.entry(event.to_string()).or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else { return Err(self.not_an_object(event)) };
        let present = groups.iter().any(|g| {
            g["hooks"].as_array().is_some_and(|hs| hs.iter().any(|h| h["command"] == command))
        });
        if !present {
            groups.push(group);
        }
        self.set_json(&doc);
        Ok(())
    }

    fn not_an_object(&self, key: &str) -> Error {
        Error::input(format!("{}: `{key}` is not what its host expects there", self.file.display()))
            .hint("fix the file by hand, then run `mem setup` again")
    }
}

/// `file` whole, as mem writes it: replaced only when its first line is
/// `mark` (mem wrote it), refused when another program's file is there.
pub fn owned(top: &Path, file: &Path, mark: &str, text: &str) -> Result<Change> {
    let before = read(top, file)?;
    if let Some(b) = &before
        && b.lines().next() != Some(mark)
    {
        return Err(Error::input(format!("{} exists and was not written by mem", file.display()))
            .hint("move it away (or remove it), then run `mem setup` again"));
    }
    Ok(Change { file: file.to_path_buf(), before, after: text.to_string(), kept: None })
}

/// `file` (TOML) with `table` appended unless a table with its header
/// line is there already.
pub fn toml_table(top: &Path, file: &Path, table: &str) -> Result<Change> {
    let before = read(top, file)?;
    let header = table.lines().next().unwrap_or_default();
    let text = before.clone().unwrap_or_default();
    if text.lines().any(|l| l.trim() == header) {
        return Ok(Change { file: file.to_path_buf(), before, after: text, kept: None });
    }
    let mut after = text;
    if !after.is_empty() && !after.ends_with('\n') {
        after.push('\n');
    }
    if !after.is_empty() {
        after.push('\n');
    }
    after.push_str(table);
    Ok(Change { file: file.to_path_buf(), before, after, kept: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_merges_once_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "{\n  \"theme\": \"dark\"\n}\n").unwrap();
        let entry = json!({"command": "mem", "args": ["mcp"]});
        let mut change = Change::of(dir.path(), &file).unwrap();
        change.json_entry(&["mcpServers", "mem"], entry.clone()).unwrap();
        assert_eq!(change.action(), "updated");
        let after: Value = serde_json::from_str(&change.after).unwrap();
        assert_eq!(after, json!({"theme": "dark", "mcpServers": {"mem": entry}}));
        std::fs::write(&file, &change.after).unwrap();
        let mut again = Change::of(dir.path(), &file).unwrap();
        again.json_entry(&["mcpServers", "mem"], entry).unwrap();
        assert_eq!(again.action(), "unchanged");
        assert_eq!(again.after, again.before.clone().unwrap(), "not a byte changes");
        let mut other = Change::of(dir.path(), &file).unwrap();
        other.json_entry(&["mcpServers", "mem"], json!({"command": "x"})).unwrap();
        assert_eq!(other.action(), "kept");
    }

    #[test]
    fn hooks_are_added_once_beside_others() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let theirs = json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}});
        std::fs::write(&file, theirs.to_string()).unwrap();
        let ours = json!({"hooks": [{"type": "command", "command": "mem context --hook"}]});
        let mut change = Change::of(dir.path(), &file).unwrap();
        change.json_hook("SessionStart", ours.clone(), "mem context --hook").unwrap();
        change.json_hook("SessionStart", ours, "mem context --hook").unwrap();
        let after: Value = serde_json::from_str(&change.after).unwrap();
        assert_eq!(after["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
        assert_eq!(after["hooks"]["SessionStart"][0]["hooks"][0]["command"], "echo hi");
    }

    #[test]
    fn a_table_is_appended_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "model = \"o3\"").unwrap();
        let table = "[mcp_servers.mem]\ncommand = \"mem\"\n";
        let change = toml_table(dir.path(), &file, table).unwrap();
        assert_eq!(change.after, format!("model = \"o3\"\n\n{table}"));
        std::fs::write(&file, &change.after).unwrap();
        assert_eq!(toml_table(dir.path(), &file, table).unwrap().action(), "unchanged");
    }
}
