//! `mem init`: create a root with ROOT.md, the default categories and a
//! `.gitignore` for the derived files.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::memory::DEFAULT_CATEGORIES;
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::{Context, Selection};
use crate::store::gitignore::{GITIGNORE, ignore_lines, missing_ignores};
use crate::store::write::write_atomic;

const ROOT_EN: &str = include_str!("../../templates/root.en.md");
const ROOT_ZH: &str = include_str!("../../templates/root.zh.md");
const GLOBAL_EN: &str = include_str!("../../templates/root.global.en.md");
const GLOBAL_ZH: &str = include_str!("../../templates/root.global.zh.md");

/// Create a memory root (the project's `.memory/`, or the global one with --global).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem init\n  mem init --lang zh\n  mem init --global\n  mem init --update-gitignore   add what a newer mem ignores to an existing root's .gitignore"
)]
pub struct Args {
    /// Language of the ROOT.md template
    #[arg(long, value_enum, default_value = "en")]
    pub lang: Lang,
    /// On an existing root: add to its .gitignore the lines `mem init` writes
    /// today that it lacks (such as `.history/`); no other line is touched
    #[arg(long)]
    pub update_gitignore: bool,
}

/// The languages templates exist for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

/// The ROOT.md template of a root in a language: a project's speaks of
/// the project, the global root's of every project.
pub fn root_template(scope: Scope, lang: Lang) -> &'static str {
    match (scope, lang) {
        (Scope::Project, Lang::En) => ROOT_EN,
        (Scope::Project, Lang::Zh) => ROOT_ZH,
        (Scope::Global, Lang::En) => GLOBAL_EN,
        (Scope::Global, Lang::Zh) => GLOBAL_ZH,
    }
}

/// What init created.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The root it belongs to: `project` or `global` (`root` in JSON,
    /// as in every command's output).
    #[serde(rename = "root")]
    pub scope: Scope,
    /// The root's folder (`dir` in JSON, as in `stats` and `inspect`).
    #[serde(rename = "dir")]
    pub root: PathBuf,
    /// `created`, `unchanged` (the root was there already), or `updated`
    /// (it was, and `--update-gitignore` added lines to its .gitignore).
    pub action: &'static str,
    pub lang: Lang,
    pub categories: Vec<&'static str>,
    /// The lines `--update-gitignore` added to an existing root's .gitignore.
    pub gitignore_added: Vec<String>,
}

/// Create the root.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let (scope, dir) = match (ctx.selection, &ctx.roots.project) {
        (Selection::GlobalOnly, _) => (Scope::Global, ctx.roots.global.dir.clone()),
        (_, Some(p)) if ctx.roots.project_named => (Scope::Project, p.dir.clone()),
        _ => (Scope::Project, ctx.cwd.join(".memory")),
    };
    let root_md = dir.join("ROOT.md");
    if root_md.symlink_metadata().is_ok() {
        // As `git init` in a repository: said, nothing changed, no error
        // (but the .gitignore, when asked to).
        let gitignore_added = match args.update_gitignore {
            true => update_gitignore(&dir)?,
            false => Vec::new(),
        };
        let action = if gitignore_added.is_empty() { "unchanged" } else { "updated" };
        let (lang, categories) = (args.lang, Vec::new());
        return Ok(Report { scope, root: dir, action, lang, categories, gitignore_added });
    }
    let template = root_template(scope, args.lang);
    write_atomic(&dir, &root_md, template.as_bytes())?;
    if scope == Scope::Project {
        // Made here, by the user: what init wrote is trusted (nothing else
        // that may already be in the folder).
        let root = crate::model::roots::Root { scope, dir: dir.clone() };
        crate::store::trust::trust_new_root(&ctx.roots.global.dir, &root, template, ctx.now_ms)?;
    }
    let gitignore = dir.join(".gitignore");
    if !gitignore.exists() {
        write_atomic(&dir, &gitignore, GITIGNORE.as_bytes())?;
    }
    for category in DEFAULT_CATEGORIES {
        let path = dir.join(category);
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
    }
    // Generated as `mem compile` would: a new root passes `mem lint`,
    // `mem compile --check` and the pre-commit hook as it is.
    crate::ops::compile::refresh(&crate::model::roots::Root { scope, dir: dir.clone() })?;
    let categories = DEFAULT_CATEGORIES.to_vec();
    let (action, gitignore_added) = ("created", Vec::new());
    Ok(Report { scope, root: dir, action, lang: args.lang, categories, gitignore_added })
}

/// Add to the root's `.gitignore` the generated lines it lacks, after its
/// last line, every other byte as it was (a missing file is written whole);
/// returns the lines added.
fn update_gitignore(dir: &std::path::Path) -> Result<Vec<String>> {
    let path = dir.join(".gitignore");
    let _lock = crate::store::write::lock_root(dir)?;
    let Some(text) = crate::store::files::text(dir, &path)? else {
        write_atomic(dir, &path, GITIGNORE.as_bytes())?;
        return Ok(ignore_lines().map(str::to_string).collect());
    };
    let missing = missing_ignores(&text);
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = text.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("# Added by `mem init --update-gitignore`.\n");
    for line in &missing {
        out.push_str(line);
        out.push('\n');
    }
    write_atomic(dir, &path, out.as_bytes())?;
    Ok(missing.into_iter().map(str::to_string).collect())
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let gitignore = self.root.join(".gitignore");
        if self.action == "updated" {
            return format!(
                "{} is already a {} memory root; added to {}: {}\n",
                style.path(&self.root.display().to_string()),
                self.scope.name(),
                style.path(&gitignore.display().to_string()),
                self.gitignore_added.join(", "),
            );
        }
        if self.action == "unchanged" {
            return format!(
                "{} is already a {} memory root; nothing changed (edit its ROOT.md by hand)\n",
                style.path(&self.root.display().to_string()),
                self.scope.name(),
            );
        }
        format!(
            "created {} root {}\n  categories: {}\n  next: mem remember <category>/<slug> \"what to remember\"\n",
            self.scope.name(),
            style.path(&self.root.display().to_string()),
            self.categories.join(", "),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_gitignore_ignores_history_and_every_line_is_found_again() {
        assert!(ignore_lines().any(|l| l == ".history/"));
        assert!(missing_ignores(GITIGNORE).is_empty());
        let old = "# mine\n.state.json\n  .cache/  \n.trash/\nnotes.txt\n";
        assert_eq!(missing_ignores(old), [".state.json.*", "*/.*.draft.md", ".history/"]);
    }

    #[test]
    fn every_default_category_implies_a_kind() {
        for category in DEFAULT_CATEGORIES {
            let kinds = crate::model::memory::CATEGORY_KINDS;
            assert!(kinds.iter().any(|(c, _)| *c == category), "{category}");
        }
    }

    #[test]
    fn templates_hold_both_empty_regions() {
        for (scope, lang) in
            [Scope::Project, Scope::Global].into_iter().flat_map(|s| [(s, Lang::En), (s, Lang::Zh)])
        {
            let t = root_template(scope, lang);
            for label in ["registry", "routing"] {
                let begin = format!("<!-- auto:begin {label} -->\n<!-- auto:end -->");
                assert!(t.contains(&begin), "{scope:?} {lang:?} lacks {label}");
            }
        }
    }
}
