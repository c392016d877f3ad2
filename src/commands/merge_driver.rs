//! `mem merge-driver %O %A %B %P`: git's merge driver for generated files
//! (registered by `mem hook install`). Text outside the markers is merged
//! three-way by `git merge-file`; the generated rows are merged by
//! [`crate::model::merge`]. The result is written to %A; exit 1 when the
//! hand-written text itself conflicts, or when ROOT.md's bounded tables
//! cannot be told from the three versions (then `mem compile` writes them).

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde::Serialize;

use crate::base::error::{Error, Result};
use crate::model::merge::merge_regions;
use crate::model::regions::{self, outside};
use crate::output::Style;
use crate::settings::Context;

/// Merge a generated file (called by git, not by people).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The common ancestor's version (%O)
    pub base: PathBuf,
    /// Our version, overwritten with the result (%A)
    pub ours: PathBuf,
    /// Their version (%B)
    pub theirs: PathBuf,
    /// The file's path in the repository (%P)
    pub path: Option<String>,
}

/// The outcome.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: String,
    pub conflicts: bool,
    /// ROOT.md's generated tables were left as ours had them: the three
    /// versions do not tell what the merged tree's hold.
    pub stale: bool,
}

/// Merge and write the result over `ours`.
pub fn run(_ctx: &Context, args: &Args) -> Result<Report> {
    let read = |p: &PathBuf| fs::read_to_string(p).map_err(|e| Error::io(p, e));
    let (base, ours, theirs) = (read(&args.base)?, read(&args.ours)?, read(&args.theirs)?);
    let path = args.path.clone().unwrap_or_else(|| args.ours.display().to_string());
    let pieces = (outside(&base), outside(&ours), outside(&theirs));
    let (Some(ob), Some(oo), Some(ot)) = pieces else {
        // Markers we cannot trust: fall back to git's own text merge.
        let (text, conflicts) = merge_file(&args.ours, &args.base, &args.theirs)?;
        fs::write(&args.ours, text).map_err(|e| Error::io(&args.ours, e))?;
        return Ok(Report { path, conflicts, stale: false });
    };
    let dir = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
    let write = |name: &str, text: &str| -> Result<PathBuf> {
        let p = dir.path().join(name);
        fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
        Ok(p)
    };
    let (pb, po, pt) = (write("base", &ob)?, write("ours", &oo)?, write("theirs", &ot)?);
    let (merged_outside, conflicts) = merge_file(&po, &pb, &pt)?;
    // Git names the file (%P); without the name, a file with ROOT.md's
    // regions is taken for one.
    let root_md = match &args.path {
        Some(p) => std::path::Path::new(p).file_name().is_some_and(|n| n == "ROOT.md"),
        None => regions::find(&base)
            .is_ok_and(|r| r.iter().any(|r| matches!(r.label.as_str(), "registry" | "routing"))),
    };
    let (merged, stale) = match merge_regions(&merged_outside, &base, &ours, &theirs, root_md) {
        Some(m) => (m.text, !m.exact),
        None => (merged_outside, false),
    };
    fs::write(&args.ours, merged).map_err(|e| Error::io(&args.ours, e))?;
    Ok(Report { path, conflicts, stale })
}

/// `git merge-file -p ours base theirs`: the merged text and whether it conflicts.
fn merge_file(ours: &PathBuf, base: &PathBuf, theirs: &PathBuf) -> Result<(String, bool)> {
    let out = Command::new("git")
        .arg("merge-file")
        .arg("-p")
        .args([ours, base, theirs])
        .output()
        .map_err(|e| Error::input(format!("cannot run git merge-file: {e}")))?;
    match out.status.code() {
        Some(code) if code >= 0 => {
            Ok((String::from_utf8_lossy(&out.stdout).into_owned(), code > 0))
        }
        _ => Err(Error::input(format!(
            "git merge-file failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))),
    }
}

impl crate::output::Report for Report {
    fn human(&self, _style: &Style) -> String {
        String::new()
    }

    fn notice(&self) -> Option<String> {
        let stale = self.stale.then(|| {
            format!(
                "{}: the generated tables cannot be told from the three versions; after the merge, run `mem compile`, then `git add {}`",
                self.path, self.path
            )
        });
        let conflicts = self
            .conflicts
            .then(|| format!("{}: the hand-written text conflicts; resolve it by hand", self.path));
        match (conflicts, stale) {
            (Some(c), Some(s)) => Some(format!("{c}; {s}")),
            (c, s) => c.or(s),
        }
    }

    fn exit_code(&self) -> i32 {
        i32::from(self.conflicts || self.stale)
    }
}
