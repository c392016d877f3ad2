// OpenCode plugin for mem: the project's Markdown memory in every session.
//
// - The session-start block (`mem context`: ROOT.md's plan and hard rules,
//   rules/, pinned memories, the routing table) is merged into the system
//   text of every request: appended to the last system part, never a second
//   system message (some model backends accept only one).
// - It is built again when the memory tree changes (a memory added, removed
//   or renamed, a rule or ROOT.md edited, trust given or taken back), and at
//   least every 30 s.
// - Once the user's message is known (`chat.message`), the memories that
//   match it and that this session has not been shown yet (`mem context
//   --query -` with the session id) are added to that session's system text.
// - Before compaction, the block goes into the compaction context; the
//   system text keeps it (and the matches) afterwards, and the session's
//   record of what it was shown starts over.
// - When a session goes idle (a turn ended) and consolidation is turned on
//   (MEM_CONSOLIDATE=1, or `mem consolidate --enable`; off by default), its
//   recent messages go to `mem consolidate --hook`; when mem answers with a
//   block (every third turn, once per session, not when the session saved
//   a memory itself), its reason is sent to the same session as a prompt,
//   so the session's own agent saves what it learned. The idle that ends
//   that consolidation turn is passed on as `stop_hook_active`: never twice.
//
// Every call runs the `mem` binary ($MEM_BIN, else `mem` on PATH); it never
// re-implements it. A hook waits for it at most 5 s: a slower call (the first
// on a large tree builds mem's index) goes on in the background and its
// answer serves the next requests. When mem is missing, fails or the
// project's memory is not trusted, the session goes on without it and the
// plugin logs one line (once per kind of problem).

import { spawn } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"

/** How long a hook waits for `mem` ($MEM_PLUGIN_TIMEOUT_MS overrides). A
 *  slower call (the first one on a large tree builds mem's index) goes on in
 *  the background, and its answer is used from the next request on. */
const TIMEOUT_MS = 5000
/** How long a `mem` call may run at all before it is killed. */
const KILL_MS = 120000
/** The most matched-memory text a session's system text carries (characters). */
const MATCHES_MAX = 12000
/** How often, at most, the memory tree is looked at for changes. */
const STAT_EVERY_MS = 1000
/** Files of rules/ (and trust records) whose times the stamp looks at, at most. */
const STAMP_FILES = 512
/** The block is built again at least this often (edits the stamp misses). */
const REBUILD_EVERY_MS = 30000
/** The recent messages of a session handed to `mem consolidate --hook`. */
const CONSOLIDATE_MESSAGES = 24
/** The most of one message handed over (mem quotes less). */
const CONSOLIDATE_CHARS = 4000

type Run = { ok: boolean; stdout: string; stderr: string; why?: string }

/** Run `mem` with `args` in `cwd`, `input` on stdin; never throws. On a
 *  timeout the whole process group is killed, so a stuck child cannot hold
 *  the session. */
function runMem(args: string[], cwd: string, input?: string, timeout = KILL_MS): Promise<Run> {
  const bin = process.env.MEM_BIN || "mem"
  return new Promise((resolve) => {
    let stdout = ""
    let stderr = ""
    let done = false
    const finish = (run: Run) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(run)
    }
    const child = spawn(bin, args, { cwd, env: process.env, detached: true, stdio: "pipe" })
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
      finish({ ok: false, stdout: "", stderr, why: `${bin} ${args.join(" ")} took over ${timeout} ms` })
    }, timeout)
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < 4 << 20) stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < 1 << 16) stderr += d
    })
    child.on("error", (error: NodeJS.ErrnoException) => {
      const why =
        error.code === "ENOENT"
          ? `cannot run ${bin}: not found (install mem, or set MEM_BIN)`
          : `cannot run ${bin}: ${error.message}`
      finish({ ok: false, stdout: "", stderr, why })
    })
    child.on("close", (code) => {
      if (code === 0) return finish({ ok: true, stdout, stderr })
      const why = `${bin} ${args.join(" ")} failed: ${firstLine(stderr) || `exit ${code}`}`
      finish({ ok: false, stdout: "", stderr, why })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(input ?? "")
  })
}

function firstLine(text: string | undefined): string {
  const line = (text ?? "").split("\n").map((l) => l.trim()).find((l) => l.length > 0) ?? ""
  return line.replace(/^mem: /, "")
}

/** Waits for `work` at most the hook timeout; `undefined` when it is not
 *  done by then (it goes on). */
async function atMost<T>(work: Promise<T>, spent = 0): Promise<T | undefined> {
  const wait = Math.max(0, (Number(process.env.MEM_PLUGIN_TIMEOUT_MS) || TIMEOUT_MS) - spent)
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), wait)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** What changes when a memory is added, removed or renamed, when a rule or
 *  ROOT.md is edited, or when trust changes: the roots' folders, their
 *  category folders, ROOT.md, the files of rules/ and the trust records.
 *  Cheap whatever the tree holds (no memory outside rules/ is looked at);
 *  other in-place edits are picked up by the periodic rebuild. */
function treeStamp(roots: string[]): string {
  const parts: string[] = []
  const stat = (path: string) => {
    try {
      const st = statSync(path)
      parts.push(`${path}:${st.mtimeMs}:${st.size}`)
      return st
    } catch {
      parts.push(`${path}:-`)
      return undefined
    }
  }
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir).sort()
    } catch {
      return []
    }
  }
  for (const root of roots) {
    if (!stat(root)?.isDirectory()) continue
    stat(join(root, "ROOT.md"))
    for (const name of list(root)) {
      if (name.startsWith(".") && name !== ".trust") continue
      const st = stat(join(root, name))
      if (st?.isDirectory() && (name === "rules" || name === ".trust")) {
        // Bounded: past this many, the folder's own time and the periodic
        // rebuild stand in for each file's.
        const files = list(join(root, name))
        if (files.length <= STAMP_FILES) for (const file of files) stat(join(root, name, file))
      }
    }
  }
  return parts.join("\n")
}

type Session = { matches: string[] }

/** A session's recent messages as `mem consolidate --hook` reads them:
 *  `[{role, text}]`, the text parts only. */
function recentMessages(list: unknown): { role: string; text: string }[] {
  if (!Array.isArray(list)) return []
  return list.slice(-CONSOLIDATE_MESSAGES).flatMap((m) => {
    const role = m?.info?.role
    const parts = Array.isArray(m?.parts) ? m.parts : []
    const text = parts
      .map((p: { type?: string; text?: unknown; synthetic?: boolean }) =>
        p?.type === "text" && !p.synthetic && typeof p.text === "string" ? p.text : "",
      )
      .filter((t: string) => t.length > 0)
      .join("\n")
      .slice(0, CONSOLIDATE_CHARS)
    return typeof role === "string" && text ? [{ role, text }] : []
  })
}

export const MemPlugin: Plugin = async (input: PluginInput): Promise<Hooks> => {
  const cwd = input.directory
  const logged = new Set<string>()
  // Never awaited: a slow log must not hold a hook.
  const log = async (why: string) => {
    const kind = why.split(":")[0]
    if (logged.has(kind)) return
    logged.add(kind)
    const message = `mem: ${why}; the session goes on without it`
    Promise.resolve()
      .then(() => input.client.app.log({ body: { service: "mem", level: "warn", message } }))
      .catch(() => console.error(message))
  }

  // Where the memory lives: the project's .memory/ (watched even before it
  // exists) and the roots mem reports, the global one included.
  const roots: string[] = [join(cwd, ".memory")]
  const located = (await atMost(runMem(["--json", "inspect"], cwd))) ?? { ok: false, stdout: "", stderr: "" }
  if (located.ok) {
    try {
      const found = JSON.parse(located.stdout) as { roots?: { dir: string }[] }
      for (const r of found.roots ?? []) if (!roots.includes(r.dir)) roots.push(r.dir)
    } catch {
      // The project root alone, then.
    }
  }

  let block = ""
  let stamp: string | undefined
  let lookedAt = 0
  let builtAt = 0
  const sessions = new Map<string, Session>()

  /** The session-start block, built again when the tree changed. */
  let building: Promise<void> | undefined
  /** Build the block again; one build at a time. A failure is logged and
   *  not retried before the tree changes or the rebuild period is over. */
  const rebuild = (seen: string): Promise<void> => {
    building ??= (async () => {
      const run = await runMem(["context"], cwd)
      stamp = seen
      builtAt = Date.now()
      if (!run.ok) return void (await log(run.why ?? "mem context failed"))
      const note = firstLine(run.stderr)
      if (note) await log(note)
      block = run.stdout.trim()
    })().finally(() => {
      building = undefined
    })
    return building
  }

  /** The session-start block, built again when the tree changed. */
  const current = async (): Promise<string> => {
    const now = Date.now()
    if (stamp !== undefined && now - lookedAt < STAT_EVERY_MS) return block
    lookedAt = now
    const seen = treeStamp(roots)
    if (seen === stamp && now - builtAt < REBUILD_EVERY_MS) return block
    if ((await atMost(rebuild(seen).then(() => true))) === undefined) {
      await log("mem context is slow (a first run indexes the memory): the block comes with a later request")
    }
    return block
  }

  /** Sessions sent consolidation instructions: their next idle ends that turn. */
  const consolidating = new Set<string>()
  /** At the end of a turn: ask mem whether the session should consolidate,
   *  and if so prompt it. Never throws; mem decides whether it is on. */
  const consolidate = async (id: string) => {
    const active = consolidating.delete(id)
    const status = await runMem(["--json", "consolidate"], cwd)
    if (!status.ok) return void (await log(status.why ?? "mem consolidate failed"))
    if (!(JSON.parse(status.stdout) as { enabled?: boolean }).enabled) return
    let messages: { role: string; text: string }[] = []
    if (!active) {
      const listed = await input.client.session.messages({ path: { id }, query: { limit: CONSOLIDATE_MESSAGES } })
      messages = recentMessages(listed.data)
    }
    const request = JSON.stringify({
      session_id: id, cwd, stop_hook_active: active, messages, hook_event_name: "session.idle",
    })
    const run = await runMem(["consolidate", "--hook"], cwd, request)
    const note = firstLine(run.stderr)
    if (!run.ok || note) await log(run.why ?? note)
    if (!run.stdout.trim()) return
    const answer = JSON.parse(run.stdout) as { decision?: string; reason?: string }
    if (answer.decision !== "block" || !answer.reason) return
    consolidating.add(id)
    await input.client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text: answer.reason }] } })
  }

  const session = (id: string): Session => {
    let s = sessions.get(id)
    if (!s) {
      s = { matches: [] }
      sessions.set(id, s)
    }
    return s
  }

  return {
    event: async ({ event }) => {
      if (event.type !== "session.idle") return
      // Waited for at most the hook timeout; a slower one goes on in the background.
      await atMost(consolidate(event.properties.sessionID).catch((e) => log(`mem consolidate: ${e}`)))
    },

    "experimental.chat.system.transform": async (hook, output) => {
      const text = [await current(), ...(hook.sessionID ? session(hook.sessionID).matches : [])]
        .filter((t) => t.length > 0)
        .join("\n\n")
      if (!text) return
      const last = output.system.length - 1
      if (last < 0) output.system.push(text)
      else output.system[last] = `${output.system[last]}\n\n${text}`
    },

    "chat.message": async (hook, output) => {
      const prompt = output.parts
        .map((p) => (p.type === "text" && !p.synthetic ? p.text : ""))
        .filter((t) => t.length > 0)
        .join("\n")
      if (!prompt.trim()) return
      const request = JSON.stringify({ prompt, session_id: hook.sessionID, cwd })
      const s = session(hook.sessionID)
      // Added when mem answers: now, or (slow) for the requests after.
      const matched = runMem(["context", "--query", "-"], cwd, request).then(async (run) => {
        if (!run.ok) return void (await log(run.why ?? "mem context --query failed"))
        const found = run.stdout.trim()
        if (!found) return
        s.matches.push(found)
        // Bounded: the oldest matches go first.
        while (s.matches.join("\n\n").length > MATCHES_MAX && s.matches.length > 1) s.matches.shift()
      })
      await atMost(matched)
    },

    "experimental.session.compacting": async (hook, output) => {
      // What the session was shown is summarised away: it starts over. Run
      // beside the block, not after it: the hook waits once, at most.
      const started = Date.now()
      const request = JSON.stringify({ session_id: hook.sessionID, source: "compact", cwd })
      const reset = runMem(["context", "--hook", "--no-track"], cwd, request).then(async (run) => {
        if (!run.ok) await log(run.why ?? "mem context --hook failed")
      })
      const text = await current()
      if (text) output.context.push(text)
      await atMost(reset, Date.now() - started)
    },
  }
}


