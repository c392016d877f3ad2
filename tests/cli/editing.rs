//! Hand-editing: `mem edit` never loses what was typed, sets `updated`,
//! and keeps history in order; dates are written readably and read in
//! every form people write them.

use std::fs;
use std::path::PathBuf;

use predicates::str::contains;

use crate::env::{Env, NOW, NOW_ISO};

/// An "editor" script at `name` in the test's folder: `body` runs with the
/// file as `$1`, and the file as the editor opened it is kept in
/// `<name>.seen` (the last opening).
fn editor(env: &Env, name: &str, body: &str) -> String {
    let path = env.tmp.path().join(name);
    let seen = env.tmp.path().join(format!("{name}.seen"));
    fs::write(&path, format!("#!/bin/sh\ncp \"$1\" '{}'\n{body}\n", seen.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

fn seen(env: &Env, name: &str) -> String {
    fs::read_to_string(env.tmp.path().join(format!("{name}.seen"))).unwrap()
}

/// An editor that writes `text` over the file.
fn writes(env: &Env, name: &str, text: &str) -> String {
    let file = env.tmp.path().join(format!("{name}.text"));
    fs::write(&file, text).unwrap();
    editor(env, name, &format!("cat '{}' > \"$1\"", file.display()))
}

fn draft(env: &Env) -> PathBuf {
    env.project().join("decisions/.orm.draft.md")
}

const ORM: &str = "---\nkind: decision\ncreated: 2026-11-01T09:00:00Z\nupdated: 2026-11-01T09:00:00Z\n---\nWe use Prisma.\n";
const TYPED: &str =
    "---\nkind: decision\nsummary: [we moved\n---\nWe use Drizzle now: the paragraph I typed.\n";

#[cfg(unix)]
#[test]
fn invalid_yaml_keeps_the_draft_which_the_next_edit_opens() {
    let env = Env::with_project();
    env.write("decisions/orm.md", ORM);
    // Without a terminal: exit 2, the file and line, the draft and how to go on.
    env.mem(["edit", "decisions/orm"])
        .env("VISUAL", writes(&env, "typo", TYPED))
        .assert()
        .code(2)
        .stderr(contains(".orm.draft.md:4:"))
        .stderr(contains("invalid YAML"))
        .stderr(contains("run `mem edit decisions/orm.md` to go on with it"));
    assert_eq!(env.read("decisions/orm.md"), ORM, "the memory is left as it was");
    assert_eq!(fs::read_to_string(draft(&env)).unwrap(), TYPED, "the typed text is kept");
    // Following the hint of an earlier version (`mem compile`) does not hide it:
    // lint and inspect name the draft.
    env.mem(["lint"])
        .assert()
        .code(1)
        .stdout(contains(".orm.draft.md"))
        .stdout(contains("mem edit decisions/orm.md"));
    let overview = env.json(["inspect"]);
    let problems = overview["problems"].as_array().unwrap();
    assert!(problems.iter().any(|p| p["path"].as_str().unwrap().ends_with(".orm.draft.md")));
    assert!(
        env.json(["inspect", "decisions/orm"])["draft"]
            .as_str()
            .unwrap()
            .ends_with(".orm.draft.md")
    );
    // The draft stays out of recall, list and the generated index.
    assert_eq!(env.json(["list"])["memories"].as_array().unwrap().len(), 1);
    env.mem(["compile"]).assert().success();
    assert!(!env.read("decisions/index.md").contains("draft"));
    // The next edit opens the draft, never the original, and saves it once fixed.
    env.mem_at(["edit", "decisions/orm"], 60_000)
        .env("VISUAL", editor(&env, "fix", "sed -i 's/\\[we moved/we moved/' \"$1\""))
        .assert()
        .success()
        .stderr(contains("resuming the draft"))
        .stdout(contains("updated decisions/orm.md"));
    assert_eq!(seen(&env, "fix"), TYPED);
    let saved = env.read("decisions/orm.md");
    assert!(saved.contains("We use Drizzle now: the paragraph I typed.\n"), "{saved}");
    assert!(saved.contains("summary: we moved\n"), "{saved}");
    assert!(!draft(&env).exists(), "the draft goes once saved");
    // The previous text is in history, under its own time.
    let history = env.json(["history", "decisions/orm"]);
    let file = history["versions"][0]["file"].as_str().unwrap();
    assert!(file.ends_with("2026-11-01T09-00-00.000Z.md"), "{file}");
    assert_eq!(fs::read_to_string(file).unwrap(), ORM);
    env.mem(["lint"]).assert().success();
}

#[cfg(unix)]
#[test]
fn a_kept_draft_can_be_discarded() {
    let env = Env::with_project();
    env.write("decisions/orm.md", ORM);
    env.mem(["edit", "decisions/orm"]).env("VISUAL", writes(&env, "typo", TYPED)).assert().code(2);
    let out = env.json(["edit", "decisions/orm", "--discard"]);
    assert_eq!(out["action"], "discarded");
    assert!(!draft(&env).exists());
    assert_eq!(env.read("decisions/orm.md"), ORM);
    env.mem(["edit", "decisions/orm", "--discard"])
        .assert()
        .code(2)
        .stderr(contains("no draft to discard"));
}

#[cfg(unix)]
#[test]
fn a_refused_value_or_a_credential_is_said_with_its_line_and_kept() {
    let env = Env::with_project();
    env.write("decisions/orm.md", ORM);
    let odd = ORM.replace("kind: decision\n", "kind: decision\npinned: maybe\n");
    env.mem(["edit", "decisions/orm"])
        .env("VISUAL", writes(&env, "odd", &odd))
        .assert()
        .code(2)
        .stderr(contains(".orm.draft.md:3: `pinned` should be"));
    assert_eq!(fs::read_to_string(draft(&env)).unwrap(), odd);
    env.mem(["edit", "decisions/orm", "--discard"]).assert().success();
    let leaky = format!("{ORM}Deploy with AKIAIOSFODNN7EXAMPLE as the key.\n");
    env.mem(["edit", "decisions/orm"])
        .env("VISUAL", writes(&env, "leaky", &leaky))
        .assert()
        .code(2)
        .stderr(contains(".orm.draft.md:7: this looks like"));
    assert_eq!(env.read("decisions/orm.md"), ORM);
    env.mem(["edit", "decisions/orm", "--allow-secret"])
        .env("VISUAL", "true")
        .assert()
        .success()
        .stdout(contains("updated"));
    assert!(env.read("decisions/orm.md").contains("AKIAIOSFODNN7EXAMPLE"));
}

/// `mem edit decisions/orm` run on a terminal (`script`, from util-linux,
/// gives it one), with `answers` typed.
#[cfg(unix)]
fn on_a_terminal(env: &Env, editor: &str, answers: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mem = assert_cmd::cargo::cargo_bin("mem");
    let command = format!("'{}' edit decisions/orm", mem.display());
    let base = env.process(Vec::<&str>::new());
    let mut script = std::process::Command::new("script");
    script.args(["-q", "-e", "-c", &command, "/dev/null"]).env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            script.env(k, v);
        }
    }
    let mut child = script
        .env("VISUAL", editor)
        .env("TERM", "dumb")
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) runs a command on a terminal");
    child.stdin.take().unwrap().write_all(answers.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn on_a_terminal_the_editor_opens_again_or_the_draft_is_discarded() {
    let env = Env::with_project();
    env.write("decisions/orm.md", ORM);
    // First opening: a typo; second: fixed. The person answers "e".
    let counter = env.tmp.path().join("count");
    let fixed = TYPED.replace("[we moved", "we moved");
    let body = format!(
        "if [ -f '{c}' ]; then printf '%s' '{fixed}' > \"$1\"; else touch '{c}'; printf '%s' '{typed}' > \"$1\"; fi",
        c = counter.display(),
        fixed = fixed,
        typed = TYPED,
    );
    let out = on_a_terminal(&env, &editor(&env, "twice", &body), "e\n");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("(e)dit again, (d)iscard your changes, (k)eep the draft"), "{shown}");
    assert_eq!(
        env.read("decisions/orm.md").split("---\n").nth(2).unwrap(),
        fixed.split("---\n").nth(2).unwrap()
    );
    assert!(!draft(&env).exists());
    // "d": the typed text is dropped on purpose and the memory stays.
    let before = env.read("decisions/orm.md");
    let out = on_a_terminal(&env, &writes(&env, "typo", TYPED), "d\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(env.read("decisions/orm.md"), before);
    assert!(!draft(&env).exists());
    // "k": kept for later, exit 2.
    let out = on_a_terminal(&env, &writes(&env, "typo2", TYPED), "k\n");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(fs::read_to_string(draft(&env)).unwrap(), TYPED);
}

#[cfg(unix)]
#[test]
fn edit_sets_updated_in_the_form_the_file_uses() {
    let env = Env::with_project();
    let later = 90_061_001; // 1 day, 1 hour, 1 minute, 1.001 s after NOW
    let cases = [
        ("facts/iso", "updated: 2026-11-01T09:00:00Z\n", "updated: 2026-12-01T01:01:01Z\n"),
        ("facts/ms", "updated: 1791512156858\n", "updated: 1796086861001\n"),
        ("facts/day", "updated: 2026-11-01\n", "updated: 2026-12-01\n"),
        (
            "facts/offset",
            "updated: 2026-11-01 09:00:00.000+08:00\n",
            "updated: 2026-12-01 09:01:01.001+08:00\n",
        ),
    ];
    for (path, line, _) in cases {
        let text =
            format!("---\n# keep this comment\nkind: fact\n{line}tags: [a, b]\n---\nOld body.\n");
        env.write(&format!("{path}.md"), &text);
    }
    for (path, line, want) in cases {
        env.mem_at(["edit", path], later)
            .env("VISUAL", editor(&env, "body", "sed -i 's/Old body/New body/' \"$1\""))
            .assert()
            .success();
        let text =
            format!("---\n# keep this comment\nkind: fact\n{want}tags: [a, b]\n---\nNew body.\n");
        assert_eq!(env.read(&format!("{path}.md")), text, "{path} ({line})");
    }
    // An `updated` the person wrote is theirs.
    env.mem_at(["edit", "facts/iso"], later)
        .env("VISUAL", editor(&env, "own", "sed -i 's/^updated: .*/updated: 2025-01-01/' \"$1\""))
        .assert()
        .success();
    assert!(env.read("facts/iso.md").contains("updated: 2025-01-01\n"));
    // A new memory from the template says when, in ISO 8601.
    env.mem(["edit", "facts/brand-new"])
        .env("VISUAL", editor(&env, "title", "sed -i 's/^# Title/# Brand new/' \"$1\""))
        .assert()
        .success();
    let text = env.read("facts/brand-new.md");
    assert!(text.contains(&format!("created: {NOW_ISO}\nupdated: {NOW_ISO}\n")), "{text}");
}

#[cfg(unix)]
#[test]
fn history_lists_edits_newest_first_with_readable_names() {
    let env = Env::with_project();
    env.mem(["remember", "facts/a", "First text of the memory."]).assert().success();
    for (i, word) in ["Second", "Third", "Fourth"].iter().enumerate() {
        env.mem_at(["edit", "facts/a"], (i as i64 + 1) * 60_000)
            .env(
                "VISUAL",
                editor(&env, word, &format!("sed -i 's/^[A-Z][a-z]* text/{word} text/' \"$1\"")),
            )
            .assert()
            .success();
    }
    // Versions saved under one time (a fixed clock): numbered in order.
    for word in ["Fifth", "Sixth"] {
        env.mem_at(["edit", "facts/a"], 3 * 60_000)
            .env(
                "VISUAL",
                editor(&env, word, &format!("sed -i 's/^[A-Z][a-z]* text/{word} text/' \"$1\"")),
            )
            .assert()
            .success();
    }
    let history = env.json(["history", "facts/a"]);
    let names: Vec<String> = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let file = PathBuf::from(v["file"].as_str().unwrap());
            let text = fs::read_to_string(&file).unwrap();
            let word = text.lines().last().unwrap().split(' ').next().unwrap().to_string();
            format!("{} {word}", file.file_name().unwrap().to_string_lossy())
        })
        .collect();
    assert_eq!(
        names,
        [
            "2026-11-30T00-03-00.000Z-2.md Fifth",
            "2026-11-30T00-03-00.000Z.md Fourth",
            "2026-11-30T00-02-00.000Z.md Third",
            "2026-11-30T00-01-00.000Z.md Second",
            "2026-11-30T00-00-00.000Z.md First",
        ]
    );
}

#[test]
fn dates_in_every_form_read_alike_and_new_memories_are_iso() {
    let env = Env::with_project();
    let forms = [
        ("facts/ms", "1796280428497"),
        ("facts/quoted-ms", "'1796280428497'"),
        ("facts/iso", "2026-12-03T06:47:08.497Z"),
        ("facts/offset", "2026-12-03T14:47:08.497+08:00"),
        ("facts/compact-offset", "2026-12-03T14:47:08.497+0800"),
        ("facts/space", "2026-12-03 06:47:08.497"),
    ];
    for (path, value) in forms {
        env.write(&format!("{path}.md"), &format!("---\nupdated: {value}\n---\nA fact.\n"));
    }
    env.write("facts/day.md", "---\nupdated: 2026-12-03\n---\nA fact.\n");
    let list = env.json(["list"]);
    for m in list["memories"].as_array().unwrap() {
        let want =
            if m["path"] == "facts/day.md" { 1_796_256_000_000_i64 } else { 1_796_280_428_497 };
        assert_eq!(m["updated"], want, "{}", m["path"]);
    }
    env.mem(["compile"]).assert().success();
    // Read alike: no problem with any of them (lint only says they are
    // held back from agents until trusted, as files written by hand are).
    env.mem(["lint"]).assert().success().stdout(predicates::str::contains("no problems"));
    // `remember` writes ISO 8601 in UTC, and an update keeps each file's form.
    env.mem(["remember", "facts/new", "A brand new fact."]).assert().success();
    assert!(
        env.read("facts/new.md").contains(&format!("created: {NOW_ISO}\nupdated: {NOW_ISO}\n"))
    );
    let later = 10 * 86_400_000; // 2026-12-10T00:00:00Z
    for (path, value) in forms {
        env.mem_at(["remember", path, "--summary", "Changed"], later).assert().success();
        let after = env.read(&format!("{path}.md"));
        let want = match value {
            "1796280428497" => "1796860800000",
            "'1796280428497'" => "'1796860800000'",
            "2026-12-03T06:47:08.497Z" => "2026-12-10T00:00:00.000Z",
            "2026-12-03T14:47:08.497+08:00" => "2026-12-10T08:00:00.000+08:00",
            "2026-12-03T14:47:08.497+0800" => "2026-12-10T08:00:00.000+0800",
            _ => "2026-12-10 00:00:00.000",
        };
        // A missing `created` is the previous `updated`, in the same form.
        let text =
            format!("---\nupdated: {want}\nsummary: Changed\ncreated: {value}\n---\nA fact.\n");
        assert_eq!(after, text, "{path}");
    }
    // A clock behind the file's own date never moves `updated` back.
    env.mem(["remember", "facts/day", "--summary", "Changed"]).assert().success();
    assert!(env.read("facts/day.md").starts_with("---\nupdated: 2026-12-03\n"));
    // MEM_NOW takes an ISO date as well.
    let out = env
        .mem(["remember", "facts/dated", "Dated fact for the clock."])
        .env("MEM_NOW", "2027-01-02T03:04:05Z")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(env.read("facts/dated.md").contains("created: 2027-01-02T03:04:05.000Z\n"));
    assert_eq!(NOW, 1_795_996_800_000);
}

#[test]
fn mv_export_and_import_keep_each_date_form() {
    let env = Env::with_project();
    let text = "---\n# mine\nid: facts/a.md\ncreated: 1791512156858\nupdated: 2026-11-01\nkind: fact\n---\nBody text here.\n";
    env.write("facts/a.md", text);
    env.mem(["mv", "facts/a", "facts/b"]).assert().success();
    assert_eq!(env.read("facts/b.md"), text.replace("id: facts/a.md", "id: facts/b.md"));
    let export = env.tmp.path().join("all.json");
    env.mem(["export", "--output", export.to_str().unwrap()]).assert().success();
    let other = Env::with_project();
    other.mem(["import", export.to_str().unwrap()]).assert().success();
    let imported = other.read("facts/b.md");
    assert!(imported.contains("created: 1791512156858\nupdated: 2026-11-01\n"), "{imported}");
    assert_eq!(other.json(["inspect", "facts/b"])["memory"]["updated"], 1_793_491_200_000_i64);
}

#[cfg(unix)]
#[test]
fn a_kept_draft_is_not_committed_by_git_add_all() {
    let env = Env::new();
    let git = |args: &[&str]| {
        let out =
            std::process::Command::new("git").current_dir(env.work()).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    env.mem(["init"]).assert().success();
    env.mem(["edit", "decisions/orm"]).env("VISUAL", writes(&env, "typo", TYPED)).assert().code(2);
    assert!(draft(&env).is_file());
    git(&["add", "-A"]);
    let staged = git(&["diff", "--cached", "--name-only"]);
    assert!(!staged.contains("draft"), "{staged}");
    assert!(staged.contains(".memory/ROOT.md"), "{staged}");
}

#[cfg(unix)]
#[test]
fn a_forged_updated_still_names_a_version_history_lists() {
    let env = Env::with_project();
    env.write("facts/forged.md", "---\nupdated: 1e300\n---\nForged date, body text here.\n");
    env.mem(["edit", "facts/forged"])
        .env("VISUAL", editor(&env, "fix", "sed -i 's/Forged date/A date/' \"$1\""))
        .assert()
        .success();
    let history = env.json(["history", "facts/forged"]);
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{history}");
    let text = fs::read_to_string(versions[0]["file"].as_str().unwrap()).unwrap();
    assert!(text.contains("Forged date"), "{text}");
}
