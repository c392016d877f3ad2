//! Hand-written files: whatever people put in the tree is read leniently,
//! reported when it cannot be read, and never rewritten or deleted.

use std::fs;

use predicates::str::contains;

use crate::env::Env;

fn titles(env: &Env) -> Vec<(String, String)> {
    let v = env.json(["list"]);
    v["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().into(), m["title"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn odd_but_valid_files_are_read() {
    let env = Env::with_project();
    env.write("facts/plain.md", "# Plain\n\nno frontmatter at all\n");
    env.write("facts/empty.md", "---\n---\n# Empty FM\n");
    env.write("facts/crlf.md", "---\r\nkind: pitfall\r\n---\r\n# CRLF\r\n\r\nwindows text\r\n");
    env.write("facts/bom.md", "\u{feff}---\nsummary: with bom\n---\n# BOM\n");
    env.write("facts/dashes.md", "---\ntitle: Dashes\n---\nintro\n\n---\n\nafter rule\n");
    env.write(
        "facts/iso.md",
        "---\ncreated: 2024-01-02\nupdated: 2024-01-03T10:00:00+08:00\n---\nx\n",
    );
    env.write("facts/lw.md", "---\nload_when: 部署，deploy, ci\n---\nx\n");
    let got = titles(&env);
    let want: Vec<(String, String)> = [
        ("facts/bom.md", "BOM"),
        ("facts/crlf.md", "CRLF"),
        ("facts/dashes.md", "Dashes"),
        ("facts/empty.md", "Empty FM"),
        ("facts/iso.md", "iso"),
        ("facts/lw.md", "lw"),
        ("facts/plain.md", "Plain"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    let iso = env.json(["inspect", "facts/iso"]);
    assert_eq!(iso["memory"]["created"], 1_704_153_600_000_i64);
    assert_eq!(iso["memory"]["updated"], 1_704_247_200_000_i64);
    let lw = env.json(["inspect", "facts/lw"]);
    assert_eq!(lw["memory"]["load_when"], serde_json::json!(["部署", "deploy", "ci"]));
    let crlf = env.json(["inspect", "facts/crlf"]);
    assert_eq!(crlf["memory"]["summary"], "windows text");
    assert_eq!(crlf["memory"]["kind"], "pitfall");
}

#[test]
fn updating_crlf_bom_file_keeps_its_style() {
    let env = Env::with_project();
    let original = "\u{feff}---\r\nkind: fact\r\n---\r\n# T\r\n\r\nbody\r\n";
    env.write("facts/win.md", original);
    env.mem(["remember", "facts/win", "--highlight", "keep CRLF"]).assert().success();
    let text = env.read("facts/win.md");
    assert!(
        text.starts_with("\u{feff}---\r\nkind: fact\r\nhighlight: keep CRLF\r\ncreated: "),
        "{text:?}"
    );
    assert!(text.ends_with("\r\n---\r\n# T\r\n\r\nbody\r\n"), "{text:?}");
    assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
}

#[test]
fn malformed_files_are_reported_and_left_byte_identical() {
    let env = Env::with_project();
    let cases = [
        (
            "facts/bad-yaml.md",
            "---\nkind: fact\nsummary: [unclosed\n---\nbody\n".as_bytes().to_vec(),
        ),
        ("facts/unclosed.md", b"---\nkind: fact\n# body without end\n".to_vec()),
        ("facts/latin1.md", b"---\nkind: fact\n---\ncaf\xe9\n".to_vec()),
        ("facts/huge.md", vec![b'a'; (1 << 20) + 1]),
    ];
    for (rel, bytes) in &cases {
        let path = env.project().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
    }
    env.write("facts/good.md", "fine\n");
    let out = env.mem(["list"]).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("bad-yaml.md:4: invalid YAML"), "{stderr}");
    assert!(
        stderr.contains("unclosed.md:1: the frontmatter opened on line 1 is never closed"),
        "{stderr}"
    );
    assert!(stderr.contains("latin1.md: file is not valid UTF-8"), "{stderr}");
    assert!(stderr.contains("huge.md: file is 1048577 bytes, over the 1 MiB limit"), "{stderr}");
    assert_eq!(titles(&env).len(), 1);
    let overview = env.json(["inspect"]);
    assert_eq!(overview["problems"].as_array().unwrap().len(), 4);
    // Writing to a file that cannot be parsed is refused, not forced.
    env.mem(["remember", "facts/bad-yaml", "--summary", "x"])
        .assert()
        .code(2)
        .stderr(contains("bad-yaml.md:4"));
    env.mem(["inspect", "facts/bad-yaml"]).assert().code(2).stderr(contains("invalid YAML"));
    for (rel, bytes) in &cases {
        assert_eq!(&fs::read(env.project().join(rel)).unwrap(), bytes, "{rel} changed");
    }
}

#[test]
fn misplaced_files_are_reported_not_skipped_silently() {
    let env = Env::with_project();
    env.write("loose.md", "top-level memory\n");
    env.write("Bad Category/x.md", "x\n");
    env.write("facts/nested/deep.md", "x\n");
    env.write("facts/bad name.md", "x\n");
    env.write("facts/index.md", "# generated index\n");
    env.write(".trash/facts/old.1.md", "trashed\n");
    env.write(".history/facts/a/1.md", "old\n");
    env.write("facts/notes.txt", "not markdown\n");
    let v = env.json(["inspect"]);
    let problems: Vec<String> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().rsplit(".memory/").next().unwrap().to_string())
        .collect();
    assert_eq!(problems, ["Bad Category", "facts/bad name.md", "facts/nested", "loose.md"]);
    assert_eq!(v["roots"][0]["memory_count"], 0);
}

#[test]
fn wrong_field_shapes_are_warned_and_defaulted() {
    let env = Env::with_project();
    env.write("facts/odd.md", "---\npinned: perhaps\ncreated: next week\n---\nstill here\n");
    env.mem(["list"]).assert().success().stderr(contains("`pinned` should be true or false"));
    let v = env.json(["inspect", "facts/odd"]);
    assert_eq!(v["memory"]["pinned"], false);
    assert_eq!(v["memory"]["summary"], "still here");
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_root_are_not_written_through() {
    let env = Env::with_project();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.md"), "outside text\n").unwrap();
    std::os::unix::fs::symlink(&outside, env.project().join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), env.project().join("facts/secret.md"))
        .unwrap();
    env.mem(["remember", "linked/new", "text"]).assert().code(2).stderr(contains("symlink"));
    env.mem(["remember", "facts/secret", "--summary", "x"])
        .assert()
        .code(2)
        .stderr(contains("symlink"));
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(fs::read_to_string(outside.join("secret.md")).unwrap(), "outside text\n");
}
