//! The hand-written dev set (`tests/data/devset`) stays a memory root that
//! `mem` accepts as it is: its labels are checked in `tests/ranking.rs`.

use std::path::Path;

use crate::env::{Env, copy_dir};

#[test]
fn the_dev_set_passes_lint_with_fresh_generated_text() {
    let env = Env::new();
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/devset/.memory");
    copy_dir(&set, &env.project());
    let out = env.mem(["--json", "lint"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<&serde_json::Value> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] != "warning")
        .collect();
    assert!(errors.is_empty() && out.status.success(), "mem lint: {errors:#?}");
    env.mem(["compile", "--check"]).assert().success();
}
