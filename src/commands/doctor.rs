//! `mem doctor`: is everything around the memory working? One line per
//! finding, each with the command that fixes it; exit 1 when there is one,
//! and nothing printed when all is well.
//!
//! It checks what a person cannot see from the memory files: the `mem` the
//! hooks and the MCP server run, the git hook and merge driver, the trust
//! that decides what reaches an agent, a ROOT.md that is still the
//! template, generated files that are stale, drafts an edit kept, and the
//! semantic model.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::base::error::Result;
use crate::cache::held::Standing;
use crate::model::roots::Root;
use crate::ops::compile;
use crate::ops::hostfiles;
use crate::output::Style;
use crate::settings::{Context, ModelSetting};
use crate::store::trust::{self, Gate};

const EXAMPLES: &str = "\
Examples:
  mem doctor            one line per problem, with its fix; exit 1 when there is one
  mem doctor --json     the same as {\"findings\": [{\"check\", \"problem\", \"fix\"}]}";

/// Check the binary, hooks, trust, templates, exports and model around the memory.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {}

/// One thing that is not right.
#[derive(Debug, Serialize)]
pub struct Finding {
    /// Which check: `binary`, `hook`, `merge-driver`, `trust`, `plan`,
    /// `compile`, `export`, `draft`, `model`.
    pub check: &'static str,
    pub problem: String,
    pub fix: String,
}

/// Everything found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
}

/// Run every check.
pub fn run(ctx: &Context, _args: &Args) -> Result<Report> {
    let mut out = Vec::new();
    binary(&mut out);
    for root in ctx.read_roots()?.into_iter().filter(|r| r.exists()) {
        generated(root, &mut out)?;
        for (rel, _) in crate::store::write::drafts(&root.dir) {
            out.push(Finding {
                check: "draft",
                problem: format!("an edit of {rel} could not be saved; its text waits in a draft"),
                fix: format!("mem edit {rel}   (or: mem edit {rel} --discard)"),
            });
        }
    }
    if let Some(project) = ctx.roots.project.as_ref().filter(|p| p.exists()) {
        git(project, &mut out);
        let gate = Gate::of(&ctx.roots.global.dir, project, ctx.trust_all);
        trusted(ctx, &mut out);
        plan(project, &mut out);
        if !gate.is_closed() {
            exports(ctx, project, &mut out);
        }
    }
    model(ctx, &mut out);
    Ok(Report { findings: out })
}

/// The `mem` that hooks, plugins and MCP configurations run: on PATH, and
/// this version.
fn binary(out: &mut Vec<Finding>) {
    let Some(found) = on_path("mem") else {
        out.push(Finding {
            check: "binary",
            problem: "the hooks, the plugin and the MCP server run `mem`, which is not on PATH"
                .into(),
            fix: "cargo install --locked --path /path/to/mem   (or put this mem on PATH)".into(),
        });
        return;
    };
    let version = Command::new(&found).arg("--version").output();
    let ours = format!("mem {}", env!("CARGO_PKG_VERSION"));
    let theirs = version
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if theirs.as_deref() != Some(ours.as_str()) {
        out.push(Finding {
            check: "binary",
            problem: format!(
                "`mem` on PATH ({}) is {}, not {ours}",
                found.display(),
                theirs.unwrap_or_else(|| "not a working mem".into())
            ),
            fix: "install this version: cargo install --locked --path /path/to/mem".into(),
        });
    }
}

/// The first executable `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| executable(p))
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Generated indexes that `mem compile` would change.
fn generated(root: &Root, out: &mut Vec<Finding>) -> Result<()> {
    let (stale, _) = compile::stale(root)?;
    if !stale.is_empty() {
        out.push(Finding {
            check: "compile",
            problem: format!(
                "the {} root's generated files are stale: {}",
                root.scope.name(),
                names(&stale)
            ),
            fix: "mem compile".into(),
        });
    }
    Ok(())
}

/// The pre-commit hook and the merge driver, when the project is in git.
fn git(project: &Root, out: &mut Vec<Finding>) {
    let top = project.dir.parent().unwrap_or(&project.dir);
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(top)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(hooks) = run(&["rev-parse", "--git-path", "hooks"]) else { return };
    let hooks = top.join(hooks);
    let hook = std::fs::read_to_string(hooks.join("pre-commit")).unwrap_or_default();
    if !hook.contains(crate::ops::git::HOOK_MARK) {
        out.push(Finding {
            check: "hook",
            problem: "no pre-commit hook checks the memory's generated files before a commit"
                .into(),
            fix: "mem hook install".into(),
        });
    } else if !executable(&hooks.join("pre-commit")) {
        out.push(Finding {
            check: "hook",
            problem: "the pre-commit hook is not executable, so git skips it".into(),
            fix: "mem hook install".into(),
        });
    }
    let driver = run(&["config", "--get", "merge.mem.driver"]).unwrap_or_default();
    let program = driver.strip_prefix('\'').and_then(|d| d.split_once('\'')).map(|(p, _)| p);
    match program {
        None => out.push(Finding {
            check: "merge-driver",
            problem: "no merge driver merges the generated tables, so merges conflict in them"
                .into(),
            fix: "mem hook install".into(),
        }),
        Some(p) if !executable(Path::new(p)) => out.push(Finding {
            check: "merge-driver",
            problem: format!("the merge driver runs {p}, which is gone"),
            fix: "mem hook install".into(),
        }),
        Some(_) => {}
    }
}

/// What an agent gets of the project: nothing when it is not trusted, and
/// not the files changed since it was (the cached check the other commands
/// make, not a hash of every file).
fn trusted(ctx: &Context, out: &mut Vec<Finding>) {
    match crate::ops::visibility::project_standing(ctx, true) {
        None => {}
        Some(Standing::Untrusted) => out.push(Finding {
            check: "trust",
            problem: "the project memory is not trusted, so agents get none of it".into(),
            fix: "mem trust   (it shows what agents will get, then records it)".into(),
        }),
        Some(Standing::Trusted(held)) if !held.is_empty() => out.push(Finding {
            check: "trust",
            problem: format!(
                "{} project file(s) changed outside mem are held back from agents: {}",
                held.len(),
                names(&held)
            ),
            fix: "mem trust".into(),
        }),
        Some(Standing::Trusted(_)) => {}
    }
}

/// A ROOT.md with nothing written in it but the template.
fn plan(project: &Root, out: &mut Vec<Finding>) {
    let path = project.dir.join("ROOT.md");
    let Ok(Some(text)) = crate::store::files::text(&project.dir, &path) else { return };
    if crate::ops::context::plan::plan(&trust::prose(&text)).is_none() {
        out.push(Finding {
            check: "plan",
            problem: "ROOT.md still holds only the template, so agents get no plan from it".into(),
            fix: format!("write the project's plan in {}", path.display()),
        });
    }
}

/// Host files an export wrote that no longer say what the memories say.
fn exports(ctx: &Context, project: &Root, out: &mut Vec<Finding>) {
    let top = project.dir.parent().unwrap_or(&project.dir);
    let region = |name: &str| {
        std::fs::read_to_string(top.join(name)).is_ok_and(|t| t.contains("<!-- auto:begin mem -->"))
    };
    let cursor =
        std::fs::read_dir(top.join(".cursor/rules")).into_iter().flatten().flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("mem-") && name.ends_with(".mdc")
        });
    let hosts = [
        (region("AGENTS.md"), hostfiles::Host::AgentsMd, "agents-md"),
        (region("CLAUDE.md"), hostfiles::Host::ClaudeMd, "claude-md"),
        (cursor, hostfiles::Host::CursorRules, "cursor-rules"),
    ];
    for (_, host, flag) in hosts.into_iter().filter(|h| h.0) {
        let Ok(outcome) = hostfiles::export(ctx, host, None, true) else { continue };
        let stale: Vec<String> = outcome
            .files
            .iter()
            .filter(|w| w.action != "unchanged")
            .map(|w| w.file.strip_prefix(top).unwrap_or(&w.file).display().to_string())
            .collect();
        if !stale.is_empty() {
            out.push(Finding {
                check: "export",
                problem: format!("{} no longer say(s) what the memories say", names(&stale)),
                fix: format!("mem export --format {flag}"),
            });
        }
    }
}

/// A model named but missing, or named for a mem built without the tier.
fn model(ctx: &Context, out: &mut Vec<Finding>) {
    let ModelSetting::Named(dir) = &ctx.model else { return };
    if !cfg!(feature = "semantic") {
        out.push(Finding {
            check: "model",
            problem: format!(
                "MEM_MODEL names {}, but this mem was built without the semantic tier",
                dir.display()
            ),
            fix: "cargo install --locked --path /path/to/mem --features semantic   (or unset MEM_MODEL)".into(),
        });
    } else if !dir.join("config.json").is_file() {
        out.push(Finding {
            check: "model",
            problem: format!("MEM_MODEL names {}, which holds no model", dir.display()),
            fix: "mem model pull   (offline: mem model import PATH; see mem model --help)".into(),
        });
    }
}

/// At most three names, and how many more.
fn names(all: &[String]) -> String {
    let mut text = all.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if all.len() > 3 {
        text.push_str(&format!(" and {} more", all.len() - 3));
    }
    text
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        self.findings
            .iter()
            .map(|f| format!("{}: {}\n  fix: {}\n", style.bold(f.check), f.problem, f.fix))
            .collect()
    }

    fn exit_code(&self) -> i32 {
        i32::from(!self.findings.is_empty())
    }
}
