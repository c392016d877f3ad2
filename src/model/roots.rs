//! Finding the two active roots: the global one and the project one.
//!
//! This is the only module that reads the environment variables that name
//! roots. It takes a lookup function instead of reading `std::env`
//! directly, so discovery is tested without touching the environment; it
//! does look at the file system (which folders hold a `ROOT.md`, who owns
//! a `.memory`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Which of the two roots a memory or a root belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Project,
    Global,
}

impl Scope {
    /// `project` or `global`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Global => "global",
        }
    }
}

/// A memory root: the folder that holds `ROOT.md` and the category folders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    pub scope: Scope,
    pub dir: PathBuf,
}

impl Root {
    /// True when the root has been created (`mem init`).
    pub fn exists(&self) -> bool {
        match self.scope {
            Scope::Project => self.dir.join("ROOT.md").is_file(),
            Scope::Global => self.dir.is_dir(),
        }
    }
}

/// The roots a run can see. The project root is `None` when no ancestor of
/// the working directory holds `.memory/ROOT.md` and none was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub global: Root,
    pub project: Option<Root>,
    /// The project was named by `--project` or `$MEM_PROJECT_DIR`.
    pub project_named: bool,
    /// `.memory` folders passed over, and why.
    pub notes: Vec<String>,
}

/// Where the global root lives: `$MEM_GLOBAL_DIR`, else
/// `$XDG_CONFIG_HOME/mem/memory`, else `~/.config/mem/memory`.
pub fn global_dir(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("MEM_GLOBAL_DIR") {
        return Some(dir);
    }
    if let Some(xdg) = set("XDG_CONFIG_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("mem").join("memory"));
    }
    set("HOME").map(|home| home.join(".config").join("mem").join("memory"))
}

/// The nearest ancestor of `cwd` (itself included) holding `.memory/ROOT.md`
/// that may be used (see [`refusal`]).
pub fn find_project(cwd: &Path) -> Option<PathBuf> {
    find_project_noting(cwd, &mut Vec::new())
}

/// [`find_project`], noting each `.memory` passed over and why.
pub fn find_project_noting(cwd: &Path, notes: &mut Vec<String>) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let root = dir.join(".memory");
        if !root.join("ROOT.md").is_file() {
            continue;
        }
        match refusal(dir) {
            None => return Some(root),
            Some(why) => notes.push(why),
        }
    }
    None
}

/// Why `<dir>/.memory` is not used as a project root, if it is not: it is a
/// link that leads out of `dir` (a repository cannot point mem at another
/// folder to write in), or, on Unix, it belongs to another user (a
/// `.memory` in a shared parent such as `/tmp` is someone else's).
pub fn refusal(dir: &Path) -> Option<String> {
    let root = dir.join(".memory");
    let meta = std::fs::symlink_metadata(&root).ok()?;
    if meta.file_type().is_symlink() {
        let target = root.canonicalize().ok();
        let inside =
            dir.canonicalize().ok().zip(target.as_ref()).is_some_and(|(d, t)| t.starts_with(d));
        if !inside {
            return Some(format!(
                "{} is a link out of {}; not used as the project memory",
                root.display(),
                dir.display()
            ));
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(&root).map(|m| m.uid()).ok()?;
        let me = rustix::process::geteuid().as_raw();
        if owner != me {
            return Some(format!(
                "{} belongs to another user (uid {owner}); not used as the project memory",
                root.display()
            ));
        }
    }
    None
}

/// Resolve both roots. `project_arg` is `--project DIR`; it wins over
/// `$MEM_PROJECT_DIR`, which wins over walking up from `cwd`.
pub fn discover(
    env: &dyn Fn(&str) -> Option<OsString>,
    cwd: &Path,
    project_arg: Option<&Path>,
) -> Option<Roots> {
    let global = Root { scope: Scope::Global, dir: absolute(cwd, &global_dir(env)?) };
    let named = project_arg
        .map(Path::to_path_buf)
        .or_else(|| env("MEM_PROJECT_DIR").filter(|v| !v.is_empty()).map(PathBuf::from));
    let project_named = named.is_some();
    let mut notes = Vec::new();
    let project_dir = match named {
        Some(dir) => {
            let mut dir = absolute(cwd, &dir);
            // `--project path/to/.memory` names the root itself: its folder
            // is the project (unless that folder holds a `.memory` of its own).
            if dir.file_name().is_some_and(|n| n == ".memory") && !dir.join(".memory").exists() {
                dir.pop();
            }
            match refusal(&dir) {
                None => Some(dir.join(".memory")),
                Some(why) => {
                    notes.push(why);
                    None
                }
            }
        }
        None => find_project_noting(cwd, &mut notes),
    };
    let project = project_dir.map(|dir| Root { scope: Scope::Project, dir });
    Some(Roots { global, project, project_named, notes })
}

/// `p` from `cwd`, without the `.` of a relative path (`--project .` names
/// `/repo`, not `/repo/.`, in every message); `..` stays, as a link may
/// make it mean something else than the folder above.
fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
    joined.components().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> =
            vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn global_dir_precedence() {
        let e = env(&[("MEM_GLOBAL_DIR", "/g"), ("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(global_dir(&e), Some("/g".into()));
        let e = env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(global_dir(&e), Some("/x/mem/memory".into()));
        let e = env(&[("XDG_CONFIG_HOME", ""), ("HOME", "/h")]);
        assert_eq!(global_dir(&e), Some("/h/.config/mem/memory".into()));
        assert_eq!(global_dir(&env(&[])), None);
    }

    #[test]
    fn a_project_named_by_a_relative_path_has_no_dot_in_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("repo");
        std::fs::create_dir_all(cwd.join("sub/.memory")).unwrap();
        let e = env(&[("MEM_GLOBAL_DIR", "./g")]);
        // Paths compare equal with or without a `.`: compare their text.
        let text = |p: &Path| p.as_os_str().to_owned();
        let roots = discover(&e, &cwd, Some(Path::new("."))).unwrap();
        assert_eq!(text(&roots.project.unwrap().dir), text(&cwd.join(".memory")));
        assert_eq!(text(&roots.global.dir), text(&cwd.join("g")));
        let roots = discover(&e, &cwd, Some(Path::new("./sub/./.memory"))).unwrap();
        assert_eq!(text(&roots.project.unwrap().dir), text(&cwd.join("sub/.memory")));
    }

    #[test]
    fn project_found_walking_up() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find_project(&deep), None);
        std::fs::create_dir_all(tmp.path().join("a/.memory")).unwrap();
        // A `.memory/` without ROOT.md is not a root.
        assert_eq!(find_project(&deep), None);
        std::fs::write(tmp.path().join("a/.memory/ROOT.md"), "# r\n").unwrap();
        assert_eq!(find_project(&deep), Some(tmp.path().join("a/.memory")));
    }

    #[test]
    fn named_project_wins() {
        let e = env(&[("HOME", "/h"), ("MEM_PROJECT_DIR", "/env")]);
        let r = discover(&e, Path::new("/cwd"), Some(Path::new("rel"))).unwrap();
        assert_eq!(r.project.unwrap().dir, PathBuf::from("/cwd/rel/.memory"));
        let r = discover(&e, Path::new("/cwd"), None).unwrap();
        assert_eq!(r.project.unwrap().dir, PathBuf::from("/env/.memory"));
        assert!(r.project_named);
    }
}
