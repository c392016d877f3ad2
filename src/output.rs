//! Human text or `--json`, and colour only where it helps.
//!
//! Commands build a report; this layer decides how it looks. Colour is used
//! only on a terminal and never with `NO_COLOR`. A closed pipe
//! (`mem list | head`) ends the program quietly.

use std::io::{self, Write};

use serde::Serialize;

use crate::context::Context;

/// What a command hands to the output layer.
pub trait Report: Serialize {
    /// The text shown to a person.
    fn human(&self, style: &Style) -> String;

    /// Warnings printed on stderr (and kept in the JSON).
    fn warnings(&self) -> &[String] {
        &[]
    }

    /// A one-line note for stderr, such as why nothing was found.
    fn notice(&self) -> Option<String> {
        None
    }

    /// The exit code once printed: 0, or 1 for "nothing found".
    fn exit_code(&self) -> i32 {
        0
    }
}

/// Terminal styling, switched off when colour is not wanted.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }

    /// Emphasis for names and titles.
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }

    /// De-emphasis for secondary details.
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }

    /// Memory paths.
    pub fn path(&self, s: &str) -> String {
        self.paint("36", s)
    }

    /// Matched terms.
    pub fn mark(&self, s: &str) -> String {
        self.paint("1;31", s)
    }

    /// Warnings.
    pub fn warn(&self, s: &str) -> String {
        self.paint("33", s)
    }
}

/// Print a report as the context asks; returns the exit code.
pub fn emit<R: Report>(ctx: &Context, report: &R) -> i32 {
    let style = Style { color: ctx.color };
    let text = if ctx.json {
        let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
        s.push('\n');
        s
    } else {
        report.human(&style)
    };
    for w in report.warnings() {
        eprintln!("{} {w}", style.warn("warning:"));
    }
    if let Some(notice) = report.notice() {
        eprintln!("mem: {notice}");
    }
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        _ => report.exit_code(),
    }
}
