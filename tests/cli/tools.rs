//! Tools some tests need beyond the Rust toolchain: node with the npm
//! packages of `integrations/opencode` and `tests/hosts`, and the Python
//! MCP client. Without them such a test is skipped and says, on the
//! terminal, what to install; with `MEM_TEST_REQUIRE_TOOLS=1` (`.ci/run`
//! sets it) a missing tool fails the test instead.

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// True when `ok`; otherwise the test is skipped (false), or fails when
/// tools are required.
pub fn available(ok: bool, what: &str, install: &str) -> bool {
    if ok {
        return true;
    }
    let required = std::env::var_os("MEM_TEST_REQUIRE_TOOLS").is_some_and(|v| v == "1");
    assert!(!required, "this test needs {what}: {install}");
    // Straight to the terminal: the test harness keeps what `eprintln!`
    // prints for failures only.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: this test needs {what}: {install} (MEM_TEST_REQUIRE_TOOLS=1 makes this a failure)"
    );
    false
}

/// Node runs and the npm packages of `dir` (a folder of this repository)
/// are installed, by `install` (`ci` or `install`, as `.ci/run` does).
pub fn npm_packages(dir: &Path, install: &str, what: &str) -> bool {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = dir.strip_prefix(repo).unwrap_or(dir).display().to_string();
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    available(
        node && dir.join("node_modules").is_dir(),
        what,
        &format!("install node and npm, then run `npm {install} --prefix {rel}`"),
    )
}

/// The official MCP client for Python can be imported.
pub fn python_mcp() -> bool {
    let ok = Command::new("python3").args(["-c", "import mcp"]).output();
    available(
        ok.is_ok_and(|o| o.status.success()),
        "the official MCP client for Python",
        "run `python3 -m pip install mcp`",
    )
}
