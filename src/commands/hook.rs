//! `mem hook install|uninstall`: a pre-commit hook that refuses stale
//! indexes, and a merge driver that merges generated tables without
//! conflict markers. Uninstall removes exactly what install added.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::ops::git::{HOOK_MARK, git};
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::write_atomic;

const BEGIN: &str = "# >>> mem: generated memory files >>>";
const END: &str = "# <<< mem <<<";

/// Install or remove the git integration of the project's memory.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem hook install\n  mem hook install --export agents-md --export cursor-rules\n  mem hook uninstall"
)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Action {
    /// Add the pre-commit check and the merge driver (keeps an existing hook, chained)
    Install {
        /// Also refuse a commit while these files are not what the memories
        /// say (`mem export --format F --check`, on the working tree)
        #[arg(long = "export", value_enum, value_name = "FORMAT")]
        exports: Vec<HostFormat>,
    },
    /// Remove what `install` added
    Uninstall,
}

/// The host files a hook can keep fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostFormat {
    AgentsMd,
    ClaudeMd,
    CursorRules,
}

impl HostFormat {
    /// The files it writes, as git names them from the top folder.
    fn files(self, project: &str) -> String {
        let name = match self {
            HostFormat::AgentsMd => "AGENTS.md",
            HostFormat::ClaudeMd => "CLAUDE.md",
            HostFormat::CursorRules => ".cursor/rules",
        };
        if project == "." { name.to_string() } else { format!("{project}/{name}") }
    }

    fn flag(self) -> &'static str {
        match self {
            HostFormat::AgentsMd => "agents-md",
            HostFormat::ClaudeMd => "claude-md",
            HostFormat::CursorRules => "cursor-rules",
        }
    }
}

/// What was done.
#[derive(Debug, Serialize)]
pub struct Report {
    pub repository: PathBuf,
    /// The hooks folder, as git resolves it (`core.hooksPath` honoured).
    pub hooks: PathBuf,
    pub done: Vec<String>,
}

/// Install or uninstall.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let project = ctx.project_root()?;
    let dir = project.dir.parent().unwrap_or(&project.dir).to_path_buf();
    let top = PathBuf::from(git(&dir, &["rev-parse", "--show-toplevel"])?);
    // Where git runs hooks from: `.git/hooks`, the common folder's of a
    // worktree, or `core.hooksPath`.
    let hooks = absolute(&dir, &git(&dir, &["rev-parse", "--git-path", "hooks"])?);
    hook_path_ok(&hooks, "the hooks folder", true)?;
    for name in HOOKS.iter().chain(&RETIRED) {
        hook_path_ok(&hooks.join(name), "the hook", false)?;
        hook_path_ok(&hooks.join(format!("{name}.before-mem")), "the hook", false)?;
    }
    let config = absolute(&dir, &git(&dir, &["rev-parse", "--git-path", "config"])?);
    let memory = project.dir.strip_prefix(&top).unwrap_or(Path::new(".memory")).to_path_buf();
    let project_rel = memory.parent().map(|p| p.display().to_string()).filter(|p| !p.is_empty());
    let mut done = Vec::new();
    match &args.action {
        Action::Install { exports } => {
            let exe = std::env::current_exe()
                .map_err(|e| Error::input(format!("cannot locate mem: {e}")))?;
            // .gitattributes first: a refusal there leaves nothing half done.
            let attributes = edit_attributes(&top, &memory, true)?;
            for name in HOOKS {
                let project = project_rel.as_deref().unwrap_or(".");
                let root_md = memory.join("ROOT.md").display().to_string();
                done.push(install_hook(&hooks, name, &exe, project, &root_md, exports)?);
            }
            // An earlier install's refresh hooks: no longer needed.
            for name in RETIRED {
                let note = uninstall_hook(&hooks, name)?;
                if !note.starts_with("no mem") {
                    done.push(note);
                }
            }
            done.push(attributes);
            let driver =
                format!("{} merge-driver %O %A %B %P", sh_quote(&exe.display().to_string()));
            git(&top, &["config", "--local", "merge.mem.name", "mem generated memory indexes"])?;
            git(&top, &["config", "--local", "merge.mem.driver", &driver])?;
            done.push(format!("registered the `mem` merge driver in {}", config.display()));
        }
        Action::Uninstall => {
            for name in HOOKS {
                done.push(uninstall_hook(&hooks, name)?);
            }
            for name in RETIRED {
                let note = uninstall_hook(&hooks, name)?;
                if !note.starts_with("no mem") {
                    done.push(note);
                }
            }
            done.push(edit_attributes(&top, &memory, false)?);
            let _ = git(&top, &["config", "--local", "--remove-section", "merge.mem"]);
            done.push(format!("removed the `mem` merge driver from {}", config.display()));
        }
    }
    Ok(Report { repository: top, hooks, done })
}

/// Refuse `path` when it is a symlink, or when it is there and is not a
/// folder (`folder`) or a regular file: no hook is read, written, moved or
/// removed through a link, and none blocks on a FIFO.
fn hook_path_ok(path: &Path, what: &str, folder: bool) -> Result<()> {
    let Ok(meta) = path.symlink_metadata() else { return Ok(()) };
    let kind = meta.file_type();
    let why = if kind.is_symlink() {
        "is a symlink; mem does not write through links"
    } else if folder && !kind.is_dir() {
        "is not a folder"
    } else if !folder && !kind.is_file() {
        "is not a regular file"
    } else {
        return Ok(());
    };
    Err(Error::input(format!(
        "{what} {} {why}",
        crate::base::text::one_line(&path.display().to_string())
    ))
    .hint("make it a real folder or file (or set core.hooksPath to the folder it points to)"))
}

fn absolute(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() { p.to_path_buf() } else { base.join(p) }
}

/// The hook `mem hook install` adds: the pre-commit check. No hook
/// rewrites the working tree after a merge, rebase, cherry-pick or
/// checkout: the generated text merges exactly by itself (no count lines,
/// rows merged by the driver), so there is nothing to refresh.
const HOOKS: [&str; 1] = ["pre-commit"];

/// Hooks an earlier `mem hook install` added; `uninstall` removes them.
const RETIRED: [&str; 4] = ["post-merge", "post-rewrite", "post-checkout", "post-commit"];

/// What hook `name` runs, after the hook it replaced (kept as
/// `<name>.before-mem`, run first). A commit whose staged tree holds no
/// memory root (a branch from before it, an orphan `gh-pages`) is let
/// through: there is nothing to check.
fn hook_script(
    name: &str,
    exe: &Path,
    project: &str,
    root_md: &str,
    exports: &[HostFormat],
) -> String {
    let previous = format!("{name}.before-mem");
    let mut run = format!(
        "git cat-file -e :{root_md} 2>/dev/null || exit 0\n\
         \"$MEM\" --project {project} --project-only compile --check --staged || exit 1\n",
        root_md = sh_quote(root_md),
        project = sh_quote(project),
    );
    // The exported files are judged only when the memory in the working
    // tree is what the commit holds (else there is nothing sure to compare
    // with: said, not refused), and they must be staged as they are.
    for format in exports {
        let flag = format.flag();
        let files = sh_quote(&format.files(project));
        let memory = sh_quote(root_md.trim_end_matches("ROOT.md").trim_end_matches('/'));
        run.push_str(&format!(
            "if ! git diff --quiet -- {memory}; then\n\
             \x20 echo \"mem: the memory has unstaged changes, so the {flag} files were not checked\" >&2\n\
             elif ! git diff --quiet -- {files}; then\n\
             \x20 echo \"mem: {files} has unstaged changes: git add it (or undo them)\" >&2; exit 1\n\
             else\n\
             \x20 \"$MEM\" --project {project} --project-only export --format {flag} --check >/dev/null 2>&1\n\
             \x20 case $? in\n\
             \x20   0) ;;\n\
             \x20   1) echo \"mem: the {flag} files are stale: run 'mem export --format {flag}', then git add them\" >&2; exit 1 ;;\n\
             \x20   *) echo \"mem: the {flag} files were not checked (is the memory trusted? see 'mem export --format {flag} --check')\" >&2 ;;\n\
             \x20 esac\n\
             fi\n",
            project = sh_quote(project),
        ));
    }
    format!(
        "#!/bin/sh\n{HOOK_MARK}\nhere=\"$(dirname \"$0\")\"\nif [ -x \"$here/{previous}\" ]; then\n  \"$here/{previous}\" \"$@\" || exit $?\nfi\n\
         MEM={exe}\n[ -x \"$MEM\" ] || MEM=mem\n{run}",
        exe = sh_quote(&exe.display().to_string()),
    )
}

fn install_hook(
    hooks: &Path,
    name: &str,
    exe: &Path,
    project: &str,
    root_md: &str,
    exports: &[HostFormat],
) -> Result<String> {
    let hook = hooks.join(name);
    let script = hook_script(name, exe, project, root_md, exports);
    let what = "the pre-commit hook (runs `mem compile --check --staged`)";
    let existing = fs::read_to_string(&hook).ok();
    let note = match existing.as_deref() {
        Some(text) if text == script => return Ok(format!("{name} hook already installed")),
        // An earlier mem's hook: replaced, the chain to a previous hook kept.
        Some(text) if text.contains(HOOK_MARK) => format!("updated {what}"),
        _ if existing.is_some() || hook.exists() => {
            let previous = hooks.join(format!("{name}.before-mem"));
            if previous.exists() {
                return Err(Error::input(format!(
                    "{} exists; not overwriting it",
                    previous.display()
                ))
                .hint("move it away, then run `mem hook install` again"));
            }
            fs::rename(&hook, &previous).map_err(|e| Error::io(&hook, e))?;
            format!("added {what}; your previous {name} hook runs first, from {name}.before-mem")
        }
        _ => format!("added {what}"),
    };
    // Opened from its parent with no link followed: a hooks folder
    // swapped for a link meanwhile is refused, not written through.
    write_atomic(hooks.parent().unwrap_or(hooks), &hook, script.as_bytes())?;
    make_executable(&hook)?;
    Ok(note)
}

/// `s` as one shell word: single-quoted, a `'` inside written `'\''`, so
/// no folder name can run a command in the hook.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn uninstall_hook(hooks: &Path, name: &str) -> Result<String> {
    let hook = hooks.join(name);
    if !fs::read_to_string(&hook).is_ok_and(|t| t.contains(HOOK_MARK)) {
        return Ok(format!("no mem {name} hook to remove"));
    }
    fs::remove_file(&hook).map_err(|e| Error::io(&hook, e))?;
    let previous = hooks.join(format!("{name}.before-mem"));
    if previous.exists() {
        fs::rename(&previous, &hook).map_err(|e| Error::io(&previous, e))?;
        return Ok(format!("removed the {name} hook and put your previous one back"));
    }
    Ok(format!("removed the {name} hook"))
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|e| Error::io(path, e))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<()> {
    Ok(())
}

/// Add (or remove) our block of `.gitattributes` lines.
fn edit_attributes(top: &Path, memory: &Path, add: bool) -> Result<String> {
    let path = top.join(".gitattributes");
    // A regular file of the repository, never read through a link.
    let text =
        match crate::store::files::read(top, &path, crate::store::files::Links::Never, 1 << 20) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                Error::input(format!("{} is not valid UTF-8", path.display()))
                    .hint("save it as UTF-8; mem left it as it is")
            })?,
            Err(crate::store::files::Refusal::Missing) => String::new(),
            Err(why) => {
                return Err(Error::input(format!("{}: {why}", path.display()))
                    .hint("make .gitattributes a regular file of the repository"));
            }
        };
    let without = strip_block(&text);
    if !add {
        if without == text {
            return Ok("no mem entries in .gitattributes".into());
        }
        if without.trim().is_empty() {
            fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        } else {
            write_atomic(top, &path, without.as_bytes())?;
        }
        return Ok("removed the mem entries from .gitattributes".into());
    }
    let m = memory.display().to_string().replace('\\', "/");
    if m.contains(['\n', '\r']) || m.chars().any(char::is_control) {
        return Err(Error::input(format!(
            "{}: the memory folder's path has a line break or control character",
            memory.display()
        ))
        .hint("rename the folder: .gitattributes holds one path a line"));
    }
    // A space, quote or backslash: the pattern is quoted the way git reads it.
    let pattern = |tail: &str| {
        let p = format!("{m}/{tail}");
        if p.contains([' ', '"', '\\', '#']) {
            format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\""))
        } else {
            p
        }
    };
    let block = format!(
        "{BEGIN}\n{} merge=mem\n{} merge=mem\n{END}\n",
        pattern("*/index.md"),
        pattern("ROOT.md")
    );
    let mut new = without.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str(&block);
    if new == text {
        return Ok(
            ".gitattributes already routes the generated files to the mem merge driver".into()
        );
    }
    write_atomic(top, &path, new.as_bytes())?;
    Ok("added .gitattributes entries for the generated files (commit this file)".into())
}

fn strip_block(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        match line.trim_end() {
            l if l == BEGIN => inside = true,
            l if l == END && inside => inside = false,
            _ if inside => {}
            _ => out.push_str(line),
        }
    }
    out
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        let mut out = format!(
            "git repository {}\n  hooks in {}\n",
            self.repository.display(),
            self.hooks.display()
        );
        for d in &self.done {
            out.push_str(&format!("  {d}\n"));
        }
        out
    }
}
