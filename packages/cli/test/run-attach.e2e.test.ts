import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { type ServeProcess, startServe } from "./serve-helpers.js"

// `lathe run --attach URL` against a real `lathe serve`, compared with the in-process `lathe run` on the same script.
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const TOKEN = "attach-s3cret"

/** A project with a file and its own scripted model, as `lathe run` and `lathe serve` both see it. */
const project = async (script: ReadonlyArray<ScriptedReply>, config?: unknown) => {
  const model: ScriptedServer = await startScriptedServer([...script])
  cleanups.push(() => model.close())
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  if (config !== undefined) writeFileSync(join(box.project, "lathe.json"), JSON.stringify(config))
  return { ...box, env: { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" } }
}

const serveIn = async (box: { project: string; env: Record<string, string> }): Promise<ServeProcess> => {
  const server = await startServe(["--port", "0", "--token", TOKEN], { cwd: box.project, env: box.env })
  cleanups.push(async () => {
    server.child.kill("SIGTERM")
    await server.exited
  })
  return server
}

const readTurn = (): ReadonlyArray<ScriptedReply> => [
  { steps: [{ text: "Let me look. " }, { tool: "read", input: { filePath: "a.txt" } }] },
  { steps: [{ text: "It says alpha." }] }
]

/** Both ways of running one message on the same script: in process, and attached to a server. */
const both = async (args: ReadonlyArray<string>, script = readTurn, config?: unknown) => {
  const local = await project(script(), config)
  const here = await runLathe(["run", ...args], { cwd: local.project, env: local.env })
  const remote = await project(script(), config)
  const server = await serveIn(remote)
  const attached = await runLathe(["run", "--attach", server.url, ...args], {
    cwd: remote.project,
    env: { ...remote.env, LATHE_SERVER_TOKEN: TOKEN }
  })
  return { here, attached, local, remote, server }
}

/** Text output with tool durations (which differ from run to run) blanked. */
const timeless = (text: string): string => text.replace(/\((\d+ ms|\d+\.\d s)\)/g, "(<t>)")

const ID = /^(ses|msg|prt|per|que|call)_[A-Za-z0-9_]+$/
const TIME_KEYS = new Set(["created", "updated", "start", "end", "completed", "compacting", "next", "durationMs"])

/** An event with IDs numbered by first appearance, times zeroed and the machine's paths and project hash gone. */
const normalise = (events: ReadonlyArray<unknown>, root: string): unknown => {
  const ids = new Map<string, string>()
  const walk = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") {
      if (ID.test(value)) {
        if (!ids.has(value)) ids.set(value, `${value.slice(0, value.indexOf("_"))}#${ids.size}`)
        return ids.get(value)
      }
      if (key === "projectID") return "<project>"
      return value.split(root).join("<root>")
    }
    if (typeof value === "number" && key !== undefined && TIME_KEYS.has(key)) return 0
    if (Array.isArray(value)) return value.map((v) => walk(v))
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]))
    return value
  }
  return events.map((e) => walk(e))
}

describe("lathe run --attach", () => {
  it("prints what lathe run prints for the same script, in text, with the same exit code", async () => {
    const { here, attached } = await both(["read a.txt"])
    assert.strictEqual(here.code, 0, here.stderr)
    assert.strictEqual(attached.code, 0, attached.stderr)
    assert.include(here.stdout, "It says alpha.")
    assert.strictEqual(timeless(attached.stdout), timeless(here.stdout))
    assert.include(attached.stderr, "2 steps · tokens in 20")
  })

  it("prints the same events as lathe run --format json, modulo IDs and times", async () => {
    const { here, attached, local, remote } = await both(["--format", "json", "read a.txt"])
    assert.strictEqual(here.code, 0, here.stderr)
    assert.strictEqual(attached.code, 0, attached.stderr)
    assert.isAbove(here.events.length, 10)
    assert.deepEqual(normalise(attached.events, remote.dir), normalise(here.events, local.dir))
  })

  it("answers a permission ask with --yes over HTTP; without a terminal or --yes it rejects and exits 1, as lathe run does", async () => {
    const script = (): ReadonlyArray<ScriptedReply> => [
      { steps: [{ tool: "bash", input: { command: "touch made-by-bash", description: "make it" } }] },
      { steps: [{ text: "finished" }] }
    ]
    const allowed = await both(["--yes", "--format", "json", "make a file"], script, { permission: { bash: "ask" } })
    assert.strictEqual(allowed.attached.code, 0, allowed.attached.stderr)
    assert.isTrue(existsSync(join(allowed.remote.project, "made-by-bash")))
    const replied = allowed.attached.events.filter((e) => e.type === "permission.replied")
    assert.deepEqual(
      replied.map((e) => (e.type === "permission.replied" ? e.reply : "")),
      ["once"]
    )

    const rejected = await both(["make a file"], script, { permission: { bash: "ask" } })
    assert.strictEqual(rejected.here.code, 1)
    assert.strictEqual(rejected.attached.code, 1, rejected.attached.stderr)
    assert.include(rejected.attached.stderr, "Re-run with --yes")
    assert.isFalse(existsSync(join(rejected.remote.project, "made-by-bash")))
    assert.strictEqual(timeless(rejected.attached.stdout), timeless(rejected.here.stdout))
  })

  it("a wrong token is a clear error and exit 1; an unreachable server likewise", async () => {
    const box = await project(readTurn())
    const server = await serveIn(box)
    const wrong = await runLathe(["run", "--attach", server.url, "--token", "nope", "read a.txt"], {
      cwd: box.project,
      env: box.env
    })
    assert.strictEqual(wrong.code, 1)
    assert.match(wrong.stderr, /lathe: the server at http:\/\/127\.0\.0\.1:\d+: .*token/i)
    assert.strictEqual(wrong.stdout, "")

    server.child.kill("SIGTERM")
    await server.exited
    const gone = await runLathe(["run", "--attach", server.url, "--token", TOKEN, "read a.txt"], {
      cwd: box.project,
      env: box.env
    })
    assert.strictEqual(gone.code, 1)
    assert.include(gone.stderr, `Could not reach the Lathe server at ${server.url}`)
  })

  it("Ctrl-C aborts the server's turn: exit 130, the tool and the message recorded as aborted", async () => {
    const box = await project([
      { steps: [{ tool: "bash", input: { command: "sleep 20", description: "wait" } }] },
      { steps: [{ text: "never reached" }] }
    ])
    const server = await serveIn(box)
    const run = await runLathe(["run", "--attach", server.url, "--format", "json", "--yes", "wait a while"], {
      cwd: box.project,
      env: { ...box.env, LATHE_SERVER_TOKEN: TOKEN },
      onSpawn: (child) => {
        let out = ""
        child.stdout?.on("data", (chunk: Buffer) => {
          const running = out.includes('"tool.running"')
          out += chunk.toString("utf8")
          if (!running && out.includes('"tool.running"')) setTimeout(() => child.kill("SIGINT"), 300)
        })
      }
    })
    assert.strictEqual(run.code, 130, run.stderr)
    const errored = run.events.find((e) => e.type === "tool.error")
    assert.strictEqual(
      errored?.type === "tool.error" && errored.state.status === "error" ? errored.state.error : "",
      "aborted"
    )
    const aborted = run.events.findLast((e) => e.type === "message.updated")
    assert.strictEqual(
      aborted?.type === "message.updated" && aborted.message.role === "assistant" ? aborted.message.error?.name : "",
      "Aborted"
    )
  })
})
