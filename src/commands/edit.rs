//! `mem edit`: open a memory in `$VISUAL` / `$EDITOR` (a new one starts from
//! `templates/memory.md`), then check it, keep the previous text in
//! `.history/`, set `updated`, and recompile.
//!
//! Typed text is never lost (`crontab -e`, `visudo` and `git commit` are the
//! models): the memory is edited as a draft beside it, `.<slug>.draft.md`,
//! which replaces it only once it reads back as a memory. When it does not,
//! a terminal is asked whether to edit again, discard or keep the draft;
//! without one the draft is kept and named. A kept draft is what the next
//! `mem edit` of that memory opens, and `lint` and `inspect` report it.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::frontmatter::Document;
use crate::model::frontmatter::edit::render_over;
use crate::model::memory::{Memory, date_value, updated_of};
use crate::model::relpath::RelPath;
use crate::ops::compile::refresh;
use crate::output::Style;
use crate::settings::Context;
use crate::store::write::{draft_path, remove_file, save_history, write_atomic};

const TEMPLATE: &str = include_str!("../../templates/memory.md");

const EXAMPLES: &str = "\
Examples:
  mem edit decisions/store-format
  EDITOR=\"code --wait\" mem edit pitfalls/new-trap
  mem edit decisions/store-format --discard   drop the draft a failed edit kept";

/// Edit a memory in your editor, then validate and recompile.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The memory, as CATEGORY/SLUG (created from a template if new)
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::commands::complete::memory_paths))]
    pub path: String,
    /// Drop the draft an earlier edit kept, without opening the editor
    #[arg(long)]
    pub discard: bool,
    /// Save text that looks like a credential anyway
    #[arg(long)]
    pub allow_secret: bool,
    /// Create the category of a new memory even though its name is close to
    /// one that exists (refused otherwise, as a likely typo)
    #[arg(long)]
    pub new_category: bool,
}

/// What happened.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: String,
    pub file: PathBuf,
    /// `created`, `updated`, `unchanged` or `discarded`.
    pub action: &'static str,
    /// The edit started from a draft an earlier edit kept.
    pub resumed: bool,
    /// The previous text, saved in `.history/`.
    pub history_file: Option<PathBuf>,
    pub compiled: Vec<String>,
    /// What the edit changed besides the text: a category it made, a memory
    /// that became or stopped being a hard rule.
    pub notes: Vec<String>,
    /// Project files held back from agents, said on stderr.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Why a saved draft is not a memory yet: its line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Refusal {
    line: usize,
    message: String,
}

/// Edit.
pub fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let rel = RelPath::parse(&args.path)?;
    let (root, file) = match ctx.locate(&rel)? {
        Some(found) => found,
        None => {
            let root = ctx.write_root()?;
            (root, rel.under(&root.dir))
        }
    };
    // Checked before the editor opens: a link would only be refused on save.
    crate::store::write::check_target(&root.dir, &file)?;
    // So is a new memory's category: a near miss of one that exists is refused.
    let new_category = match file.is_file() {
        true => None,
        false => crate::ops::naming::new_category(ctx, root, &rel, args.new_category)?,
    };
    let draft = draft_path(&root.dir, &rel);
    let pending = crate::store::files::text(&root.dir, &draft)?;
    let report = |action, resumed, history_file, compiled| Report {
        path: rel.file(),
        file: file.clone(),
        action,
        resumed,
        history_file,
        compiled,
        notes: Vec::new(),
        warnings: Vec::new(),
    };
    if args.discard {
        if pending.is_none() {
            return Err(Error::input(format!("{rel}: no draft to discard"))
                .hint("a draft is kept only when an edit could not be saved"));
        }
        remove_file(&root.dir, &draft)?;
        return Ok(report("discarded", false, None, Vec::new()));
    }
    let editor = editor()?;
    let before = crate::store::files::text(&root.dir, &file)?;
    // A draft an earlier edit kept is what the person typed: it is opened
    // again, never the memory it would replace.
    let resumed = pending.is_some();
    let start = starting_text(ctx, &rel, &draft, pending.as_ref(), before.as_ref());
    if pending.is_none() {
        write_atomic(&root.dir, &draft, start.as_bytes())?;
    }
    let Some(after) = edited(&editor, &root.dir, &draft, &rel, args.allow_secret)? else {
        return Ok(report("discarded", resumed, None, Vec::new()));
    };
    // The editor may have been open for minutes: the file is read again
    // under the root's write lock, and a change made meanwhile is not lost.
    let _lock = crate::ops::writing::writing(root)?;
    let now = crate::store::files::text(&root.dir, &file)?;
    if after != start && now != before {
        return Err(Error::input(format!(
            "{} changed while it was open in the editor; it was left as it is now",
            rel.file()
        ))
        .hint(format!(
            "your text is kept in {}; merge it by hand, then `mem edit {} --discard`",
            draft.display(),
            rel.file()
        )));
    }
    if before.as_deref() == Some(after.as_str()) || (before.is_none() && after == start) {
        remove_file(&root.dir, &draft)?;
        let warnings =
            crate::ops::visibility::held_back_warning(ctx, None, true).into_iter().collect();
        return Ok(Report { warnings, ..report("unchanged", resumed, None, Vec::new()) });
    }
    let (action, history_file, after) = match &before {
        None => ("created", None, after),
        Some(old) => {
            // Saved under the version's own `updated`, as remember does.
            let previous = updated_of(old).unwrap_or(ctx.now_ms);
            let saved = save_history(&root.dir, &rel, previous, old.as_bytes())?;
            ("updated", Some(saved), stamped(old, after, ctx.now_ms.max(previous)))
        }
    };
    write_atomic(&root.dir, &file, after.as_bytes())?;
    let old = before.as_deref().map(str::as_bytes);
    crate::store::trust::wrote(&ctx.roots.global.dir, root, &rel, old, after.as_bytes());
    remove_file(&root.dir, &draft)?;
    let compiled = refresh(root)?.0;
    let notes =
        crate::ops::naming::edit_notes(&rel, action, before.as_deref(), &after, new_category);
    let warnings = crate::ops::visibility::held_back_warning(ctx, None, true).into_iter().collect();
    Ok(Report { notes, warnings, ..report(action, resumed, history_file, compiled) })
}

/// What the editor opens: a draft an earlier edit kept (what the person
/// typed, never the memory it would replace), else the memory, else a new
/// memory's template.
fn starting_text(
    ctx: &Context,
    rel: &RelPath,
    draft: &Path,
    pending: Option<&String>,
    before: Option<&String>,
) -> String {
    match (pending, before) {
        (Some(text), _) => {
            eprintln!(
                "{}",
                crate::base::text::terminal_safe(
                    &format!("resuming the draft an earlier edit kept: {}", draft.display()),
                    false
                )
            );
            text.clone()
        }
        (None, Some(text)) => text.clone(),
        (None, None) => TEMPLATE
            .replace("{id}", &rel.file())
            .replace("{kind}", crate::model::memory::default_kind(rel))
            .replace("{now}", &crate::base::time::iso_ms(ctx.now_ms)),
    }
}

/// The draft as the person left it in the editor, opened again until it
/// passes the checks or they give up: None when they discard it (it is
/// removed), an error when they keep it for later.
fn edited(
    editor: &str,
    dir: &Path,
    draft: &Path,
    rel: &RelPath,
    allow_secret: bool,
) -> Result<Option<String>> {
    loop {
        open(editor, draft)?;
        let text = draft_text(dir, draft)?;
        let Err(refusal) = check(rel, &text, allow_secret) else { return Ok(Some(text)) };
        let said = format!("{}:{}: {}", draft.display(), refusal.line, refusal.message);
        match ask(&said) {
            Choice::Edit => continue,
            Choice::Discard => {
                remove_file(dir, draft)?;
                return Ok(None);
            }
            Choice::Keep => {
                return Err(Error::input(said).hint(format!(
                    "your text is kept in {}; run `mem edit {}` to go on with it, or `mem edit {} --discard` to drop it",
                    draft.display(),
                    rel.file(),
                    rel.file()
                )));
            }
        }
    }
}

/// `after` with `updated` set to `at`, written in the form the file uses,
/// unless the person wrote another `updated` themselves. Only that line
/// changes (or is added).
fn stamped(before: &str, after: String, at: i64) -> String {
    let (Ok(old), Ok(new)) = (Document::parse(before), Document::parse(&after)) else {
        return after;
    };
    let (was, is) = (old.meta.get("updated"), new.meta.get("updated"));
    if is.is_some() && is != was {
        return after;
    }
    let mut doc = new.clone();
    let form = is.or(was).or_else(|| new.meta.get("created"));
    doc.set("updated", date_value(form, at));
    render_over(&after, &new, &doc)
}

/// Whether `text` can replace the memory: it parses, every field has the
/// shape it should, and it holds nothing that looks like a credential.
fn check(rel: &RelPath, text: &str, allow_secret: bool) -> std::result::Result<(), Refusal> {
    let doc =
        Document::parse(text).map_err(|e| Refusal { line: e.line, message: e.message.clone() })?;
    let (_, problems) =
        Memory::from_document(rel.clone(), crate::model::roots::Scope::Project, &doc, 0);
    if let Some(problem) = problems.first() {
        // The message names the key as `key`: point at its line.
        let key = problem.split('`').nth(1).unwrap_or_default();
        return Err(Refusal {
            line: key_line(text, key),
            message: problem.replace("; using the default", ""),
        });
    }
    if !allow_secret && let Some(found) = crate::base::secrets::scan(text).into_iter().next() {
        return Err(Refusal {
            line: found.line,
            message: format!(
                "this looks like {}; mem does not save credentials (or run again with --allow-secret)",
                found.what
            ),
        });
    }
    Ok(())
}

/// The line (1-based) of top-level key `key` in `text`'s frontmatter, else 1.
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':')))
        .map_or(1, |i| i + 1)
}

/// The editor command: `$VISUAL`, else `$EDITOR`.
fn editor() -> Result<String> {
    ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .ok_or_else(|| {
            Error::input("no editor: neither VISUAL nor EDITOR is set")
                .hint("export EDITOR=vi (or nano, \"code --wait\", …)")
        })
}

/// The draft as the editor left it, read as any file under a root is: no
/// link out of the root, a regular file, at most the read limit.
fn draft_text(root: &Path, draft: &Path) -> Result<String> {
    crate::store::files::text(root, draft)?.ok_or_else(|| {
        Error::input(format!("{} is gone", draft.display()))
            .hint("the editor removed the draft; run `mem edit` again")
    })
}

/// Run the editor on `file` as git does: through the shell on Unix, so
/// `EDITOR="code --wait"` and quoted arguments work; split into words
/// elsewhere.
fn open(editor: &str, file: &Path) -> Result<()> {
    let mut command = if cfg!(unix) {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(format!("{editor} \"$@\"")).arg(editor);
        sh
    } else {
        let mut words = editor.split_whitespace();
        let mut command = Command::new(words.next().unwrap_or_default());
        command.args(words);
        command
    };
    let name = editor.split_whitespace().next().unwrap_or_default();
    let status = command.arg(file).status().map_err(|e| {
        Error::input(format!("cannot start the editor `{name}`: {e}")).hint("check VISUAL / EDITOR")
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::input(format!("the editor `{name}` failed ({status})")).hint(format!(
            "your text is kept in {}; run `mem edit` again to go on",
            file.display()
        )))
    }
}

/// What to do with a draft that cannot be saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Edit,
    Discard,
    Keep,
}

/// Ask on a terminal what to do about `problem`; without one, keep the draft.
fn ask(problem: &str) -> Choice {
    if !std::io::stdin().is_terminal() {
        return Choice::Keep;
    }
    let question = format!(
        "{problem}\nWhat now? (e)dit again, (d)iscard your changes, (k)eep the draft for later [e]: "
    );
    loop {
        eprint!("{}", crate::base::text::terminal_safe(&question, false));
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        match std::io::stdin().lock().read_line(&mut answer) {
            // End of input: nothing more will be typed, so nothing is thrown away.
            Ok(0) | Err(_) => return Choice::Keep,
            Ok(_) => {}
        }
        match answer.trim().to_lowercase().as_str() {
            "" | "e" | "edit" => return Choice::Edit,
            "d" | "discard" => return Choice::Discard,
            "k" | "keep" | "q" | "quit" => return Choice::Keep,
            _ => continue,
        }
    }
}

impl crate::output::Report for Report {
    fn human(&self, style: &Style) -> String {
        let mut out = format!("{} {}\n", self.action, style.path(&self.path));
        if let Some(saved) = &self.history_file {
            out.push_str(&format!(
                "  previous text: {}\n",
                style.dim(&saved.display().to_string())
            ));
        }
        if !self.compiled.is_empty() {
            out.push_str(&format!("  recompiled: {}\n", self.compiled.join(", ")));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
