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
    // The header (56 bytes) gives the lengths of the names part and of the
    // meta part, each checked whole; records, dictionaries and postings
    // follow them, each checked when read.
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let (names, meta) = (word(24), word(40));
    let flip = |range: std::ops::Range<usize>| {
        let mut flipped = bytes.clone();
        for b in &mut flipped[range] {
            *b ^= 0x5a;
        }
        flipped
    };
    let body = 56 + names + meta;
    let damaged: [Vec<u8>; 7] = [
        bytes[..bytes.len() / 2].to_vec(),
        b"not an index at all".to_vec(),
        Vec::new(),
        flip(56 + names / 2..56 + names / 2 + 1),
        flip(56 + names + meta / 2..56 + names + meta / 2 + 1),
        flip(body..bytes.len()),
        flip(bytes.len() - 1..bytes.len()),
    ];
    // The results, whatever note the answer carries.
    let results =
        |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap()["results"].clone();
    for (i, bad) in damaged.iter().enumerate() {
        fs::write(&index, bad).unwrap();
        assert_eq!(results(&recall(&env, "部署")), results(&expected), "damage {i}");
        // Damage in a part this query never reads is found by the query
        // that reads it; everything else is found at once.
        if i < 6 {
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

#[test]
fn concurrent_runs_share_the_cache_safely() {
    let env = Env::with_fixture("demo");
    let expected: Vec<String> = QUERIES.iter().map(|q| rescan(&env, q)).collect();
    // One thread keeps throwing the cache away, so the others race to
    // rebuild and replace it while reading it: every answer is whole.
    std::thread::scope(|s| {
        let env = &env;
        let expected = &expected;
        let workers: Vec<_> = (0..4)
            .map(|t| {
                s.spawn(move || {
                    for round in 0..6 {
                        if t == 0 {
                            let _ = fs::remove_dir_all(env.project().join(".cache"));
                        }
                        let k = (t + round) % QUERIES.len();
                        assert_eq!(recall(env, QUERIES[k]), expected[k], "{}", QUERIES[k]);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
    });
    let cached: Vec<String> = QUERIES.iter().map(|q| recall(&env, q)).collect();
    assert_eq!(cached, expected);
}

#[test]
fn settled_folders_are_trusted_only_as_far_as_they_hold() {
    let env = Env::with_fixture("demo");
    env.settle();
    let expected: Vec<String> = QUERIES.iter().map(|q| rescan(&env, q)).collect();
    // Built from a settled tree: each folder's files are looked up by name.
    let cached: Vec<String> = QUERIES.iter().map(|q| recall(&env, q)).collect();
    assert_eq!(cached, expected);

    // An edit in place leaves the folder's mtime alone: still seen.
    let tz = env.read("pitfalls/tz-offset.md").replace("timezone bug", "timezone bug, 部署 window");
    env.write("pitfalls/tz-offset.md", &tz);
    let edited = recall(&env, "部署 window");
    assert!(edited.contains("pitfalls/tz-offset.md"), "{edited}");
    assert_eq!(edited, rescan(&env, "部署 window"));

    // A file added changes its folder's mtime: the folder is read again.
    env.settle();
    recall(&env, "部署");
    env.write("facts/new-deploy-note.md", "---\nsummary: 部署 checklist\n---\nRun it.\n");
    assert!(recall(&env, "部署 checklist").contains("facts/new-deploy-note.md"));

    // A file deleted, and a file replaced by a folder, with the folders'
    // mtimes set back as if nothing happened: found out, not trusted.
    recall(&env, "部署");
    fs::remove_file(env.project().join("references/deploy-runbook.md")).unwrap();
    let orm = env.project().join("decisions/orm-prisma.md");
    fs::remove_file(&orm).unwrap();
    fs::create_dir(&orm).unwrap();
    env.settle();
    let out: serde_json::Value = serde_json::from_str(&recall(&env, "deploy ORM")).unwrap();
    let paths: Vec<&str> =
        out["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"decisions/orm-drizzle.md"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("deploy-runbook") || p.contains("orm-prisma")));
    let warnings = out["warnings"].to_string();
    assert!(warnings.contains("orm-prisma.md: nested folder"), "{warnings}");
}

#[test]
fn commands_through_the_cache_equal_a_full_read() {
    let env = Env::with_fixture("demo");
    env.write("facts/broken.md", "---\nsummary: [oops\n---\nx\n");
    env.write("facts/odd.md", "---\npinned: perhaps\n---\nodd pinned value\n");
    let run = |env: &Env| {
        let text = |out: std::process::Output| {
            (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        let list = text(env.mem(["list", "--json"]).output().unwrap());
        let context =
            text(env.mem(["context", "--json"]).env("MEM_TRUST_ALL", "1").output().unwrap());
        let inspect = text(env.mem(["inspect", "--json"]).output().unwrap());
        let detail =
            text(env.mem(["inspect", "--json", "decisions/orm-drizzle"]).output().unwrap());
        let prompt = text(env.mem(["prompt", "consolidate", "--json"]).output().unwrap());
        (list, context, inspect, detail, prompt)
    };
    for round in 0..2 {
        // Built index (the second time with one file changed since).
        recall(&env, "部署");
        assert!(env.project().join(".cache/index.bin").is_file());
        if round == 1 {
            env.write("facts/new-note.md", "---\nsummary: a new note\n---\nbody\n");
        }
        let cached = run(&env);
        fs::remove_dir_all(env.project().join(".cache")).unwrap();
        let fresh = run(&env);
        assert_eq!(cached, fresh, "round {round}");
        assert!(fresh.0.1.contains("broken.md") && fresh.0.1.contains("`pinned` should be"));
    }
}

#[test]
fn a_same_size_edit_with_its_mtime_put_back_is_seen() {
    let env = Env::with_fixture("demo");
    env.settle();
    let _ = recall(&env, "timestamptz");
    let file = env.project().join("pitfalls/tz-offset.md");
    let text = fs::read_to_string(&file).unwrap();
    let mtime = fs::metadata(&file).unwrap().modified().unwrap();
    // Same length, same mtime (what `touch -r` does): only the ctime moves.
    let edited = text.replacen("timestamptz", "zebracorner", 1);
    assert_eq!(edited.len(), text.len());
    fs::write(&file, &edited).unwrap();
    fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    let after = recall(&env, "zebracorner");
    assert!(after.contains("pitfalls/tz-offset.md"), "the cache kept the old text: {after}");
}

#[test]
fn files_written_as_the_cache_was_built_are_confirmed_once_old_enough() {
    let env = Env::with_project();
    // Written "now" (a second ahead, so a slow machine still builds the
    // cache within the two-second window): not trusted yet.
    let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
    for i in 0..20 {
        let rel = format!("facts/f{i}.md");
        env.write(&rel, &format!("---\nsummary: fact {i} about zebras\n---\nbody {i}\n"));
        let file = fs::File::options().write(true).open(env.project().join(&rel)).unwrap();
        file.set_modified(soon).unwrap();
    }
    let first = recall(&env, "zebras");
    let index = env.project().join(".cache/index.bin");
    let built = |b: &[u8]| u64::from_le_bytes(b[56..64].try_into().unwrap());
    let before = built(&fs::read(&index).unwrap());
    std::thread::sleep(std::time::Duration::from_millis(3100));
    // Read again, found as indexed: the cache now trusts them.
    assert_eq!(recall(&env, "zebras"), first);
    let after = built(&fs::read(&index).unwrap());
    assert!(after > before, "the cache was not confirmed");
    assert_eq!(recall(&env, "zebras"), first);
    // An edit after that is still seen.
    env.write("facts/f3.md", "---\nsummary: fact 3 about okapis\n---\nbody 3\n");
    assert!(recall(&env, "okapis").contains("facts/f3.md"));
}

#[test]
fn a_file_added_to_a_folder_whose_mtime_is_put_back_is_seen() {
    let env = Env::with_fixture("demo");
    env.settle();
    let _ = recall(&env, "zebracorn");
    let _ = recall(&env, "zebracorn");
    let facts = env.project().join("facts");
    let mtime = fs::metadata(&facts).unwrap().modified().unwrap();
    env.write("facts/zz.md", "---\nsummary: zebracorn hidden note\n---\nzebracorn body\n");
    fs::File::open(&facts).unwrap().set_modified(mtime).unwrap();
    assert!(
        recall(&env, "zebracorn").contains("facts/zz.md"),
        "the folder was trusted by its mtime"
    );
}
