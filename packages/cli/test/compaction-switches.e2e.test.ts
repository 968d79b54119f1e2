import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `compaction.prune` and `compaction.auto` in the person's lathe.json, proved by what the model is sent: a first turn
// reads six big files, the second turn's first step fills the context (the scripted usage says so), and the request
// bodies that follow show whether old outputs were pruned and whether the compaction agent was asked for a summary.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

const PRUNED = "[Old tool output cleared to save context. Call the tool again if you need it.]"
const SUMMARISER = "You summarise a coding session"
const FILES = ["a1", "a2", "a3", "a4", "a5", "a6"]

/** About 30 KB (some 8,000 estimated tokens) of text, its first line naming the file. */
const bigFile = (name: string) =>
  [`MARK-${name}-START`, ...Array.from({ length: 500 }, (_, i) => `${name} line ${i}: ${"x".repeat(48)}`)].join("\n")

const script: ReadonlyArray<ScriptedReply> = [
  { steps: FILES.map((name) => ({ tool: "read", input: { filePath: `${name}.txt` } })) },
  { steps: [{ text: "Read all six." }] },
  // Turn two: 99,000 tokens of a 100,000-token window (4,000 kept for the answer) is over the limit.
  { steps: [{ tool: "read", input: { filePath: "a.txt" } }], usage: { input: 99_000, output: 5 } },
  { steps: [{ text: "Next step or summary." }] },
  { steps: [{ text: "Done." }] }
]

/** Two turns with `compaction` set as given in the person's config; the request bodies as text. */
const twoTurns = async (compaction: unknown) => {
  server = await startScriptedServer([...script])
  const box = sandbox()
  for (const name of FILES) writeFileSync(join(box.project, `${name}.txt`), bigFile(name))
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  const config = { provider: { env: { models: { m: { context: 100_000, output: 4_000 } } } }, compaction }
  writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(config))
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
  const first = await runLathe(["run", "read the six files"], { cwd: box.project, env, timeoutMs })
  assert.strictEqual(first.code, 0, first.stderr)
  const second = await runLathe(["run", "-c", "now check a.txt"], { cwd: box.project, env, timeoutMs })
  assert.strictEqual(second.code, 0, second.stderr)
  return server.requests.map((request) => JSON.stringify(request.body))
}

describe("compaction switches, by the request bodies", () => {
  it(
    "by default the old outputs are pruned when the context fills up (enough here: no summary is asked for)",
    slow,
    async () => {
      const bodies = await twoTurns(undefined)
      assert.strictEqual(bodies.length, 4)
      const after = bodies[3] ?? ""
      assert.include(after, PRUNED)
      assert.notInclude(after, "MARK-a1-START", "the oldest output is pruned")
      assert.include(after, "MARK-a6-START", "the newest outputs are kept")
      assert.isFalse(bodies.some((body) => body.includes(SUMMARISER)))
    }
  )

  it("prune: false keeps every output; the compaction then summarises the history it is sent whole", slow, async () => {
    const bodies = await twoTurns({ prune: false })
    assert.strictEqual(bodies.length, 5)
    assert.isFalse(
      bodies.some((body) => body.includes(PRUNED)),
      "no output is pruned"
    )
    const summary = bodies[3] ?? ""
    assert.include(summary, SUMMARISER)
    for (const name of FILES) assert.include(summary, `MARK-${name}-START`)
    assert.include(bodies[4] ?? "", "Next step or summary.", "the turn goes on from the summary")
  })

  it(
    "auto: false asks for no compaction and prunes nothing: the turn goes on with the history as it is",
    slow,
    async () => {
      const bodies = await twoTurns({ auto: false })
      assert.strictEqual(bodies.length, 4, "the turn went on after the full step")
      assert.isFalse(
        bodies.some((body) => body.includes(SUMMARISER)),
        "no compaction request"
      )
      const after = bodies[3] ?? ""
      assert.notInclude(after, PRUNED)
      for (const name of FILES) assert.include(after, `MARK-${name}-START`)
      assert.include(after, "alpha", "the step's own tool result went to the model")
    }
  )
})
