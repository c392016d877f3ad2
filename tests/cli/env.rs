//! A hermetic environment per test: its own temp dir, HOME, global root and
//! clock, and nothing inherited from the developer's shell.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// 2026-11-30T00:00:00Z
pub const NOW: i64 = 1_795_996_800_000;

/// [`NOW`] as a new memory's `created` and `updated` say it.
pub const NOW_ISO: &str = "2026-11-30T00:00:00.000Z";

/// [`NOW`] as history and trash file names say it.
pub const NOW_STAMP: &str = "2026-11-30T00-00-00.000Z";

pub struct Env {
    pub tmp: TempDir,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("home")).unwrap();
        fs::create_dir_all(tmp.path().join("work")).unwrap();
        Env { tmp }
    }

    /// A project folder with an initialised `.memory/`.
    pub fn with_project() -> Env {
        let env = Env::new();
        env.mem(["init"]).assert().success();
        env
    }

    /// A copy of `fixtures/<name>` as the project folder.
    pub fn with_fixture(name: &str) -> Env {
        let env = Env::new();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
        copy_dir(&src, &env.work());
        env
    }

    pub fn work(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    pub fn global(&self) -> PathBuf {
        self.tmp.path().join("global")
    }

    pub fn project(&self) -> PathBuf {
        self.work().join(".memory")
    }

    /// `mem` run in the work folder with a clean environment.
    pub fn mem<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        Command::from_std(self.process(args))
    }

    /// [`Env::mem`] run `later_ms` after the tests' fixed now.
    pub fn mem_at<I, S>(&self, args: I, later_ms: i64) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.process(args);
        cmd.env("MEM_NOW", (NOW + later_ms).to_string());
        Command::from_std(cmd)
    }

    /// [`Env::mem`] as a plain `std::process::Command`, for what
    /// assert_cmd does not offer (a given stdout, spawning without waiting).
    pub fn process<I, S>(&self, args: I) -> std::process::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("mem"));
        cmd.env_clear()
            .env("HOME", self.tmp.path().join("home"))
            .env("MEM_GLOBAL_DIR", self.global())
            .env("MEM_NOW", NOW.to_string())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(self.work())
            .args(args);
        cmd
    }

    /// Run and return stdout; panics with stderr when the exit code differs.
    pub fn stdout<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let out = self.mem(args).output().unwrap();
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// [`Env::stdout`] with more environment variables.
    pub fn stdout_with<I, S>(&self, args: I, vars: &[(&str, &str)]) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.mem(args);
        cmd.envs(vars.iter().copied());
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run with `--json` and parse stdout.
    pub fn json<I, S>(&self, args: I) -> serde_json::Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.mem(args);
        cmd.arg("--json");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.project().join(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.project().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Set every file and folder of the project root (but its cache) to one
    /// fixed time long past, as if the tree had been left alone: what was
    /// recorded of it may then be trusted (nothing changed within the same
    /// clock tick). The time is always the same, so settling again after a
    /// change hides the change from every mtime.
    pub fn settle(&self) {
        settle(&self.project());
    }
}

/// Set `path` and, for a folder, everything in it but `.cache`, to
/// 2023-11-14T22:13:20Z, then wait out the two seconds in which a change is
/// never trusted: setting a time changes the ctime, and a file whose mtime
/// or ctime is that recent is read again whatever its mtime says.
pub fn settle(path: &Path) {
    backdate(path);
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

fn backdate(path: &Path) {
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap().flatten() {
            if entry.file_name() != ".cache" {
                backdate(&entry.path());
            }
        }
    }
    let file = if path.is_dir() {
        fs::File::options().read(true).open(path)
    } else {
        fs::File::options().write(true).open(path)
    };
    file.unwrap().set_modified(old).unwrap();
}

/// Copy a fixture, leaving out any `.cache` a run in the checkout left there.
pub fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == ".cache" {
            continue;
        }
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// `PATH` with the `mem` under test first, as after `cargo install`.
pub fn path_with_mem() -> std::ffi::OsString {
    let dir = assert_cmd::cargo::cargo_bin("mem").parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}
