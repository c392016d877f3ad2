//! `mem edit`: open a memory in `$VISUAL` / `$EDITOR` (a new one starts from
//! `templates/memory.md`), then check that it still parses, keep the
//! previous text in `.history/`, and recompile.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::commands::compile::refresh;
use crate::model::frontmatter::Document;
use crate::model::relpath::RelPath;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{save_history, write_atomic};

const TEMPLATE: &str = include_str!("../../templates/memory.md");

/// Edit a memory in your editor, then validate and recompile.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  mem edit decisions/store-format\n  EDITOR=\"code --wait\" mem edit pitfalls/new-trap"
)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG (created from a template if new)
    pub path: String,
}

/// What happened.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: String,
    pub file: PathBuf,
    pub action: &'static str,
    pub compiled: Vec<String>,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Edit.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let editor = editor()?;
    let (root, file) = match ctx.locate(&rel)? {
        Some(found) => found,
        None => {
            let root = ctx.write_root()?;
            (root, rel.under(&root.dir))
        }
    };
    // Checked before the editor opens: a link would only be refused on save.
    crate::store::write::check_target(&root.dir, &file)?;
    let before = crate::store::files::text(&root.dir, &file)?;
    // The memory is edited as a draft beside its final place, and replaces
    // it (atomically, never through a link) only once it parses.
    let template = match &before {
        Some(text) => text.clone(),
        None => TEMPLATE.replace("{id}", &rel.file()).replace("{now}", &ctx.now_ms.to_string()),
    };
    let draft = file.with_file_name(format!(".{}.draft.md", rel.slug));
    crate::store::write::write_atomic(&root.dir, &draft, template.as_bytes())?;
    loop {
        open(&editor, &draft)?;
        let text = draft_text(&root.dir, &draft)?;
        match Document::parse(&text) {
            Ok(_) => break,
            Err(e)
                if ask(&format!(
                    "{}:{}: {}. Reopen the editor? [Y/n] ",
                    file.display(),
                    e.line,
                    e.message
                )) =>
            {
                continue;
            }
            Err(e) => {
                return Err(Error::input(format!("{}:{}: {}", draft.display(), e.line, e.message))
                    .hint("the file was left as you saved it; fix it and run `mem compile`"));
            }
        }
    }
    let after = draft_text(&root.dir, &draft)?;
    // The editor may have been open for minutes: the file is read again
    // under the root's write lock, and a change made meanwhile is not lost.
    let _lock = crate::store::write::lock_root(&root.dir)?;
    let now = crate::store::files::text(&root.dir, &file)?;
    if after != template && now != before {
        return Err(Error::input(format!(
            "{} changed while it was open in the editor; it was left as it is now",
            rel.file()
        ))
        .hint(format!("your text is kept in {}; merge it by hand", draft.display())));
    }
    let action = match &before {
        _ if after == template => "unchanged",
        None => "created",
        Some(old) => {
            // Saved under the version's own `updated`, as remember does.
            let updated = crate::model::memory::updated_of(old).unwrap_or(ctx.now_ms);
            save_history(&root.dir, &rel, updated, old.as_bytes())?;
            "updated"
        }
    };
    if action != "unchanged" {
        write_atomic(&root.dir, &file, after.as_bytes())?;
        let old = before.as_deref().map(str::as_bytes);
        crate::store::trust::wrote(&ctx.roots.global.dir, root, &rel, old, after.as_bytes());
    }
    let _ = std::fs::remove_file(&draft);
    let compiled = if action == "unchanged" { Vec::new() } else { refresh(root)?.0 };
    let warnings = crate::commands::agent::held_back_warning(ctx, None, true).into_iter().collect();
    Ok(Report { path: rel.file(), file, action, compiled, warnings })
}

/// The editor command: `$VISUAL`, else `$EDITOR`, split into words.
fn editor() -> Result<Vec<String>> {
    ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .ok_or_else(|| {
            Error::input("no editor: neither VISUAL nor EDITOR is set")
                .hint("export EDITOR=vi (or nano, \"code --wait\", …)")
        })
}

/// The draft as the editor left it, read as any file under a root is: no
/// link out of the root, a regular file, at most the read limit.
fn draft_text(root: &std::path::Path, draft: &std::path::Path) -> Result<String> {
    crate::store::files::text(root, draft)?.ok_or_else(|| {
        Error::input(format!("{} is gone", draft.display()))
            .hint("the editor removed the draft; run `mem edit` again")
    })
}

fn open(editor: &[String], file: &Path) -> Result<()> {
    let status = Command::new(&editor[0]).args(&editor[1..]).arg(file).status().map_err(|e| {
        Error::input(format!("cannot start the editor `{}`: {e}", editor[0]))
            .hint("check VISUAL / EDITOR")
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::input(format!("the editor `{}` failed ({status})", editor[0]))
            .hint("the file was left as it was saved"))
    }
}

/// Ask a yes/no question on a terminal; false when not interactive.
fn ask(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprint!("{}", crate::base::text::terminal_safe(question, false));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    !answer.trim().to_lowercase().starts_with('n')
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        format!("{} {}\n", self.action, style.path(&self.path))
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
