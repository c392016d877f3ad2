//! The index cache only saves time: results with it, without it, after
//! edits, and after damage are the same as a full rescan.

use std::fs;

use crate::env::Env;

fn recall(env: &Env, query: &str) -> String {
    let out =
        env.mem(["recall", "--json", "--no-track", "-n", "20", "--", query]).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The same query on a cache-less copy of the tree.
fn rescan(env: &Env, query: &str) -> String {
    let cache = env.project().join(".cache");
    let _ = fs::remove_dir_all(&cache);
    recall(env, query)
}

const QUERIES: [&str; 4] = ["部署", "deploy migration", "timezone bug", "PostgreSQL 连接池"];

#[test]
fn cached_results_equal_a_full_rescan() {
    let env = Env::with_fixture("demo");
    let first: Vec<String> = QUERIES.iter().map(|q| recall(&env, q)).collect();
    assert!(env.project().join(".cache/index.bin").is_file());
    let cached: Vec<String> = QUERIES.iter().map(|q| recall(&env, q)).collect();
    assert_eq!(first, cached);
}

#[test]
fn edits_additions_and_deletions_show_up_at_once() {
    let env = Env::with_fixture("demo");
    for q in QUERIES {
        recall(&env, q);
    }
    // Edit (same size is not assumed: the mtime moves too), add, delete.
    let tz = env.read("pitfalls/tz-offset.md").replace("timezone bug", "timezone bug, 部署 window");
    env.write("pitfalls/tz-offset.md", &tz);
    env.write("facts/new-deploy-note.md", "---\nsummary: deploy migration checklist for 部署\n---\nRun migrations before the deploy.\n");
    fs::remove_file(env.project().join("references/deploy-runbook.md")).unwrap();
    for q in QUERIES {
        let incremental = recall(&env, q);
        assert!(!incremental.contains("deploy-runbook.md"));
        assert_eq!(incremental, rescan(&env, q), "{q}");
    }
    assert!(recall(&env, "deploy migration checklist").contains("facts/new-deploy-note.md"));
}

#[test]
fn a_damaged_cache_is_rebuilt_not_trusted() {
    let env = Env::with_fixture("demo");
    let expected = recall(&env, "部署");
    let index = env.project().join(".cache/index.bin");
    let bytes = fs::read(&index).unwrap();
    // The header (40 bytes) gives the length of the meta part, checked
    // whole on open; records, dictionaries and postings follow it, each
    // checked when read.
    let meta = u64::from_le_bytes(bytes[24..32].try_into().unwrap()) as usize;
    let flip = |range: std::ops::Range<usize>| {
        let mut flipped = bytes.clone();
        for b in &mut flipped[range] {
            *b ^= 0x5a;
        }
        flipped
    };
    let damaged: [Vec<u8>; 6] = [
        bytes[..bytes.len() / 2].to_vec(),
        b"not an index at all".to_vec(),
        Vec::new(),
        flip(40 + meta / 2..40 + meta / 2 + 1),
        flip(40 + meta..bytes.len()),
        flip(bytes.len() - 1..bytes.len()),
    ];
    for (i, bad) in damaged.iter().enumerate() {
        fs::write(&index, bad).unwrap();
        assert_eq!(recall(&env, "部署"), expected, "damage {i}");
        // Damage in a part this query never reads is found by the query
        // that reads it; everything else is found at once.
        if i < 5 {
            assert_ne!(&fs::read(&index).unwrap(), bad, "damage {i} was rebuilt");
        }
    }
}

#[test]
fn problems_in_files_are_still_reported_from_the_cache() {
    let env = Env::with_fixture("demo");
    env.write("facts/broken.md", "---\nsummary: [oops\n---\nx\n");
    env.write("facts/odd.md", "---\npinned: perhaps\n---\nodd pinned value\n");
    for _ in 0..2 {
        let out = env.mem(["recall", "--no-track", "odd"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("broken.md") && stderr.contains("invalid YAML"), "{stderr}");
        assert!(stderr.contains("`pinned` should be true or false"), "{stderr}");
    }
}

#[test]
fn no_progress_line_when_piped() {
    let env = Env::with_project();
    for i in 0..2100 {
        env.write(&format!("facts/n{i}.md"), &format!("note {i} about deploy window {}\n", i % 7));
    }
    let out = env.mem(["recall", "--no-track", "-n", "1", "deploy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("indexing"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.project().join(".cache/index.bin").is_file());
}

#[test]
fn an_edit_in_the_same_clock_tick_is_not_missed() {
    let env = Env::with_fixture("demo");
    env.write("facts/racy.md", "alpha racy note\n");
    let file = env.project().join("facts/racy.md");
    let mtime = fs::metadata(&file).unwrap().modified().unwrap();
    assert!(recall(&env, "alpha racy").contains("facts/racy.md"));
    // Same size, same mtime: only the content changed, as an edit in the
    // same tick as the cache build would look.
    fs::write(&file, "gamma racy note\n").unwrap();
    fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    assert!(recall(&env, "gamma").contains("facts/racy.md"));
    assert!(!recall(&env, "alpha").contains("facts/racy.md"));
}
