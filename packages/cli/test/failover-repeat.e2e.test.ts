/**
 * "Failover that loses nothing", repeated: Postgres, two `lathe runner`s and a `lathe serve --cluster` front on
 * loopback, sessions cloned from one bare repository, a slowly streaming scripted model whose turn writes
 * `notes/step0.txt`, appends to `notes/step1.txt` with bash, edits `a.txt` and writes `notes/step3.txt`. Each
 * iteration SIGKILLs the runner holding sessions at a random point of the turns and starts a fresh runner in its
 * place (so shards also move off a live runner while turns run), then checks every session's diff from the front:
 * each completed step's change is there exactly once (an appended line once, not twice) and no step completed twice.
 *
 * LATHE_FAILOVER_ITERATIONS sets the iterations (default 2, about a minute on an idle machine); run 10 or more
 * locally to look for races.
 */
import { execFileSync } from "node:child_process"
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { MessageWithParts } from "@lathe/plugin/schema"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, type RunnerProcess, startRunner as startClusterRunner } from "./cluster-helpers.js"
import { sandbox } from "./helpers.js"
import { readEvents, type ServeProcess, startServe } from "./serve-helpers.js"

const SHARDS = "24"
const TOKEN = "failover-s3cret"
const auth = { authorization: `Bearer ${TOKEN}` }
const ITERATIONS = Math.max(1, Number(process.env.LATHE_FAILOVER_ITERATIONS ?? "2") || 2)
const SESSIONS = 4

/** A runner on a free port with a data dir of its own; LATHE_FAILOVER_LOGS=<dir> keeps its lines, stamped. */
const startRunner = (env: Record<string, string>, cwd: string, dataDir: string): Promise<RunnerProcess> =>
  freePort().then((port) =>
    startClusterRunner(env, cwd, port, {
      shards: SHARDS,
      dataDir,
      joinTimeoutMs: 90_000,
      onStderr: (text) => {
        const logs = process.env.LATHE_FAILOVER_LOGS
        if (logs)
          appendFileSync(
            join(logs, `runner-${port}.log`),
            text
              .split("\n")
              .filter((line) => line !== "")
              .map((line) => `${new Date().toISOString()} ${line}\n`)
              .join("")
          )
      }
    })
  )

/** The four mutating steps of a turn, as tool calls, and what each leaves in the diff. */
const STEPS = [
  { tool: "write", input: { filePath: "notes/step0.txt", content: "step zero\n" } },
  { tool: "bash", input: { command: "echo step one >> notes/step1.txt", description: "append a line" } },
  { tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "ALPHA" } },
  { tool: "write", input: { filePath: "notes/step3.txt", content: "step three\n" } }
] as const

/**
 * The model re-issues a call whose result says it was interrupted (as a real model would) and moves on after any
 * other result: its next step is the number of tool results that were not interruptions.
 */
const script = (request: RecordedRequest): ScriptedReply => {
  const messages = (request.body as { messages?: Array<{ role: string; content?: unknown }> }).messages ?? []
  const lastUser = messages.findLastIndex((m) => m.role === "user")
  const done = messages
    .slice(lastUser + 1)
    .filter((m) => m.role === "tool" && !JSON.stringify(m.content ?? "").includes("interrupted")).length
  const step = STEPS[done]
  const talk = Array.from({ length: 6 }, (_, i) => ({ text: `thinking ${done}.${i} ` }))
  return step
    ? { steps: [...talk, { tool: step.tool, input: step.input }], delayMs: 70 }
    : { steps: [{ text: "All done." }], delayMs: 20 }
}

let model: ScriptedServer
let box: ReturnType<typeof sandbox>
let bare: string
let env: Record<string, string>
let server: ServeProcess | undefined
const runners: Array<RunnerProcess> = []

const api = async (path: string, body?: unknown) => {
  if (!server) throw new Error("no server")
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...auth, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) }
}

const messagesOf = async (sessionID: string) =>
  (await api(`/sessions/${sessionID}/messages`)).body as ReadonlyArray<MessageWithParts>

const finalText = (messages: ReadonlyArray<MessageWithParts>) =>
  messages
    .filter((m) => m.info.role === "assistant")
    .at(-1)
    ?.parts.flatMap((p) => (p.type === "text" ? [p.text] : []))
    .join("")

const waitFinished = async (sessionID: string, timeoutMs = 90_000) => {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const messages = await messagesOf(sessionID)
    if (finalText(messages) === "All done.") return messages
    if (performance.now() > deadline)
      throw new Error(`session ${sessionID} did not finish: last answer ${JSON.stringify(finalText(messages))}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** How many calls of step `index` completed in the session (matched by the call's input). */
const completions = (messages: ReadonlyArray<MessageWithParts>, index: number) => {
  const wanted = JSON.stringify(STEPS[index]?.input)
  return messages
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p.state.status === "completed" && JSON.stringify(p.state.input) === wanted)
    .length
}

/** The errors of step `index`'s calls that did not complete, for a failure message. */
const errorsOf = (messages: ReadonlyArray<MessageWithParts>, index: number) => {
  const wanted = JSON.stringify(STEPS[index]?.input)
  return JSON.stringify(
    messages
      .flatMap((m) => m.parts)
      .flatMap((p) =>
        p.type === "tool" && p.state.status === "error" && JSON.stringify(p.state.input) === wanted
          ? [p.state.error]
          : []
      )
  )
}

/** Lines the diff adds, per file. */
const addedLines = (diff: string): Map<string, Array<string>> => {
  const files = new Map<string, Array<string>>()
  let current: Array<string> | undefined
  for (const line of diff.split("\n")) {
    const header = /^\+\+\+ b\/(.+)$/.exec(line)
    if (header) {
      current = []
      files.set(header[1] ?? "", current)
    } else if (line.startsWith("+++ ")) current = undefined
    else if (line.startsWith("+") && current) current.push(line.slice(1))
  }
  return files
}

/** The lines each step adds to its file. */
const EXPECTED: ReadonlyArray<readonly [string, string]> = [
  ["notes/step0.txt", "step zero"],
  ["notes/step1.txt", "step one"],
  ["a.txt", "ALPHA"],
  ["notes/step3.txt", "step three"]
]

beforeAll(async () => {
  model = await startScriptedServer(script)
  box = sandbox()
  const upstream = join(box.dir, "upstream")
  mkdirSync(upstream)
  writeFileSync(join(upstream, "a.txt"), "alpha\nbeta\n")
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: upstream })
  git("init", "-q", "-b", "main")
  git("add", "-A")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
  bare = join(box.dir, "upstream.git")
  execFileSync("git", ["clone", "-q", "--bare", upstream, bare])
  const pg = process.env.LATHE_TEST_PG_URL
  if (!pg) throw new Error("LATHE_TEST_PG_URL is not set (the vitest globalSetup starts Postgres)")
  const db = `failover_${process.pid}`
  execFileSync("psql", [pg, "-q", "-c", `CREATE DATABASE ${db}`])
  const url = new URL(pg)
  url.pathname = `/${db}`
  env = {
    ...box.env,
    LATHE_BASE_URL: model.url,
    LATHE_MODEL: "m",
    LATHE_STORE: url.toString(),
    LATHE_SERVER_TOKEN: TOKEN
  }
}, 30_000)

afterAll(async () => {
  for (const runner of runners.splice(0)) {
    runner.child.kill("SIGKILL")
    await runner.exited
  }
  if (server) {
    server.child.kill("SIGKILL")
    await server.exited
  }
  await model?.close()
})

let runnerDirs = 0
const addRunner = async () =>
  runners.push(await startRunner(env, box.project, join(box.dir, `runner-data-${++runnerDirs}`)))

describe("failover, repeated", () => {
  it(
    `keeps every completed step exactly once over ${ITERATIONS} SIGKILLs of a runner mid-turn`,
    async () => {
      await addRunner()
      await addRunner()
      server = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
      const failures: Array<string> = []
      let replacement: Promise<void> = Promise.resolve()
      for (let iteration = 0; iteration < ITERATIONS; iteration++) {
        if (!server) throw new Error("no server")
        await replacement
        const sessions: Array<string> = []
        for (let i = 0; i < SESSIONS; i++) {
          const created = await api("/sessions", { repo: bare, ref: "main" })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          sessions.push(String((created.body as { id: string }).id))
        }
        const events = await readEvents(`${server.url}/events`, auth)
        for (const [i, id] of sessions.entries()) {
          const accepted = await api(`/sessions/${id}/prompt`, { text: `[fo-${iteration}-${i}] do the work` })
          assert.strictEqual(accepted.status, 202, JSON.stringify(accepted.body))
        }
        // Once a session has completed its first call, kill at a random point of the next few steps.
        await events.waitFor((e) => e.data.type === "tool.completed" && sessions.includes(e.data.sessionID), 60_000)
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 2_000)))
        const victim = runners.find((r) => sessions.some((id) => r.answered().has(id))) ?? runners[0]
        assert.ok(victim)
        const killedAt = performance.now()
        victim.child.kill("SIGKILL")
        await victim.exited
        runners.splice(runners.indexOf(victim), 1)
        // A fresh runner takes the dead one's place while the turns go on: shards move off the survivor too.
        replacement = addRunner().then(() => undefined)
        for (const [i, id] of sessions.entries()) {
          const messages = await waitFinished(id)
          const response = await api(`/sessions/${id}/diff`)
          assert.strictEqual(response.status, 200, JSON.stringify(response.body))
          const added = addedLines((response.body as { diff: string }).diff)
          for (const [step, [file, line]] of EXPECTED.entries()) {
            const completed = completions(messages, step)
            const lines = (added.get(file) ?? []).filter((l) => l === line).length
            if (completed !== 1)
              failures.push(
                `iteration ${iteration} session ${i}: step ${step} completed ${completed}× (other results: ${errorsOf(messages, step)})`
              )
            if (lines !== 1)
              failures.push(
                `iteration ${iteration} session ${i}: step ${step} (completed ${completed}×) left "${line}" in ${file} ${lines}× in the diff`
              )
          }
        }
        const finished = Math.round(performance.now() - killedAt)
        events.close()
        await replacement
        process.stderr.write(
          `failover-repeat: iteration ${iteration}: all finished ${finished} ms after the kill; ${failures.length} failures so far\n${failures
            .filter((f) => f.startsWith(`iteration ${iteration} `))
            .map((f) => `  ${f}\n`)
            .join("")}`
        )
      }
      assert.deepStrictEqual(failures, [], failures.join("\n"))
    },
    120_000 + ITERATIONS * 90_000
  )
})
