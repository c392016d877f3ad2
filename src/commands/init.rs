//! `mem init`: create a root with ROOT.md, the default categories and a
//! `.gitignore` for the derived files.

use std::path::PathBuf;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::roots::Scope;
use crate::output::Style;
use crate::settings::{Context, Selection};
use crate::store::write::write_atomic;

/// The categories every new root starts with.
pub const DEFAULT_CATEGORIES: [&str; 6] =
    ["rules", "decisions", "pitfalls", "preferences", "facts", "references"];

const ROOT_EN: &str = include_str!("../../templates/root.en.md");
const ROOT_ZH: &str = include_str!("../../templates/root.zh.md");
const GLOBAL_EN: &str = include_str!("../../templates/root.global.en.md");
const GLOBAL_ZH: &str = include_str!("../../templates/root.global.zh.md");
const GITIGNORE: &str = include_str!("../../templates/gitignore");

/// Create a memory root (the project's `.memory/`, or the global one with --global).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  mem init\n  mem init --lang zh\n  mem init --global")]
pub struct Args {
    /// Language of the ROOT.md template
    #[arg(long, value_enum, default_value = "en")]
    pub lang: Lang,
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
    /// False when the root was there already (nothing was changed); in
    /// JSON `action`: `created` or `unchanged`.
    #[serde(rename = "action", serialize_with = "action")]
    pub created: bool,
    pub lang: Lang,
    pub categories: Vec<&'static str>,
}

fn action<S: serde::Serializer>(created: &bool, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(if *created { "created" } else { "unchanged" })
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
        // As `git init` in a repository: said, nothing changed, no error.
        let (created, lang, categories) = (false, args.lang, Vec::new());
        return Ok(Report { scope, root: dir, created, lang, categories });
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
    crate::commands::compile::refresh(&crate::model::roots::Root { scope, dir: dir.clone() })?;
    let categories = DEFAULT_CATEGORIES.to_vec();
    Ok(Report { scope, root: dir, created: true, lang: args.lang, categories })
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        if !self.created {
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
