// The plugin, loaded as OpenCode loads it, its hooks called with the input
// and output shapes @opencode-ai/plugin declares, against the real `mem`
// binary ($MEM_BIN) on a copy of the demo tree ($MEM_FIXTURE).

import { after, test } from "node:test"
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const MEM = process.env.MEM_BIN
const FIXTURE = process.env.MEM_FIXTURE
assert.ok(MEM && FIXTURE, "set MEM_BIN (the mem binary) and MEM_FIXTURE (fixtures/demo)")

const { MemPlugin } = await import("../dist/index.js")

/** The folders the tests made, removed when they end. */
const made = []
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A new empty folder under the system's temporary folder. */
function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** A copy of the demo project with its own global root and HOME. */
function project({ trusted = true } = {}) {
  const top = tempDir("mem-opencode-")
  const work = join(top, "work")
  cpSync(FIXTURE, work, { recursive: true })
  process.env.HOME = join(top, "home")
  process.env.MEM_GLOBAL_DIR = join(top, "global")
  process.env.MEM_BIN = MEM
  if (trusted) mem(work, "trust", "--yes")
  return work
}

function mem(cwd, ...args) {
  return execFileSync(MEM, args, { cwd, env: process.env, encoding: "utf8" })
}

/** The plugin as OpenCode starts it, with a client that records its log. */
async function start(work, logDelay = 0) {
  const logs = []
  const client = {
    app: { log: async ({ body }) => { logs.push(body.message); await sleep(logDelay) } },
  }
  const hooks = await MemPlugin({
    client,
    project: { id: "p", worktree: work },
    directory: work,
    worktree: work,
    experimental_workspace: { register() {} },
    serverUrl: new URL("http://127.0.0.1:4096"),
    $: undefined,
  })
  return { hooks, logs }
}

async function system(hooks, sessionID, base = "You are opencode, an agent.") {
  const output = { system: [base] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, output)
  return output.system
}

function message(text, sessionID) {
  return [
    { sessionID, agent: "build", messageID: "msg_1" },
    {
      message: { id: "msg_1", sessionID, role: "user", time: { created: 0 } },
      parts: [{ id: "prt_1", sessionID, messageID: "msg_1", type: "text", text }],
    },
  ]
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

test("the block is merged into the one system text, with the hard rules", async () => {
  const { hooks, logs } = await start(project())
  const sys = await system(hooks, "s1")
  assert.equal(sys.length, 1, "a second system message")
  assert.ok(sys[0].startsWith("You are opencode, an agent.\n\n"), sys[0].slice(0, 80))
  for (const needle of ["Hard rules", "部署脚本用 pnpm", "rules/deploy-pnpm.md"]) {
    assert.ok(sys[0].includes(needle), `${needle} missing`)
  }
  assert.deepEqual(logs, [])
})

test("the prompt's matches join that session's system text, never twice", async () => {
  const { hooks } = await start(project())
  const before = (await system(hooks, "s2"))[0]
  await hooks["chat.message"](...message("where does the staging cluster run?", "s2"))
  const after = (await system(hooks, "s2"))[0]
  assert.ok(after.length > before.length)
  assert.ok(after.includes("facts/staging-cluster.md"), "the best match is missing")
  // Asked again: other matches may come, that one not again.
  const count = (text) => text.split("- **Staging").length - 1
  assert.equal(count(after), 1)
  await hooks["chat.message"](...message("where does the staging cluster run?", "s2"))
  assert.equal(count((await system(hooks, "s2"))[0]), 1)
  // Another session has its own.
  assert.equal((await system(hooks, "other"))[0], before)
})

test("the block follows the memory tree and survives compaction", async () => {
  const work = project()
  const { hooks } = await start(work)
  assert.ok(!(await system(hooks, "s3"))[0].includes("smoke test"))
  mem(work, "remember", "rules/smoke-test", "Run the smoke test after every deploy to staging.")
  await sleep(1100)
  assert.ok((await system(hooks, "s3"))[0].includes("Run the smoke test after every deploy"))
  const output = { context: [] }
  await hooks["experimental.session.compacting"]({ sessionID: "s3" }, output)
  assert.equal(output.context.length, 1)
  assert.ok(output.context[0].includes("Hard rules"))
  assert.ok((await system(hooks, "s3"))[0].includes("部署脚本用 pnpm"))
  // After compaction the session starts over: its matches may come again.
  await hooks["chat.message"](...message("where does the staging cluster run?", "s4"))
  await hooks["experimental.session.compacting"]({ sessionID: "s4" }, { context: [] })
  const fresh = await start(work)
  await fresh.hooks["chat.message"](...message("where does the staging cluster run?", "s4"))
  assert.ok((await system(fresh.hooks, "s4"))[0].includes("facts/staging-cluster.md"))
})

test("an untrusted project: no project text, one log line", async () => {
  const { hooks, logs } = await start(project({ trusted: false }))
  const sys = await system(hooks, "s5")
  assert.ok(!sys[0].includes("部署脚本用 pnpm"), "untrusted rules were injected")
  await system(hooks, "s5")
  assert.equal(logs.length, 1, JSON.stringify(logs))
  assert.match(logs[0], /trust/)
})

test("mem missing, failing or slow: the session goes on, one line each", async () => {
  const work = project()
  process.env.MEM_BIN = join(work, "no-such-mem")
  const { hooks, logs } = await start(work)
  assert.deepEqual(await system(hooks, "s6", "base"), ["base"])
  await hooks["chat.message"](...message("anything", "s6"))
  assert.deepEqual(await system(hooks, "s6", "base"), ["base"])
  assert.equal(logs.length, 1, JSON.stringify(logs))
  assert.match(logs[0], /not found/)

  // Slow the first time (as a first run on a large tree that builds mem's
  // index): the hook does not wait for it, and the next request has the block.
  const slow = join(work, "slow-first-mem")
  const script = `[ "$1" = context ] && [ ! -e "${work}/.seen" ] && { touch "${work}/.seen"; sleep 1; }`
  writeFileSync(slow, `#!/bin/sh\n${script}\nexec "${MEM}" "$@"\n`)
  chmodSync(slow, 0o755)
  process.env.MEM_BIN = slow
  process.env.MEM_PLUGIN_TIMEOUT_MS = "300"
  const started = Date.now()
  const late = await start(work)
  assert.deepEqual(await system(late.hooks, "s7", "base"), ["base"])
  assert.ok(Date.now() - started < 1000, "waited for a slow mem")
  assert.ok(late.logs.some((l) => /slow/.test(l)), JSON.stringify(late.logs))
  await sleep(1500)
  assert.ok((await system(late.hooks, "s7", "base"))[0].includes("部署脚本用 pnpm"), "the late block never came")
  delete process.env.MEM_PLUGIN_TIMEOUT_MS
})

test("trust revoked, or a root made after the start, is seen within a second", async () => {
  const work = project()
  const { hooks } = await start(work)
  assert.ok((await system(hooks, "s8"))[0].includes("部署脚本用 pnpm"))
  mem(work, "untrust")
  await sleep(1100)
  assert.ok(!(await system(hooks, "s8"))[0].includes("部署脚本用 pnpm"), "still injected after untrust")

  const empty = tempDir("mem-opencode-empty-")
  const late = await start(empty)
  assert.deepEqual(await system(late.hooks, "s9", "base"), ["base"])
  mem(empty, "init")
  mem(empty, "remember", "rules/late", "Rules made after the session started still count.")
  await sleep(1100)
  assert.ok((await system(late.hooks, "s9", "base"))[0].includes("Rules made after the session started"))
})

test("a slow log or a slow mem holds a hook once, never longer", async () => {
  const work = project({ trusted: false })
  process.env.MEM_PLUGIN_TIMEOUT_MS = "500"
  const { hooks, logs } = await start(work, 3000)
  let t = Date.now()
  await system(hooks, "s10", "base")
  assert.ok(Date.now() - t < 1000, `a slow log held the hook ${Date.now() - t} ms`)
  assert.equal(logs.length, 1)
  const slow = join(work, "slow-mem")
  writeFileSync(slow, "#!/bin/sh\nsleep 3\n")
  chmodSync(slow, 0o755)
  process.env.MEM_BIN = slow
  const late = await start(work)
  t = Date.now()
  await late.hooks["experimental.session.compacting"]({ sessionID: "s10" }, { context: [] })
  assert.ok(Date.now() - t < 900, `compaction waited ${Date.now() - t} ms`)
  delete process.env.MEM_PLUGIN_TIMEOUT_MS
  process.env.MEM_BIN = MEM
})

test("consolidation: off by default; on, the third idle prompts the session once", async () => {
  const work = project()
  const prompts = []
  const client = {
    app: { log: async () => {} },
    session: {
      messages: async () => ({
        data: [
          { info: { role: "user" }, parts: [{ type: "text", text: "where does the staging cluster run?" }] },
          { info: { role: "assistant" }, parts: [{ type: "text", text: "In the staging namespace." }] },
        ],
      }),
      promptAsync: async (request) => void prompts.push(request),
    },
  }
  const hooks = await MemPlugin({ client, project: { id: "p", worktree: work }, directory: work, worktree: work })
  const idle = async (sessionID) => {
    await hooks.event({ event: { type: "session.idle", properties: { sessionID } } })
  }
  for (let i = 0; i < 3; i++) await idle("ses_off")
  assert.deepEqual(prompts, [], "prompted while off")
  process.env.MEM_CONSOLIDATE = "1"
  try {
    for (let i = 0; i < 2; i++) await idle("ses_on")
    assert.deepEqual(prompts, [], "prompted before the third turn")
    await idle("ses_on")
    assert.equal(prompts.length, 1)
    assert.equal(prompts[0].path.id, "ses_on")
    const text = prompts[0].body.parts[0].text
    assert.ok(text.includes("session_id") && text.includes("ses_on"), text.slice(0, 200))
    assert.ok(text.includes("[user] where does the staging cluster run?"), "the turns are not quoted")
    assert.ok(text.includes("facts/staging-cluster.md"), "the memory the turns touch is not named")
    // The idle that ends the consolidation turn, and the turns after: never again.
    for (let i = 0; i < 4; i++) await idle("ses_on")
    assert.equal(prompts.length, 1)
  } finally {
    delete process.env.MEM_CONSOLIDATE
  }
})
