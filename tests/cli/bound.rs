//! ROOT.md stays within 200 lines and 25 KB, hand-written text included,
//! however large the tree: its tables keep the pinned memories, the rules
//! and the most recently changed first, and say how many rows they leave
//! out; each `index.md` keeps every row, and agents get every rule.

use std::fs;

use predicates::prelude::*;
use predicates::str::contains;

use crate::env::{Env, NOW};

const DAY: i64 = 86_400_000;
const CATEGORIES: [&str; 6] = ["facts", "decisions", "pitfalls", "rules", "references", "ops"];

/// How many days before now memory `i` of a generated tree last changed.
fn age(i: usize) -> i64 {
    i as i64 * 37 % 400
}

/// Memory `i` of a generated tree, as a file: in category `i % 6`
/// (`rules` for 3), every 997th pinned, one in 990 of high relevance and
/// one of low, `age(i)` days old, with a trigger `topic {i}` when `trigger`.
fn write_memory(env: &Env, i: usize, trigger: bool) {
    let category = CATEGORIES[i % CATEGORIES.len()];
    let updated = NOW - age(i) * DAY;
    let mut text = format!("---\nsummary: Note {i} about the release train.\nupdated: {updated}\n");
    if trigger {
        text.push_str(&format!("load_when:\n  - topic {i}\n"));
    }
    if i.is_multiple_of(997) {
        text.push_str("pinned: true\n");
    }
    match i % 990 {
        132 => text.push_str("relevance: high\n"),
        66 => text.push_str("relevance: low\n"),
        _ => {}
    }
    text.push_str(&format!("---\n# Note {i}\n\nWhat note {i} says.\n"));
    env.write(&format!("{category}/note-{i}.md"), &text);
}

/// The lines of ROOT.md's routing region.
fn routing(root: &str) -> Vec<&str> {
    let from = root.find("<!-- auto:begin routing -->").unwrap();
    root[from..].lines().skip(1).take_while(|l| !l.starts_with("<!-- auto:end")).collect()
}

#[test]
fn a_ten_thousand_memory_tree_keeps_root_md_within_its_bound() {
    let env = Env::with_project();
    // 10,000 memories, 300 of them with a trigger.
    let triggered = |i: usize| i.is_multiple_of(33) && i < 300 * 33;
    for i in 0..10_000 {
        write_memory(&env, i, triggered(i));
    }
    env.mem(["compile"]).assert().success();
    let root = env.read("ROOT.md");
    assert!(root.lines().count() <= 200, "{} lines", root.lines().count());
    assert!(root.len() <= 25_000, "{} bytes", root.len());
    // The routing table shows some rows and counts the rest.
    let rows: Vec<&str> = routing(&root).into_iter().filter(|l| l.starts_with("| ")).collect();
    let shown = rows.len() - 1;
    assert!(shown > 100, "{root}");
    let last = *routing(&root).last().unwrap();
    assert!(last.starts_with(&format!("_…and {} more triggers.", 300 - shown)), "{last}");
    assert!(last.contains("`index.md`") && last.contains("`mem list`"), "{last}");
    assert!(rows[0].ends_with("| updated |"), "{}", rows[0]);
    // Pinned first, then rules, then high relevance, then the newest, low
    // relevance last: the pinned memory's trigger is shown, every rule's,
    // every high one's, the newest notes', not the oldest's nor a low one's.
    assert!(root.contains("| topic 0 | [facts/note-0.md](facts/note-0.md) | fact | "), "{root}");
    let triggers: Vec<usize> = (0..10_000).filter(|i| triggered(*i)).collect();
    let shows = |i: &usize| root.contains(&format!("| topic {i} |"));
    let (rule, high, low) =
        (|i: &usize| i % 6 == 3, |i: &usize| i % 990 == 132, |i: &usize| i % 990 == 66);
    assert!(triggers.iter().filter(|i| rule(i)).all(shows), "{root}");
    assert!(triggers.iter().filter(|i| high(i) && !rule(i)).all(shows), "{root}");
    assert!(root.contains(" (high) |"), "{root}");
    assert!(!triggers.iter().filter(|i| low(i) && !rule(i)).any(shows), "{root}");
    let notes = || triggers.iter().filter(|i| !rule(i) && !high(i) && !low(i) && **i != 0);
    let newest = notes().map(|i| age(*i)).min().unwrap();
    let oldest = notes().map(|i| age(*i)).max().unwrap();
    assert!(notes().filter(|i| age(**i) == newest).all(shows), "{root}");
    assert!(!notes().filter(|i| age(**i) == oldest).any(shows), "{root}");
    // Each index is whole.
    let indexed: usize = CATEGORIES
        .iter()
        .map(|c| {
            env.read(&format!("{c}/index.md")).lines().filter(|l| l.starts_with("| [")).count()
        })
        .sum();
    assert_eq!(indexed, 10_000);
    // What compile writes is what the check expects, and stays so.
    env.mem(["compile", "--check"]).assert().success();
    env.mem(["compile"]).assert().success().stdout("up to date\n");
}

#[test]
fn every_rule_reaches_agents_whatever_root_md_shows() {
    let env = Env::with_project();
    // 60 rules with 4 triggers each, and older notes: more rule rows than
    // ROOT.md holds.
    for i in 0..60 {
        let triggers: String = (0..4).map(|k| format!("  - rule {i} case {k}\n")).collect();
        let updated = NOW - i * DAY;
        env.write(
            &format!("rules/rule-{i}.md"),
            &format!(
                "---\nupdated: {updated}\nload_when:\n{triggers}---\n# Rule {i}\n\nAlways do thing {i}.\n"
            ),
        );
    }
    for i in 1..=300 {
        write_memory(&env, i * 6, true);
    }
    env.mem(["compile"]).assert().success();
    let root = env.read("ROOT.md");
    assert!(root.lines().count() <= 200 && root.len() <= 25_000);
    assert!(root.contains("| rule 0 case 0 |"), "{root}");
    assert!(!root.contains("| rule 59 case 3 |"), "{root}");
    // No note is shown while rules are left out.
    assert!(!root.contains("| topic "), "{root}");
    env.mem(["trust", "--yes"]).assert().success();
    let context = env.stdout(["context", "--budget", "20000"]);
    for i in 0..60 {
        assert!(context.contains(&format!("Always do thing {i}.")), "rule {i}: {context}");
    }
    // The routing table agents read comes from the memories, not ROOT.md.
    assert!(context.contains("rule 59 case 3"), "{context}");
}

#[test]
fn hand_written_text_over_the_bound_leaves_each_table_one_line_and_lint_says_so() {
    let env = Env::with_project();
    env.mem(["remember", "decisions/orm", "Drizzle over Prisma.", "--load-when", "ORM choice"])
        .assert()
        .success();
    let root = env.read("ROOT.md");
    let long: String = (0..220).map(|i| format!("- A long-winded goal number {i}.\n")).collect();
    fs::write(
        env.project().join("ROOT.md"),
        root.replace("## Goals\n", &format!("## Goals\n{long}")),
    )
    .unwrap();
    env.mem(["compile"]).assert().success();
    let root = env.read("ROOT.md");
    // Each table is its last line: how many rows, and where they are.
    let body = routing(&root);
    assert_eq!(body.len(), 1, "{root}");
    assert!(body[0].starts_with("_…and 1 more triggers. "), "{root}");
    assert!(body[0].contains("<!-- mem:more total=1 bytes="), "{root}");
    let from = root.find("<!-- auto:begin registry -->").unwrap();
    let registry: Vec<&str> = root[from..].lines().skip(1).take(2).collect();
    assert!(registry[0].starts_with("_…and 1 more categories: "), "{root}");
    assert_eq!(registry[1], "<!-- auto:end -->");
    env.mem(["compile", "--check"]).assert().success();
    let file = env.project().join("ROOT.md");
    env.mem(["lint"])
        .assert()
        .success()
        .stdout(contains(file.display().to_string()))
        .stdout(contains("its hand-written text alone is"))
        .stdout(contains("move long sections into memories"));
    // Within the bound again: the tables are whole, and lint is quiet.
    let root = env.read("ROOT.md");
    fs::write(&file, root.replace(&long, "")).unwrap();
    env.mem(["compile"]).assert().success();
    assert!(
        env.read("ROOT.md")
            .contains("| ORM choice | [decisions/orm.md](decisions/orm.md) | decision |\n")
    );
    env.mem(["lint"]).assert().success().stdout(contains("its hand-written").not());
}
