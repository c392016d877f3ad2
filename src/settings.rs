//! Everything a command needs, resolved once from flags and environment:
//! the roots, which of them are selected, the clock and the output format.

use std::env;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::base::error::{Error, Result};
use crate::base::time::{Lang, epoch_ms};
use crate::model::relpath::RelPath;
use crate::model::roots::{self, Root, Roots, Scope};

/// Which roots a command sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Both,
    GlobalOnly,
    ProjectOnly,
}

/// The resolved run settings.
#[derive(Debug, Clone)]
pub struct Context {
    pub roots: Roots,
    pub selection: Selection,
    /// Now, in epoch milliseconds (`$MEM_NOW` overrides the clock).
    pub now_ms: i64,
    pub json: bool,
    pub color: bool,
    /// `-q/--quiet`: nothing on standard output on success.
    pub quiet: bool,
    /// The working directory.
    pub cwd: PathBuf,
    /// The language relative ages are written in (from `LC_ALL` / `LANG`).
    pub lang: Lang,
    /// The agent role from `$MEM_ROLE`: memories private to another role are hidden.
    pub role: Option<String>,
    /// `$MEM_TRUST_ALL=1`: inject project roots without `mem trust` (CI, scripts).
    pub trust_all: bool,
    /// The command being run, as `--json` names it (`"schema": "mem-list/1"`).
    pub command: &'static str,
    /// The semantic tier's model folder (see [`ModelSetting`]).
    pub model: ModelSetting,
}

/// Where the semantic tier's model is: `$MEM_MODEL` names a folder, or
/// `off`; unset, it is the folder `mem model import` installs into,
/// `$XDG_DATA_HOME/mem/model` (else `~/.local/share/mem/model`), used once
/// there is a model there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSetting {
    /// `MEM_MODEL=off`, or no home to find the installed model in.
    Off,
    /// `MEM_MODEL=DIR`: this folder, which must hold a model.
    Named(PathBuf),
    /// The folder `mem model import` installs into.
    Installed(PathBuf),
}

impl ModelSetting {
    /// Resolve from the environment, relative paths against `cwd`.
    pub fn resolve(
        lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>,
        cwd: &std::path::Path,
    ) -> ModelSetting {
        let set = |k: &str| lookup(k).filter(|v| !v.is_empty());
        if let Some(v) = set("MEM_MODEL") {
            if v == "off" {
                return ModelSetting::Off;
            }
            return ModelSetting::Named(cwd.join(v));
        }
        let data = set("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".local").join("share")));
        match data {
            Some(d) => ModelSetting::Installed(d.join("mem").join("model")),
            None => ModelSetting::Off,
        }
    }

    /// The folder, unless the tier is off.
    pub fn dir(&self) -> Option<&std::path::Path> {
        match self {
            ModelSetting::Off => None,
            ModelSetting::Named(d) | ModelSetting::Installed(d) => Some(d),
        }
    }
}

/// The global options, as parsed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub project: Option<PathBuf>,
    pub global_only: bool,
    pub project_only: bool,
    pub json: bool,
    /// `--color`.
    pub color: ColorWhen,
    /// `-q/--quiet`: nothing on standard output on success.
    pub quiet: bool,
}

/// When human output is coloured (`--color`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set; `CLICOLOR_FORCE` or
    /// `FORCE_COLOR` (not `0`) turn it on anywhere.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Whether to colour, as the environment `var` and the terminal say.
    pub fn decide(self, var: &dyn Fn(&str) -> Option<std::ffi::OsString>, terminal: bool) -> bool {
        let set = |k: &str| var(k).is_some_and(|v| !v.is_empty() && v != "0");
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto if var("NO_COLOR").is_some_and(|v| !v.is_empty()) => false,
            ColorWhen::Auto => set("CLICOLOR_FORCE") || set("FORCE_COLOR") || terminal,
        }
    }
}

impl Context {
    /// Resolve roots, clock and output settings from options and environment.
    pub fn resolve(opts: &Options) -> Result<Context> {
        let cwd = env::current_dir()
            .map_err(|e| Error::input(format!("cannot read the working directory: {e}")))?;
        let lookup = |key: &str| env::var_os(key);
        let roots = roots::discover(&lookup, &cwd, opts.project.as_deref()).ok_or_else(|| {
            Error::input("cannot find a place for the global root: HOME is not set")
                .hint("set MEM_GLOBAL_DIR or HOME")
        })?;
        let selection = match (opts.global_only, opts.project_only) {
            (true, _) => Selection::GlobalOnly,
            (_, true) => Selection::ProjectOnly,
            _ => Selection::Both,
        };
        let now_ms = match env::var("MEM_NOW") {
            Ok(v) => v.trim().parse().ok().or_else(|| crate::base::time::parse_iso(&v)).ok_or_else(
                || {
                    Error::input(format!("MEM_NOW=`{v}` is not a time"))
                        .hint("set MEM_NOW to epoch milliseconds or an ISO 8601 date, e.g. 2026-12-03T06:47:08Z, or unset it")
                },
            )?,
            Err(_) => epoch_ms(SystemTime::now()),
        };
        let color = opts.color.decide(&lookup, std::io::stdout().is_terminal());
        let lang = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|k| env::var(k).ok().filter(|v| !v.is_empty()))
            .map_or(Lang::En, |v| if v.starts_with("zh") { Lang::Zh } else { Lang::En });
        let role = env::var("MEM_ROLE").ok().filter(|r| !r.is_empty());
        let trust_all = env::var("MEM_TRUST_ALL").is_ok_and(|v| v == "1" || v == "true");
        let command = "mem";
        let model = ModelSetting::resolve(&lookup, &cwd);
        Ok(Context {
            roots,
            selection,
            now_ms,
            json: opts.json,
            color,
            quiet: opts.quiet,
            cwd,
            lang,
            role,
            trust_all,
            command,
            model,
        })
    }

    /// The roots to read, project first, leaving out those not created yet.
    pub fn read_roots(&self) -> Result<Vec<&Root>> {
        if let Some(project) = &self.roots.project
            && self.roots.project_named
            && self.selection != Selection::GlobalOnly
            && !project.exists()
        {
            return Err(no_project(project));
        }
        let roots = self.selected().into_iter().filter(|r| r.exists()).collect();
        Ok(roots)
    }

    /// The selected roots, created or not, project first.
    pub fn selected(&self) -> Vec<&Root> {
        let project = self.roots.project.as_ref();
        let global = Some(&self.roots.global);
        match self.selection {
            Selection::Both => [project, global].into_iter().flatten().collect(),
            Selection::GlobalOnly => global.into_iter().collect(),
            Selection::ProjectOnly => project.into_iter().collect(),
        }
    }

    /// Where writes go: the project root when there is one, else the global root.
    pub fn write_root(&self) -> Result<&Root> {
        let root = match (self.selection, &self.roots.project) {
            (Selection::GlobalOnly, _) => &self.roots.global,
            (_, Some(project)) => project,
            (Selection::ProjectOnly, None) => {
                return Err(Error::input("no project memory root here")
                    .hint("run `mem init` in the project, or pass --project DIR"));
            }
            (Selection::Both, None) => &self.roots.global,
        };
        if !root.exists() {
            return Err(match root.scope {
                Scope::Project => no_project(root),
                Scope::Global => Error::input(format!(
                    "the global memory root {} does not exist yet",
                    root.dir.display()
                ))
                .about(&root.dir)
                .hint("run `mem init --global`, or `mem init` inside a project"),
            });
        }
        Ok(root)
    }

    /// The visible file for `rel`: the project copy first, then the global one.
    pub fn locate(&self, rel: &RelPath) -> Result<Option<(&Root, PathBuf)>> {
        let roots = self.read_roots()?;
        let found = roots.into_iter().map(|r| (r, rel.under(&r.dir))).find(|(_, f)| f.is_file());
        Ok(found)
    }

    /// The project root, which must exist (for commands that act on it alone).
    pub fn project_root(&self) -> Result<&Root> {
        self.roots.project.as_ref().filter(|r| r.exists()).ok_or_else(|| {
            Error::input("no project memory root here")
                .hint("run `mem init` in the project, or pass --project DIR")
        })
    }

    /// The root of the given scope, if it is selected and exists.
    pub fn root(&self, scope: Scope) -> Option<&Root> {
        self.selected().into_iter().find(|r| r.scope == scope && r.exists())
    }
}

fn no_project(root: &Root) -> Error {
    Error::input(format!("no memory root at {} (ROOT.md is missing)", root.dir.display()))
        .about(&root.dir)
        .hint("run `mem init` there first, or check --project / MEM_PROJECT_DIR")
}

/// Default number of memories per root before `stats` and `lint` warn.
pub const DEFAULT_MAX_ENTRIES: usize = 500;

/// Memories per root before a warning, from `$MEM_MAX_ENTRIES`.
pub fn max_entries() -> usize {
    std::env::var("MEM_MAX_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_MAX_ENTRIES)
}
