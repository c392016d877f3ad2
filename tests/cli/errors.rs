//! Bad input: one clear line naming the argument or file, exit code 2, and
//! nothing written.

use predicates::str::contains;

use crate::env::Env;

#[test]
fn bad_memory_paths_are_refused() {
    let env = Env::with_project();
    let long = format!("facts/{}", "x".repeat(65));
    for bad in [
        "../escape",
        "facts/../../x",
        "/etc/passwd",
        "facts/.hidden",
        ".trash/x",
        "facts/",
        "facts",
        "Facts/x",
        "facts/a b",
        "facts/sub/x",
        &long,
        "",
    ] {
        env.mem(["remember", bad, "some text"]).assert().code(2).stderr(contains("mem: "));
        env.mem(["forget", bad]).assert().code(2);
        env.mem(["inspect", bad]).assert().code(2);
    }
    let files: Vec<_> = walk(&env.tmp.path().to_path_buf());
    assert!(files.iter().all(|f| !f.ends_with("x.md") && !f.ends_with("escape.md")), "{files:?}");
}

fn walk(dir: &std::path::PathBuf) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path().display().to_string());
        }
    }
    out
}

#[test]
fn messages_name_the_argument_and_the_fix() {
    let env = Env::with_project();
    env.mem(["remember", "facts/../x", "t"])
        .assert()
        .code(2)
        .stderr(contains("`..`"))
        .stderr(contains("hint:"));
    env.mem(["remember", "Bad/x", "t"]).assert().code(2).stderr(contains("invalid category `Bad`"));
}

#[test]
fn missing_things_are_errors_not_panics() {
    let env = Env::with_project();
    env.mem(["forget", "facts/nope"])
        .assert()
        .code(2)
        .stderr(contains("facts/nope.md: no such memory"));
    env.mem(["restore", "facts/nope"]).assert().code(2).stderr(contains("nothing in the trash"));
    env.mem(["inspect", "facts/nope"]).assert().code(2).stderr(contains("no such memory"));
    env.mem(["history", "facts/nope"]).assert().code(2);
    env.mem(["remember", "facts/a", "--supersedes", "facts/nope", "x"])
        .assert()
        .code(2)
        .stderr(contains("--supersedes"));
    assert!(
        !env.project().join("facts/a.md").exists(),
        "nothing written when --supersedes is wrong"
    );
    env.mem(["remember", "facts/a", "x", "--supersedes", "facts/a"])
        .assert()
        .code(2)
        .stderr(contains("itself"));
    env.mem(["remember", "facts/empty"]).assert().code(2).stderr(contains("nothing to remember"));
}

#[test]
fn no_root_gives_a_hint_to_init() {
    let env = Env::new();
    env.mem(["remember", "facts/a", "text"]).assert().code(2).stderr(contains("mem init"));
    env.mem(["--project", "nowhere", "list"])
        .assert()
        .code(2)
        .stderr(contains("ROOT.md is missing"));
    env.mem(["--project-only", "remember", "facts/a", "t"])
        .assert()
        .code(2)
        .stderr(contains("no project"));
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::with_project();
    env.mem(["list", "--sort", "sideways"]).assert().code(2);
    env.mem(["frobnicate"]).assert().code(2);
    env.mem(["remember", "facts/a", "x", "--pin", "--unpin"]).assert().code(2);
    env.mem(["list"]).env("MEM_NOW", "yesterday").assert().code(2).stderr(contains("MEM_NOW"));
}

#[test]
fn non_utf8_stdin_is_refused() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "-"])
        .write_stdin(vec![0xff, 0xfe, 0x00])
        .assert()
        .code(2)
        .stderr(contains("UTF-8"));
}

#[cfg(target_os = "linux")]
#[test]
fn output_that_cannot_be_written_is_an_error() {
    let env = Env::with_fixture("demo");
    for args in [&["list"][..], &["recall", "--no-track", "deploy"], &["export"]] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = env.process(args).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "mem {args:?} > /dev/full");
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the output"));
    }
}

/// A project on a tmpfs of `kib` KiB, filled up; None (with a message)
/// where mounting one is not allowed.
#[cfg(target_os = "linux")]
fn on_a_full_disk(kib: u32) -> Option<(Env, FullDisk)> {
    let env = Env::new();
    let mount = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
        .arg(env.work())
        .output();
    if !mount.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: mounting a small tmpfs is not allowed here");
        return None;
    }
    let guard = FullDisk(env.work());
    env.mem(["init"]).assert().success();
    env.mem(["remember", "facts/db", "The staging database lives on host db2 in eu-west."])
        .assert()
        .success();
    env.mem(["remember", "facts/cdn", "Static assets are served from the CDN at cdn.example."])
        .assert()
        .success();
    env.mem(["compile"]).assert().success();
    // Fill what is left.
    let _ = std::fs::write(env.work().join("filler"), vec![b'x'; kib as usize * 1024]);
    Some((env, guard))
}

#[cfg(target_os = "linux")]
struct FullDisk(std::path::PathBuf);

#[cfg(target_os = "linux")]
impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_every_memory_where_it_was() {
    let Some((env, _disk)) = on_a_full_disk(256) else { return };
    let before = env.read("facts/db.md");
    let index = env.read("facts/index.md");
    let out = env.mem(["forget", "facts/db"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("facts/db") && !stderr.contains(".mem-"), "{stderr}");
    assert_eq!(env.read("facts/db.md"), before, "the memory moved");
    assert_eq!(env.read("facts/index.md"), index, "the index changed");
    let out = env
        .mem(["remember", "facts/db", &"A much longer text about the database. ".repeat(200)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(".mem-"));
    assert_eq!(env.read("facts/db.md"), before, "a half write");
    let leftovers: Vec<_> = std::fs::read_dir(env.project().join("facts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_damaged_cache_on_a_read_only_disk_is_answered_from_the_files() {
    let Some((env, _disk)) = on_a_full_disk(4096) else { return };
    let _ = std::fs::remove_file(env.work().join("filler"));
    env.settle();
    // A cache built from the settled files holds their records.
    let _ = std::fs::remove_dir_all(env.project().join(".cache"));
    env.mem(["recall", "--no-track", "database"]).assert().success();
    let cache = env.project().join(".cache/index.bin");
    let mut bytes = std::fs::read(&cache).unwrap();
    // Damage the records and term tables, not the head checked at open:
    // found only once a query reads them.
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let body = 56 + word(24) + word(40);
    for b in &mut bytes[body..] {
        *b ^= 0x5a;
    }
    std::fs::write(&cache, &bytes).unwrap();
    let ro = std::process::Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(env.work())
        .status()
        .unwrap();
    assert!(ro.success());
    let out = env.mem(["recall", "--no-track", "database"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("facts/db.md"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read from the files"));
}

#[test]
fn temp_files_of_an_interrupted_write_are_shown_then_swept() {
    let env = Env::with_project();
    env.mem(["remember", "facts/db", "The staging database lives on host db2 in eu-west."])
        .assert()
        .success();
    let (old, fresh) = (
        env.project().join("facts/.mem-0123456789abcdef.tmp"),
        env.project().join("facts/.mem-fedcba9876543210.tmp"),
    );
    std::fs::write(&old, "half a memory").unwrap();
    std::fs::write(&fresh, "a write in progress").unwrap();
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&old).unwrap().set_modified(long_ago).unwrap();
    env.mem(["inspect"]).assert().stdout(predicates::str::contains(".mem-0123456789abcdef.tmp"));
    env.mem(["remember", "facts/db", "The staging database lives on host db3 in eu-west."])
        .assert()
        .success();
    assert!(!old.exists(), "an old temp file was left");
    assert!(fresh.exists(), "a temp file that may be in use was removed");
}

#[test]
fn flags_alone_do_not_create_an_empty_memory() {
    let env = Env::with_project();
    env.mem(["remember", "facts/node-version", "--summary", "Node 22 everywhere"])
        .assert()
        .code(2)
        .stderr(contains("facts/node-version.md: no such memory to update"));
    assert!(!env.project().join("facts/node-version.md").exists());
}

#[test]
fn an_error_under_json_is_json_on_stdout_too() {
    let env = Env::with_fixture("demo");
    let out = env.mem(["inspect", "facts/nope", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], "mem-error/1");
    assert!(v["error"].as_str().unwrap().contains("facts/nope.md"), "{v}");
    assert!(v["hint"].as_str().unwrap().contains("mem list"), "{v}");
    assert_eq!(v["exit_code"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("facts/nope.md"));
    // A usage error too.
    let out = env.mem(["list", "--limit", "0", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(v["error"].as_str().unwrap().contains("--limit"), "{v}");
    // Without --json, stdout stays empty.
    let plain = env.mem(["inspect", "facts/nope"]).output().unwrap();
    assert!(plain.stdout.is_empty());
}

#[test]
fn json_never_silently_overrides_another_format() {
    let env = Env::with_fixture("demo");
    for args in [
        &["completions", "bash", "--json"][..],
        &["man", "--json"],
        &["context", "--format", "xml", "--json"],
        &["export", "--format", "markdown", "--json"],
    ] {
        env.mem(args).assert().code(2).stderr(contains("--json"));
    }
    env.mem(["completions", "bash"]).assert().success();
    env.mem(["context", "--format", "xml"]).assert().success();
}

/// A build without the semantic tier says so: `model status` reports it,
/// the other `model` actions are refused, and a `MEM_MODEL` that names a
/// folder is a warning on recall, whose answer is the words' alone.
#[cfg(not(feature = "semantic"))]
#[test]
fn a_build_without_the_semantic_tier_says_so() {
    let env = Env::with_fixture("demo");
    let status = env.json(["model", "status"]);
    assert_eq!((status["built"].as_bool(), status["ready"].as_bool()), (Some(false), Some(false)));
    let out = env.mem(["model", "import", "/tmp/x.whl"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without the semantic tier"));
    let plain = env.stdout(["recall", "--no-track", "pnpm"]);
    let out =
        env.mem(["recall", "--no-track", "pnpm"]).env("MEM_MODEL", "/models/e5").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), plain);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MEM_MODEL") && stderr.contains("words alone"), "{stderr}");
}

#[test]
fn a_memory_saved_before_its_index_fails_says_it_is_saved_and_what_to_run() {
    // The index cannot be written (here a folder where index.md goes; a
    // full disk fails the same step): the memory is kept, and said to be.
    let env = Env::with_project();
    std::fs::create_dir_all(env.project().join("facts/index.md")).unwrap();
    let out = env.mem(["remember", "facts/alpha", "alpha note"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("facts/alpha.md is saved, but ") && err.contains("index.md"), "{err}");
    assert!(err.contains("then run `mem compile`"), "{err}");
    assert!(env.read("facts/alpha.md").contains("alpha note"));
}
