//! Two roots at once: discovery, selection and shadowing.

use predicates::str::contains;

use crate::env::Env;

#[test]
fn project_found_from_a_subfolder() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "alpha"]).assert().success();
    let sub = env.work().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let out = env.mem(["list", "--json"]).current_dir(&sub).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["memories"][0]["path"], "facts/a.md");
}

#[test]
fn writes_go_to_the_global_root_without_a_project() {
    let env = Env::new();
    env.mem(["init", "--global"]).assert().success();
    env.mem(["remember", "preferences/editor", "I use helix"])
        .assert()
        .success()
        .stdout(contains("created global"));
    assert!(env.global().join("preferences/editor.md").is_file());
}

#[test]
fn project_copy_shadows_global_copy() {
    let env = Env::with_project();
    env.mem(["init", "--global"]).assert().success();
    env.mem(["--global", "remember", "decisions/db", "global says sqlite"]).assert().success();
    env.mem(["--global", "remember", "facts/only-global", "g"]).assert().success();
    env.mem(["remember", "decisions/db", "project says postgres"])
        .assert()
        .success()
        .stderr(contains("shadows the global decisions/db.md"));
    let v = env.json(["list"]);
    let rows: Vec<(String, String)> = v["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().into(), m["root"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        rows,
        [
            ("decisions/db.md".into(), "project".into()),
            ("facts/only-global.md".into(), "global".into())
        ]
    );
    assert_eq!(env.json(["inspect"])["shadowed"], serde_json::json!(["decisions/db.md"]));
    let detail = env.json(["inspect", "decisions/db"]);
    assert_eq!(detail["body"], "project says postgres\n");
    assert!(detail["shadows"].as_str().unwrap().ends_with("global/decisions/db.md"));
    assert_eq!(env.json(["--global", "list"])["memories"].as_array().unwrap().len(), 2);
    assert_eq!(env.json(["--project-only", "list"])["memories"].as_array().unwrap().len(), 1);
    env.mem(["forget", "decisions/db"])
        .assert()
        .success()
        .stderr(contains("global decisions/db.md is visible again"));
    assert_eq!(env.json(["inspect", "decisions/db"])["body"], "global says sqlite\n");
}

#[test]
fn project_dir_from_flag_and_env() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "alpha"]).assert().success();
    let elsewhere = env.tmp.path().join("home");
    let by_flag = env
        .mem(["--project", env.work().to_str().unwrap(), "list", "--json"])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&by_flag.stdout).contains("facts/a.md"));
    let by_env = env
        .mem(["list", "--json"])
        .env("MEM_PROJECT_DIR", env.work())
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&by_env.stdout).contains("facts/a.md"));
}

#[test]
fn xdg_config_home_locates_the_global_root() {
    let env = Env::new();
    let xdg = env.tmp.path().join("xdg");
    env.mem(["init", "--global"])
        .env_remove("MEM_GLOBAL_DIR")
        .env("XDG_CONFIG_HOME", &xdg)
        .assert()
        .success();
    assert!(xdg.join("mem/memory/ROOT.md").is_file());
    env.mem(["init", "--global"]).env_remove("MEM_GLOBAL_DIR").assert().success();
    assert!(env.tmp.path().join("home/.config/mem/memory/ROOT.md").is_file());
}

#[test]
fn project_may_name_the_memory_folder_itself() {
    let env = Env::with_fixture("demo");
    let memory = env.project().display().to_string();
    let listed = env.stdout(["--project", &memory, "list"]);
    assert!(listed.contains("rules/deploy-pnpm.md"), "{listed}");
    env.mem(["inspect", ".memory/rules/deploy-pnpm.md"]).assert().success();
}
