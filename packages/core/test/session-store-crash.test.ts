/**
 * The SQLite store against real processes: a writer SIGKILLed in the middle of a run, and two writers sharing
 * one file. Slower than the unit tests (each child pays Node + tsx start-up), so it lives in its own file.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SessionStore } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { sqliteMigrations } from "../src/store/sqlite-migrations.js"
import { expectedText, messageID, partIDs } from "./fixtures/store-steps.js"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const fixture = join(packageDir, "test", "fixtures", "store-writer.ts")
const DELTAS = 50

const root = mkdtempSync(join(tmpdir(), "lathe-crash-test-"))
const children = new Set<ChildProcess>()
afterEach(() => {
  for (const child of children) child.kill("SIGKILL")
  children.clear()
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

interface Writer {
  /** Step numbers the child reported as flushed, in order. */
  readonly steps: Array<number>
  /** When (performance.now) each report arrived. */
  readonly times: Array<number>
  readonly stderr: () => string
  /** Resolves with the exit code and signal once the child has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly child: ChildProcess
}

/** Starts the store-writer fixture with plain `node` (no wrapper process, so a signal reaches the writer itself). */
const startWriter = (
  file: string,
  sessionID: string,
  first: number,
  last: number | "forever",
  barrier?: string
): Writer => {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@lathe/source",
      "--import",
      "tsx",
      fixture,
      file,
      sessionID,
      String(first),
      String(last),
      `${DELTAS}`,
      ...(barrier ? [barrier] : [])
    ],
    { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] }
  )
  children.add(child)
  const steps: Array<number> = []
  const times: Array<number> = []
  let buffered = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk
    const lines = buffered.split("\n")
    buffered = lines.pop() ?? ""
    for (const line of lines) {
      steps.push(Number(line))
      times.push(performance.now())
    }
  })
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  return { steps, times, stderr: () => stderr, exited, child }
}

const waitFor = async (condition: () => boolean, what: () => string, timeoutMs = 15_000) => {
  const start = performance.now()
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Opens the store as a fresh process would and checks every step in `steps` is there, whole. */
const verifySteps = (file: string, sessionID: string, steps: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    // Every row must decode, including those of a step the kill cut short.
    const messages = yield* store.messages(sessionID)
    const byID = new Map(messages.map((message) => [message.info.id, message]))
    for (const step of steps) {
      const message = byID.get(messageID(step))
      assert.ok(message, `flushed step ${step} is missing after reopening`)
      const ids = partIDs(step)
      assert.deepStrictEqual(
        message.parts.map((part) => part.id),
        [ids.start, ids.text, ids.tool, ids.finish],
        `parts of step ${step}`
      )
      const [, textPart, toolPart, finishPart] = message.parts
      assert.strictEqual(textPart?.type === "text" && textPart.text, expectedText(step, DELTAS), `text of step ${step}`)
      assert.strictEqual(toolPart?.type === "tool" && toolPart.state.status, "completed")
      assert.strictEqual(finishPart?.type === "step-finish" && finishPart.reason, "tool-calls")
    }
    return messages.length
  }).pipe(Effect.provide(SqliteSessionStore.layerFile(file)))

/** SQLite's own verdict on the file, and its schema version, from a separate plain connection. */
const inspect = (file: string) => {
  const db = new DatabaseSync(file)
  try {
    return {
      integrity: db.prepare("PRAGMA integrity_check").all(),
      version: db.prepare("PRAGMA user_version").get()?.user_version
    }
  } finally {
    db.close()
  }
}

describe("SqliteSessionStore with real processes", () => {
  it.live(
    "reopens after SIGKILL during a run with every flushed step intact (three kills, one file)",
    () =>
      Effect.gen(function* () {
        const file = join(root, "killed", "lathe.db")
        const flushed: Array<number> = []
        for (const [round, target] of [7, 23, 41].entries()) {
          const first = (flushed.at(-1) ?? 0) + 1
          const writer = startWriter(file, "ses_crash", first, "forever")
          yield* Effect.promise(() =>
            waitFor(
              () => writer.steps.length >= target,
              () => `${target} steps in round ${round} (got ${writer.steps.length}; stderr: ${writer.stderr()})`
            )
          )
          // Kill at an uneven moment within the next steps' writes, not just after a report.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, round)))
          assert.strictEqual(writer.child.exitCode, null, "the writer is still running when killed")
          writer.child.kill("SIGKILL")
          const { signal } = yield* Effect.promise(() => writer.exited)
          assert.strictEqual(signal, "SIGKILL")
          assert.strictEqual(writer.stderr(), "")
          flushed.push(...writer.steps)
          assert.deepStrictEqual(inspect(file), {
            integrity: [{ integrity_check: "ok" }],
            version: sqliteMigrations.length
          })
          const stored = yield* verifySteps(file, "ses_crash", flushed)
          assert.ok(stored >= flushed.length)
        }
        assert.deepStrictEqual(
          flushed,
          Array.from({ length: flushed.length }, (_, i) => i + 1),
          "each round resumed right after the last flushed step"
        )
      }),
    60_000
  )

  it.live(
    "two processes write one file at the same time; both finish and every step of both is there",
    () =>
      Effect.gen(function* () {
        const file = join(root, "shared", "lathe.db")
        const steps = Array.from({ length: 250 }, (_, i) => i + 1)
        // Both open the store first, then start writing together (process start-up varies a lot under load).
        const barrier = join(root, "shared-go")
        const writers = [startWriter(file, "ses_one", 1, 250, barrier), startWriter(file, "ses_two", 1, 250, barrier)]
        yield* Effect.promise(() =>
          waitFor(
            () => existsSync(`${barrier}.ses_one.ready`) && existsSync(`${barrier}.ses_two.ready`),
            () => `both writers ready (stderr: ${writers.map((w) => w.stderr()).join(" | ")})`
          )
        )
        writeFileSync(barrier, "")
        const exits = yield* Effect.promise(() => Promise.all(writers.map((writer) => writer.exited)))
        assert.deepStrictEqual(exits, [
          { code: 0, signal: null },
          { code: 0, signal: null }
        ])
        assert.deepStrictEqual(
          writers.map((writer) => writer.stderr()),
          ["", ""]
        )
        assert.deepStrictEqual(writers[0]?.steps, steps)
        const [one, two] = writers.map((writer) => ({ first: writer.times[0] ?? 0, last: writer.times.at(-1) ?? 0 }))
        assert.ok(
          one && two && one.first < two.last && two.first < one.last,
          `the two writers should overlap in time: ${JSON.stringify({ one, two })}`
        )
        assert.strictEqual(yield* verifySteps(file, "ses_one", steps), 250)
        assert.strictEqual(yield* verifySteps(file, "ses_two", steps), 250)
        assert.deepStrictEqual(inspect(file).integrity, [{ integrity_check: "ok" }])
      }),
    60_000
  )
})
