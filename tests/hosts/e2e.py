"""The real agent hosts, offline, with mem installed as a user installs it.

Usage: python3 e2e.py MEM_BINARY REPO

REPO is the mem repository (its fixtures/demo, integrations/ and
tests/hosts/node_modules, installed by `npm ci --prefix tests/hosts`). Each
host runs on its own copy of fixtures/demo against model_server.py, which
records every request; the checks read the recorded requests. Exits
non-zero with a message on the first failure.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HARD_RULE = "部署脚本用 pnpm"
PROMPT = "where does the staging cluster run?"
BEST_MATCH = "facts/staging-cluster.md"
# mem's consolidation instructions say this, then the session's id.
ASKED = re.compile(r"asked once for session `([A-Za-z0-9._:-]+)`")
TURNS = [PROMPT, "how long does a deploy there take?", "thanks, that is all for now", "turn four", "turn five",
         "turn six"]
SAVED = "facts/consolidated-staging"


class Failure(Exception):
    pass


def check(ok, message):
    if not ok:
        raise Failure(message)


class Setup:
    def __init__(self, mem, repo, name):
        self.mem, self.repo = Path(mem), Path(repo)
        self.top = Path(tempfile.mkdtemp(prefix=f"mem-{name}-"))
        self.work = self.top / "work"
        shutil.copytree(self.repo / "fixtures/demo", self.work)
        self.env = {
            "PATH": f"{self.mem.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.top / "home"),
            "MEM_GLOBAL_DIR": str(self.top / "global"),
            "PWD": str(self.work),
            "TMPDIR": str(self.top),
        }
        (self.top / "home").mkdir()
        self.run(["mem", "trust", "--yes"])
        self.record = self.top / "requests.jsonl"
        port_file = self.top / "port"
        self.server = subprocess.Popen(
            [sys.executable, str(self.repo / "tests/hosts/model_server.py"), str(self.record), str(port_file)],
            stdin=subprocess.DEVNULL,
        )
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.bin = self.repo / "tests/hosts/node_modules/.bin"

    def run(self, args, extra=None, timeout=180):
        env = {**self.env, **(extra or {})}
        out = subprocess.run(args, cwd=self.work, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=timeout)
        check(out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def requests(self):
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def close(self):
        self.server.kill()
        shutil.rmtree(self.top, ignore_errors=True)


def text_of(value):
    return json.dumps(value, ensure_ascii=False)


def claude_code(mem, repo):
    s = Setup(mem, repo, "claude")
    try:
        claude = str(s.bin / "claude")
        # As a user installs it: one command, from the repository's marketplace.
        s.run([claude, "plugin", "install", "mem", "--marketplace", str(s.repo / "integrations")])
        model = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{s.port}", "ANTHROPIC_API_KEY": "sk-stand-in"}
        s.run([claude, "-p", PROMPT], model)
        first = [r for r in s.requests() if r["path"].startswith("/v1/messages") and PROMPT in text_of(r["body"])]
        check(first, f"no request carried the prompt: {[r['path'] for r in s.requests()]}")
        body = text_of(first[0]["body"])
        check(HARD_RULE in body, "the hard rules are not in the request")
        check(BEST_MATCH in body and "UserPromptSubmit" in body, "the prompt's best match is not in the request")
        print(f"claude code: hard rules and {BEST_MATCH} in the request")

        seen = len(s.requests())
        s.run([claude, "-p", "/compact", "--continue"], model)
        s.run([claude, "-p", "and what about timezones?", "--continue"], model)
        after = [r for r in s.requests()[seen:] if "what about timezones" in text_of(r["body"])]
        check(after, "no request after the compaction")
        body = text_of(after[-1]["body"])
        check("SessionStart:compact" in body and HARD_RULE in body, "the hard rules are not back after compaction")
        print("claude code: after /compact the hard rules are injected again")
    finally:
        s.close()


def newest(messages):
    """The messages after the last assistant one: what a request brings new."""
    last = max([i for i, m in enumerate(messages) if m.get("role") == "assistant"], default=-1)
    return text_of(messages[last + 1:])


def deliveries(requests, path):
    """The requests to `path` that bring the consolidation instructions new."""
    return [r for r in requests if r["path"].split("?")[0].endswith(path) and isinstance(r["body"], dict)
            and ASKED.search(newest(r["body"].get("messages", [])))]


def claude_code_consolidation(mem, repo, enabled):
    """The Stop hook (the plugin's, on by MEM_CONSOLIDATE=1): after the third
    turn the model gets the instructions once, and the memory it saves
    through MCP cites the session; off, no request carries them."""
    s = Setup(mem, repo, "claude-consolidate")
    try:
        claude = str(s.bin / "claude")
        s.run([claude, "plugin", "install", "mem", "--marketplace", str(s.repo / "integrations")])
        model = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{s.port}", "ANTHROPIC_API_KEY": "sk-stand-in"}
        if enabled:
            model["MEM_CONSOLIDATE"] = "1"
        # -p cannot ask for permission: the one tool the consolidation uses is allowed.
        allow = ["--allowedTools", "mcp__plugin_mem_mem__memory_remember"]
        for i, prompt in enumerate(TURNS):
            s.run([claude, "-p", prompt, *allow, *(["--continue"] if i else [])], model)
        asked = deliveries(s.requests(), "/v1/messages")
        carried = [r for r in s.requests() if ASKED.search(text_of(r["body"]))]
        if not enabled:
            check(not carried, f"consolidation off, yet {len(carried)} requests carry the instructions")
            check(not (s.work / f".memory/{SAVED}.md").exists(), "consolidation off, yet a memory was saved")
            print(f"claude code, consolidation off: none of {len(s.requests())} requests carries the instructions")
            return
        check(len(asked) == 1, f"the instructions came {len(asked)} times, not once")
        body = text_of(asked[0]["body"])
        check(TURNS[2] in body and TURNS[3] not in body, "the instructions did not come after the third turn")
        session = ASKED.search(newest(asked[0]["body"]["messages"])).group(1)
        transcripts = list((s.top / "home/.claude/projects").glob(f"*/{session}.jsonl"))
        check(transcripts, f"{session} is not the session Claude Code ran")
        saved = (s.work / f".memory/{SAVED}.md").read_text()
        check(f"source_sessions:\n- {session}\n" in saved, f"the memory does not cite {session}:\n{saved}")
        uncited = json.loads(s.run(["mem", "--json", "prompt", "consolidate"]))["uncited_sessions"]
        check(all(u["id"] != session for u in uncited), f"{session} is still listed as uncited")
        print(f"claude code, consolidation on: the instructions came once, after turn 3 of {len(TURNS)}; "
              f"{SAVED} cites {session}; mem prompt consolidate no longer lists it")
    finally:
        s.close()


def opencode_consolidation(mem, repo):
    """The OpenCode plugin, on by MEM_CONSOLIDATE=1: after the third turn the
    session is prompted with the instructions once."""
    s = Setup(mem, repo, "opencode-consolidate")
    server = None
    try:
        plugins = s.work / ".opencode/plugins"
        plugins.mkdir(parents=True)
        shutil.copy(s.repo / "integrations/opencode/src/index.ts", plugins / "mem.ts")
        write_opencode_config(s)
        port = free_port()
        log = open(s.top / "opencode.log", "w")
        server = subprocess.Popen([str(s.bin / "opencode"), "serve", "--port", str(port)], cwd=s.work,
                                  env={**s.env, "MEM_CONSOLIDATE": "1"}, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: urllib.request.urlopen(f"{base}/session", timeout=1))
        session = post(f"{base}/session", {})["id"]
        asked = []
        for i, prompt in enumerate(TURNS):
            post(f"{base}/session/{session}/message", {"parts": [{"type": "text", "text": prompt}]})
            if i == 2:
                asked = wait_for(lambda: deliveries(s.requests(), "/chat/completions") or None, tries=300)
                time.sleep(2)
        asked = deliveries(s.requests(), "/chat/completions")
        check(len(asked) == 1, f"opencode: the instructions came {len(asked)} times, not once")
        check(ASKED.search(newest(asked[0]["body"]["messages"])).group(1) == session,
              "opencode: the instructions name another session")
        body = text_of(asked[0]["body"])
        check(TURNS[2] in body and TURNS[3] not in body, "opencode: the instructions did not come after turn 3")
        print(f"opencode, consolidation on: the session was prompted once, after turn 3 of {len(TURNS)}")
    finally:
        if server:
            server.kill()
        s.close()


def wait_for(probe, tries=600):
    for _ in range(tries):
        try:
            found = probe()
            if found:
                return found
        except OSError:
            pass
        time.sleep(0.2)
    raise Failure("timed out")


def claude_code_setup(mem, repo):
    """`mem setup claude-code` alone connects Claude Code: no file written by hand."""
    s = Setup(mem, repo, "claude-setup")
    try:
        s.run(["mem", "setup", "claude-code"])
        model = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{s.port}", "ANTHROPIC_API_KEY": "sk-stand-in"}
        s.run([str(s.bin / "claude"), "-p", PROMPT], model)
        first = [r for r in s.requests() if r["path"].startswith("/v1/messages") and PROMPT in text_of(r["body"])]
        check(first, f"no request carried the prompt: {[r['path'] for r in s.requests()]}")
        body = text_of(first[0]["body"])
        check(HARD_RULE in body, "after `mem setup claude-code` the hard rules are not in the request")
        check(BEST_MATCH in body, "after `mem setup claude-code` the prompt's best match is not in the request")
        print(f"claude code after `mem setup claude-code`: hard rules and {BEST_MATCH} in the request")
    finally:
        s.close()


def opencode_setup(mem, repo):
    """`mem setup opencode` alone connects OpenCode (opencode.json names only
    the stand-in model; mem merges its MCP server into it)."""
    s = Setup(mem, repo, "opencode-setup")
    try:
        write_opencode_config(s)
        s.run(["mem", "setup", "opencode"])
        config = json.loads((s.work / "opencode.json").read_text())
        check("standin" in config["provider"] and "mem" in config["mcp"], f"opencode.json: {config}")
        s.run([str(s.bin / "opencode"), "run", PROMPT])
        asked = [r for r in s.requests() if r["path"].endswith("/chat/completions")
                 and PROMPT in text_of(r["body"]["messages"][-1])]
        check(asked, "no request carried the prompt")
        systems = [m for m in asked[-1]["body"]["messages"] if m["role"] == "system"]
        check(len(systems) == 1 and HARD_RULE in text_of(systems[0]) and BEST_MATCH in text_of(systems[0]),
              "after `mem setup opencode` the block and the match are not in the one system message")
        print(f"opencode after `mem setup opencode`: one system message with the hard rules and {BEST_MATCH}")
    finally:
        s.close()


def write_opencode_config(s, plugins=None):
    """opencode.json: the stand-in model server as its one provider, and `plugins`."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"standin": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Stand-in",
            "options": {"baseURL": f"http://127.0.0.1:{s.port}/v1", "apiKey": "stand-in"},
            "models": {"m": {"name": "M"}},
        }},
        "model": "standin/m",
        "autoupdate": False,
        "share": "disabled",
    }
    if plugins:
        config["plugin"] = plugins
    (s.work / "opencode.json").write_text(json.dumps(config))


def opencode(mem, repo):
    s = Setup(mem, repo, "opencode")
    server = None
    try:
        # As a user installs it: the plugin file in .opencode/plugins/, a provider in opencode.json.
        plugins = s.work / ".opencode/plugins"
        plugins.mkdir(parents=True)
        shutil.copy(s.repo / "integrations/opencode/src/index.ts", plugins / "mem.ts")
        write_opencode_config(s)
        port = free_port()
        log = open(s.top / "opencode.log", "w")
        server = subprocess.Popen([str(s.bin / "opencode"), "serve", "--port", str(port)], cwd=s.work,
                                  env=s.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/session", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        session = post(f"{base}/session", {})["id"]
        post(f"{base}/session/{session}/message", {"parts": [{"type": "text", "text": PROMPT}]})
        chats = [r for r in s.requests() if r["path"].endswith("/chat/completions")]
        asked = [r for r in chats if PROMPT in text_of(r["body"]["messages"][-1])]
        check(asked, f"no request carried the prompt ({len(chats)} requests)")
        for r in chats:
            systems = [m for m in r["body"]["messages"] if m["role"] == "system"]
            check(len(systems) == 1, f"{len(systems)} system messages in one request")
        system = text_of([m for m in asked[-1]["body"]["messages"] if m["role"] == "system"][0])
        check(HARD_RULE in system, "the hard rules are not in the system message")
        check(BEST_MATCH in system, "the prompt's best match is not in the system message")
        print(f"opencode: one system message with the hard rules and {BEST_MATCH}")

        seen = len(s.requests())
        post(f"{base}/session/{session}/summarize", {"providerID": "standin", "modelID": "m"})
        post(f"{base}/session/{session}/message", {"parts": [{"type": "text", "text": "and what about timezones?"}]})
        later = [r for r in s.requests()[seen:] if r["path"].endswith("/chat/completions")]
        check(len(later) >= 2, f"{len(later)} requests after the compaction")
        compaction, last = later[0], later[-1]
        check(HARD_RULE in text_of(compaction["body"]), "the compaction did not get the block")
        systems = [m for m in last["body"]["messages"] if m["role"] == "system"]
        check(len(systems) == 1 and HARD_RULE in text_of(systems[0]), "the hard rules are not back after compaction")
        print("opencode: the compaction gets the block, and the next request has it in its system message")
    finally:
        if server:
            server.kill()
        s.close()


def opencode_package(mem, repo):
    """The plugin as a package (its package.json, `main` = dist/index.js, as
    npm would install it), named under "plugin" in opencode.json."""
    s = Setup(mem, repo, "opencode-package")
    try:
        # Built in a copy: another test may be building the repository's.
        source = s.repo / "integrations/opencode"
        plugin = s.top / "opencode-mem"
        shutil.copytree(source, plugin, ignore=shutil.ignore_patterns("node_modules", "dist"))
        (plugin / "node_modules").symlink_to(source / "node_modules")
        subprocess.run(["node", str(source / "node_modules/typescript/bin/tsc"), "-p", str(plugin)], check=True)
        write_opencode_config(s, plugins=[f"file://{plugin}"])
        s.run([str(s.bin / "opencode"), "run", PROMPT])
        asked = [r for r in s.requests() if r["path"].endswith("/chat/completions")
                 and PROMPT in text_of(r["body"]["messages"][-1])]
        check(asked, "no request carried the prompt")
        systems = [m for m in asked[-1]["body"]["messages"] if m["role"] == "system"]
        check(len(systems) == 1 and HARD_RULE in text_of(systems[0]) and BEST_MATCH in text_of(systems[0]),
              "the package did not put the block and the match in the one system message")
        print(f"opencode, plugin as a package: one system message with the hard rules and {BEST_MATCH}")
    finally:
        s.close()


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return json.loads(reply.read() or b"null")


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: e2e.py MEM_BINARY REPO")
    mem, repo = str(Path(sys.argv[1]).resolve()), str(Path(sys.argv[2]).resolve())
    try:
        claude_code(mem, repo)
        opencode(mem, repo)
        opencode_package(mem, repo)
        claude_code_setup(mem, repo)
        opencode_setup(mem, repo)
        claude_code_consolidation(mem, repo, enabled=True)
        claude_code_consolidation(mem, repo, enabled=False)
        opencode_consolidation(mem, repo)
    except Failure as e:
        sys.exit(f"FAIL: {e}")
    print("ok: the agent hosts passed")


if __name__ == "__main__":
    main()
