//! Typed errors for the whole engine.
//!
//! Every failure carries a kind (which decides the exit code), a one-line
//! message that names the file or argument at fault, an optional hint that
//! says what to do about it, and the file it is about when it is about one
//! (so what may not be shown of that file decides what may be shown of the
//! error, without reading its text).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What went wrong, coarsely: this decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad argument or a bad file: exit 2.
    Input,
    /// The filesystem refused: exit 2.
    Io,
    /// The thing asked for does not exist or nothing matched: exit 1.
    NotFound,
}

/// An error with a message and, where one helps, a hint.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
    /// The file the message names (and may quote from), when there is one:
    /// an agent is not told about a file it may not read (see
    /// `ops::visibility::scrub_error`).
    pub file: Option<PathBuf>,
}

/// The engine's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A bad argument or input file.
    pub fn input(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::Input, message: message.into(), hint: None, file: None }
    }

    /// Nothing matched, or the named thing does not exist.
    pub fn not_found(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::NotFound, message: message.into(), hint: None, file: None }
    }

    /// An I/O failure on `path`.
    pub fn io(path: &Path, err: io::Error) -> Error {
        let shown = crate::base::text::one_line(&path.display().to_string()).into_owned();
        Error {
            kind: ErrorKind::Io,
            message: format!("{shown}: {err}"),
            hint: None,
            file: Some(path.to_path_buf()),
        }
    }

    /// Say which file the error is about (its message names it, and may
    /// quote it).
    pub fn about(mut self, file: impl Into<PathBuf>) -> Error {
        self.file = Some(file.into());
        self
    }

    /// An error with `message` about what `cause` was about: the file
    /// `cause` names stays known when its message is quoted in another.
    pub fn with_cause(self, cause: &Error) -> Error {
        match &cause.file {
            Some(file) => self.about(file.clone()),
            None => self,
        }
    }

    /// The error of a step that failed after `done` took effect: said
    /// first, so the user does not redo it; the fix ends with `then`.
    pub fn after(mut self, done: &str, then: &str) -> Error {
        self.message = format!("{done}, but {}", self.message);
        self.hint = Some(match self.hint {
            Some(hint) => format!("{hint}, then {then}"),
            None => format!("fix that, then {then}"),
        });
        self
    }

    /// Attach a hint saying how to fix the problem.
    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::NotFound => 1,
            ErrorKind::Input | ErrorKind::Io => 2,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
