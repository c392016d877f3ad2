//! A long-lived `mem mcp` lists its roots from file-system events: after
//! any change (an edit in place or by rename, an addition, a removal, a
//! folder renamed, a branch checked out, the root folder replaced, changes
//! the kernel's event queue overflowed on) its answers equal a fresh
//! process's, from the first call that starts a second after the change.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::env::Env;
use crate::rpc;

/// `mem mcp`, running, spoken to one call at a time.
struct Server {
    child: Child,
    input: ChildStdin,
    replies: mpsc::Receiver<Value>,
    next: u64,
}

impl Server {
    fn start(env: &Env, vars: &[(&str, &str)]) -> Server {
        Server::spawn(env, vars, Stdio::null())
    }

    /// [`Server::start`], its stderr written to `log`.
    fn start_logging(env: &Env, vars: &[(&str, &str)], log: &Path) -> Server {
        Server::spawn(env, vars, fs::File::create(log).unwrap().into())
    }

    fn spawn(env: &Env, vars: &[(&str, &str)], stderr: Stdio) -> Server {
        let mut cmd = env.process(["mcp"]);
        cmd.envs(vars.iter().copied());
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr);
        let mut child = cmd.spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        // The handshake's `initialize` is request 1.
        let mut server = Server { child, input, replies, next: 2 };
        let [initialize, initialized] = rpc::handshake("t");
        server.send(&initialize);
        server.reply(1);
        server.send(&initialized);
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.reply(id)
    }

    /// The reply to request `id` (what comes before it is passed over).
    fn reply(&mut self, id: u64) -> Value {
        loop {
            let reply = self.replies.recv_timeout(Duration::from_secs(60)).expect("a reply");
            if reply["id"] == id {
                return reply;
            }
        }
    }

    /// Whether a notification of `method` comes within `wait` (replies to
    /// nothing asked are passed over).
    fn notified(&mut self, method: &str, wait: Duration) -> bool {
        let until = std::time::Instant::now() + wait;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.replies.recv_timeout(left) {
                Ok(message) if message["method"] == method => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// What `memory_recall` answers for `query`, as the report's JSON.
    fn recall(&mut self, query: &str) -> Value {
        let args = json!({"query": query, "limit": 10, "track": false});
        let reply = self.request("tools/call", json!({"name": "memory_recall", "arguments": args}));
        let text = reply["result"]["content"][0]["text"].as_str().expect("a text answer");
        serde_json::from_str(text).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `MEM_TRUST_ALL=1`, as in CI: every test but the trust one.
const ALL: (&str, &str) = ("MEM_TRUST_ALL", "1");

fn fresh(env: &Env, query: &str) -> Value {
    let out = env
        .mem(["recall", "--json", "--no-track", "-n", "10", "--", query])
        .env(ALL.0, ALL.1)
        .output()
        .unwrap();
    // 1: nothing matched (the report still comes, with no results).
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn paths(report: &Value) -> Vec<String> {
    let results = report["results"].as_array().unwrap();
    results.iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
}

/// Wait out the second the watch is given, then ask both ways.
fn same(env: &Env, server: &mut Server, queries: &[&str]) -> Vec<Vec<String>> {
    std::thread::sleep(Duration::from_millis(1100));
    // The server answers first: a fresh process refreshes the cache files,
    // which must not be what brings the server up to date.
    let served: Vec<Value> = queries.iter().map(|q| server.recall(q)).collect();
    let fresh: Vec<Value> = queries.iter().map(|q| fresh(env, q)).collect();
    for ((q, served), fresh) in queries.iter().zip(&served).zip(&fresh) {
        assert_eq!(served, fresh, "the server and a fresh process differ for {q:?}");
    }
    served.iter().map(paths).collect()
}

fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\nsummary: {title}\nkind: fact\n---\n{body}\n")
}

#[test]
fn watched_answers_follow_edits_renames_removals_and_a_replaced_root() {
    let env = Env::with_fixture("demo");
    env.settle();
    let mut server = Server::start(&env, &[ALL]);
    let queries = ["zebracorn", "quokka", "deploy", "staging"];
    let before = same(&env, &mut server, &queries);
    assert!(before[0].is_empty() && before[1].is_empty(), "{before:?}");

    // An edit in place: the file keeps its inode.
    let staging = env.project().join("facts/staging-cluster.md");
    let mut text = fs::read_to_string(&staging).unwrap();
    text.push_str("\nThe zebracorn dashboard shows its load.\n");
    fs::OpenOptions::new().write(true).open(&staging).unwrap().write_all(text.as_bytes()).unwrap();
    let found = same(&env, &mut server, &queries);
    assert_eq!(found[0], ["facts/staging-cluster.md"]);

    // An editor's save: a new file renamed over the old one.
    let tmp = env.project().join("facts/.staging-cluster.md.swp");
    fs::write(&tmp, text.replace("zebracorn", "quokka")).unwrap();
    fs::rename(&tmp, &staging).unwrap();
    let found = same(&env, &mut server, &queries);
    assert!(found[0].is_empty(), "{found:?}");
    assert_eq!(found[1], ["facts/staging-cluster.md"]);

    // A memory added, another removed, a category folder renamed.
    env.write(
        "pitfalls/zebracorn-cache.md",
        &memory("Zebracorn cache", "zebracorn keeps stale keys"),
    );
    fs::remove_file(&staging).unwrap();
    fs::rename(env.project().join("references"), env.project().join("guides")).unwrap();
    let found = same(&env, &mut server, &queries);
    assert_eq!(found[0], ["pitfalls/zebracorn-cache.md"]);
    assert!(found[1].is_empty(), "{found:?}");
    assert!(found[2].iter().any(|p| p.starts_with("guides/")), "{found:?}");

    // The whole root folder replaced by a copy with one more memory.
    let old = env.work().join(".memory-old");
    fs::rename(env.project(), &old).unwrap();
    crate::env::copy_dir(&old, &env.project());
    env.write("facts/quokka-ops.md", &memory("Quokka ops", "quokka runs the night shift"));
    let found = same(&env, &mut server, &queries);
    assert_eq!(found[1], ["facts/quokka-ops.md"]);
    // The new folder is watched in turn.
    env.write("facts/ibis.md", &memory("Ibis", "the ibis queue drains at night"));
    let found = same(&env, &mut server, &["ibis"]);
    assert_eq!(found[0], ["facts/ibis.md"]);
}

fn git(env: &Env, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(env.work())
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn watched_answers_follow_a_branch_checkout_of_a_thousand_files() {
    let env = Env::with_fixture("demo");
    git(&env, &["init", "-q", "-b", "main"]);
    for i in 0..1000 {
        let body = format!("note {i} about the lynx service");
        env.write(&format!("notes/n{i:04}.md"), &memory(&format!("Lynx note {i}"), &body));
    }
    git(&env, &["add", "-A"]);
    git(&env, &["commit", "-q", "-m", "lynx"]);
    git(&env, &["checkout", "-q", "-b", "otter"]);
    for i in 0..1000 {
        let body = format!("note {i} about the otter service");
        env.write(&format!("notes/n{i:04}.md"), &memory(&format!("Otter note {i}"), &body));
    }
    git(&env, &["commit", "-q", "-am", "otter"]);
    git(&env, &["checkout", "-q", "main"]);
    // Files long settled: a cache that holds them is trusted without reading.
    env.settle();
    let mut server = Server::start(&env, &[ALL]);
    let queries = ["lynx", "otter", "note 123"];
    let on_main = same(&env, &mut server, &queries);
    assert_eq!(on_main[0].len(), 10);
    assert!(on_main[1].is_empty(), "{on_main:?}");
    git(&env, &["checkout", "-q", "otter"]);
    let on_otter = same(&env, &mut server, &queries);
    assert!(on_otter[0].is_empty(), "{on_otter:?}");
    assert_eq!(on_otter[1].len(), 10);
    git(&env, &["checkout", "-q", "main"]);
    assert_eq!(same(&env, &mut server, &queries), on_main);
}

#[test]
fn a_watched_tree_of_any_size_announces_an_edit_in_place() {
    // More files than a root that is not watched has looked at (4,096),
    // and one folder past them: a file there, edited in place, is
    // announced all the same.
    let env = Env::with_fixture("demo");
    for (folder, count) in [("bulk", 4100), ("zz-bulk", 10)] {
        let dir = env.project().join(folder);
        fs::create_dir_all(&dir).unwrap();
        for i in 0..count {
            let text = memory(&format!("Bulk {i}"), "bulk");
            fs::write(dir.join(format!("m{i:04}.md")), text).unwrap();
        }
    }
    env.settle();
    let mut server = Server::start(&env, &[ALL]);
    let changed = "notifications/resources/list_changed";
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!server.notified(changed, Duration::from_millis(2500)), "nothing changed yet");
    let last = env.project().join("zz-bulk/m0009.md");
    let text = memory("Bulk 9 quetzal", "bulk");
    fs::OpenOptions::new().write(true).open(&last).unwrap().write_all(text.as_bytes()).unwrap();
    assert!(server.notified(changed, Duration::from_secs(10)), "the edit was not announced");
    assert_eq!(paths(&server.recall("quetzal")), ["zz-bulk/m0009.md"]);
}

#[test]
fn without_events_the_server_lists_by_stat_and_answers_the_same() {
    let env = Env::with_fixture("demo");
    let mut server = Server::start(&env, &[ALL, ("MEM_WATCH", "off")]);
    same(&env, &mut server, &["zebracorn"]);
    env.write("facts/zebracorn.md", &memory("Zebracorn", "zebracorn"));
    let found = same(&env, &mut server, &["zebracorn"]);
    assert_eq!(found[0], ["facts/zebracorn.md"]);
}

#[test]
fn watched_answers_follow_trust_given_again() {
    // What an agent gets is gated by trust: compared with a fresh server.
    let env = Env::with_fixture("demo");
    env.mem(["trust", "--yes"]).assert().success();
    env.settle();
    let mut server = Server::start(&env, &[]);
    let mut both = |q: &str| {
        std::thread::sleep(Duration::from_millis(1100));
        let served = server.recall(q);
        assert_eq!(served, Server::start(&env, &[]).recall(q), "{q:?}");
        paths(&served)
    };
    assert!(both("staging").contains(&"facts/staging-cluster.md".to_string()));
    // Changed by hand: held back from agents until trusted again.
    let staging = env.project().join("facts/staging-cluster.md");
    let text = fs::read_to_string(&staging).unwrap() + "\nzebracorn\n";
    fs::OpenOptions::new().write(true).open(&staging).unwrap().write_all(text.as_bytes()).unwrap();
    assert!(both("zebracorn").is_empty());
    env.mem(["trust", "--yes"]).assert().success();
    assert_eq!(both("zebracorn"), ["facts/staging-cluster.md"]);
}

#[test]
fn watched_context_follows_edits_as_a_fresh_server_sees_them() {
    let env = Env::with_fixture("demo");
    env.settle();
    let mut server = Server::start(&env, &[ALL]);
    let mut both = |what: &str| {
        std::thread::sleep(Duration::from_millis(1100));
        let args = json!({"query": "staging deploy"});
        let params = json!({"name": "memory_context", "arguments": args});
        let served = server.request("tools/call", params.clone());
        let fresh = Server::start(&env, &[ALL]).request("tools/call", params);
        assert_eq!(served["result"], fresh["result"], "{what}");
        served["result"]["content"][0]["text"].as_str().unwrap().to_string()
    };
    // The third call on an unchanged tree takes the memories the server
    // kept; the same holds after the edits.
    let before = both("at start");
    assert_eq!(both("again"), before);
    assert_eq!(both("a third time"), before);
    // A rule edited in place, a memory renamed, a new one the query finds.
    let rule = env.project().join("rules/deploy-pnpm.md");
    let text = fs::read_to_string(&rule).unwrap().replace("pnpm", "pnpm (zebracorn)");
    fs::OpenOptions::new().write(true).open(&rule).unwrap().write_all(text.as_bytes()).unwrap();
    let staging = env.project().join("facts/staging-cluster.md");
    fs::rename(&staging, env.project().join("facts/staging-k8s.md")).unwrap();
    env.write("facts/staging-dns.md", &memory("Staging DNS", "staging deploy uses stg.example"));
    let after = both("after the edits");
    assert_eq!(both("after the edits, again"), after);
    assert_eq!(both("after the edits, a third time"), after);
    assert!(after.contains("zebracorn") && !before.contains("zebracorn"), "{after}");
    assert!(after.contains("staging-dns"), "{after}");
}

#[test]
fn watched_answers_follow_a_root_link_pointed_at_another_folder() {
    // `.memory` a link to a folder of the project (allowed), then pointed
    // at another: nothing changes inside the folder first watched.
    let env = Env::with_fixture("demo");
    let (a, b) = (env.work().join("store/a"), env.work().join("store/b"));
    fs::create_dir_all(env.work().join("store")).unwrap();
    fs::rename(env.project(), &a).unwrap();
    crate::env::copy_dir(&a, &b);
    fs::write(b.join("facts/zebracorn.md"), memory("Zebracorn", "zebracorn on b")).unwrap();
    std::os::unix::fs::symlink("store/a", env.project()).unwrap();
    crate::env::settle(&a);
    let mut server = Server::start(&env, &[ALL]);
    assert!(same(&env, &mut server, &["zebracorn"])[0].is_empty());
    let link = env.work().join(".memory-next");
    std::os::unix::fs::symlink("store/b", &link).unwrap();
    fs::rename(&link, env.project()).unwrap();
    assert_eq!(same(&env, &mut server, &["zebracorn"])[0], ["facts/zebracorn.md"]);
    // And back: the folder first watched is watched again.
    std::os::unix::fs::symlink("store/a", &link).unwrap();
    fs::rename(&link, env.project()).unwrap();
    assert!(same(&env, &mut server, &["zebracorn"])[0].is_empty());
}

/// Sends `signal` (`STOP`, `CONT`) to the server.
#[cfg(target_os = "linux")]
fn signal(server: &Server, signal: &str) {
    let pid = server.child.id().to_string();
    let status = std::process::Command::new("kill").args(["-s", signal, &pid]).status().unwrap();
    assert!(status.success(), "kill -s {signal} {pid}");
}

#[test]
#[cfg(target_os = "linux")]
fn watched_answers_follow_changes_lost_in_an_event_queue_overflow() {
    // The kernel keeps at most this many events for a watcher that does not
    // read them; past it, one overflow event and the rest are dropped.
    let limit = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events").unwrap_or_default();
    let limit: usize = limit.trim().parse().unwrap_or(usize::MAX);
    if !crate::tools::available(
        limit <= 1 << 20,
        &format!(
            "an inotify event queue it can overflow (fs.inotify.max_queued_events is {limit})"
        ),
        "run it where `sysctl fs.inotify.max_queued_events` is at most 1048576 (the default is 16384)",
    ) {
        return;
    }
    let env = Env::with_fixture("demo");
    // A hidden folder, watched from the start, whose events change nothing.
    let scratch = env.project().join(".scratch");
    fs::create_dir(&scratch).unwrap();
    env.settle();
    let log = env.tmp.path().join("mcp.log");
    let mut server = Server::start_logging(&env, &[ALL], &log);
    let queries = ["zebracorn", "staging"];
    assert!(same(&env, &mut server, &queries)[0].is_empty());

    // The server stopped, its queue filled (each file: a create, an open,
    // a close and a delete), then the change it must not miss: the kernel
    // drops its events, so only the overflow can tell the server.
    signal(&server, "STOP");
    for i in 0..limit / 2 + 64 {
        let file = scratch.join(format!("f{}", i % 64));
        fs::File::create(&file).unwrap();
        fs::remove_file(&file).unwrap();
    }
    env.write("facts/zebracorn.md", &memory("Zebracorn", "zebracorn grazes the staging racks"));
    fs::remove_file(env.project().join("facts/staging-cluster.md")).unwrap();
    signal(&server, "CONT");

    let found = same(&env, &mut server, &queries);
    assert_eq!(found[0], ["facts/zebracorn.md"]);
    assert!(!found[1].contains(&"facts/staging-cluster.md".to_string()), "{found:?}");
    let said = fs::read_to_string(&log).unwrap();
    let overflowed =
        format!("mem: warning: file events under {} were lost", env.project().display());
    assert!(said.contains(&overflowed), "no overflow was reported: {said:?}");
    // Watched again after it: a later change is seen from its events.
    env.write("facts/ibis.md", &memory("Ibis", "the ibis queue drains at night"));
    assert_eq!(same(&env, &mut server, &["ibis"])[0], ["facts/ibis.md"]);
}
