import { execFileSync } from "node:child_process"
import { readdirSync, rmSync, writeFileSync } from "node:fs"
import { delimiter, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ascendingId, createSession, SessionPrompt, SessionStore } from "@lathe/core"
import { chunks, ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import type { MessageWithParts } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import { Effect } from "effect"
import gitContext, { createGitContextPlugin } from "../src/index.js"
import { git, repo, tempDir, trackingRepo, write } from "./helpers.js"

const OLD_BLOCK = "<git-context>\nBranch: stale\n</git-context>"
const input = { sessionID: "s", agent: "build", model: { providerID: "p", modelID: "m" }, permission: [] }

/** Runs `system.transform` of a plugin instance once and returns what it added. */
const added = async (hooks: Awaited<ReturnType<typeof gitContext.setup>>) => {
  const output = { system: ["base"] }
  await hooks["system.transform"]?.(input, output)
  return output.system.slice(1)
}

/** Stores an earlier user message holding an old `<git-context>` block and a text to keep. */
const storeOldTurn = (sessionID: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const messageID = ascendingId("message")
    yield* store.putMessage({
      id: messageID,
      sessionID,
      role: "user",
      time: { created: 1 },
      agent: "build",
      model: { providerID: "scripted", modelID: "model" }
    })
    for (const text of [OLD_BLOCK, "keep me"])
      yield* store.putPart({ id: ascendingId("part"), sessionID, messageID, type: "text", text })
  })

describe("@lathe/git-context through the loop", () => {
  it.live("puts branch, upstream and dirty files in the system prompt and keeps old blocks from the model", () => {
    const root = trackingRepo()
    return Effect.gen(function* () {
      const session = yield* createSession({ title: "test" })
      yield* storeOldTurn(session.id)
      yield* (yield* SessionPrompt).prompt({
        sessionID: session.id,
        parts: [{ type: "text", text: "hi" }],
        title: false
      })
      const [request] = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(
        request?.system.at(-1),
        [
          "<git-context>",
          "Branch: main",
          "Upstream: origin/main (2 ahead, 1 behind)",
          "Uncommitted changes (3 files):",
          "M  README.md",
          "A  staged.txt",
          "?? src/",
          "</git-context>"
        ].join("\n")
      )
      const sent = JSON.stringify(request?.messages)
      assert.include(sent, "keep me")
      assert.notInclude(sent, "Branch: stale")
      // The store still holds the old block: the hook filtered a copy.
      const stored: ReadonlyArray<MessageWithParts> = yield* (yield* SessionStore).messages(session.id)
      const texts = stored.flatMap((m) => m.parts).flatMap((p) => (p.type === "text" ? [p.text] : []))
      assert.deepStrictEqual(texts.slice(0, 2), [OLD_BLOCK, "keep me"])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root,
          plugins: [gitContext],
          steps: [[chunks.text("ok"), chunks.finish({ input: 1, output: 1 })]]
        })
      )
    )
  })
})

describe("system.transform", () => {
  it("adds nothing outside a git repository", async () => {
    assert.deepStrictEqual(await added(await gitContext.setup(pluginContext(tempDir()))), [])
  })

  it("asks git at most once per 5 s, then sees new changes", async () => {
    const root = repo()
    let now = 1_000_000
    const hooks = await createGitContextPlugin({ now: () => now }).setup(pluginContext(root))
    assert.include((await added(hooks))[0], "Working tree clean.")
    write(root, { "new.txt": "x\n" })
    now += 4_999
    assert.include((await added(hooks))[0], "Working tree clean.")
    now += 1
    assert.include((await added(hooks))[0], "?? new.txt")
  })

  it("lists 50 dirty files of a real repository and counts the rest", async () => {
    const root = repo()
    write(root, Object.fromEntries(Array.from({ length: 57 }, (_, i) => [`f${String(i).padStart(2, "0")}.txt`, "x"])))
    const [block] = await added(await gitContext.setup(pluginContext(root)))
    assert.include(block, "Uncommitted changes (57 files):")
    assert.include(block, "?? f49.txt")
    assert.notInclude(block, "f50.txt")
    assert.include(block, "…and 7 more")
  })

  it("gives up on a git that hangs, within its time limit, and adds nothing", async () => {
    const root = repo()
    // A git whose status hangs (a slow disk, a huge tree); the real git otherwise.
    const bin = tempDir()
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim()
    writeFileSync(join(bin, "git"), `#!/bin/sh\ncase " $* " in *" status "*) sleep 5 ;; esac\nexec '${real}' "$@"\n`, {
      mode: 0o755
    })
    const path = process.env.PATH
    process.env.PATH = `${bin}${delimiter}${path ?? ""}`
    try {
      const started = Date.now()
      assert.deepStrictEqual(
        await added(await createGitContextPlugin({ timeoutMs: 300 }).setup(pluginContext(root))),
        []
      )
      assert.isBelow(Date.now() - started, 3_000)
    } finally {
      process.env.PATH = path
    }
  })

  it("never runs the programs a cloned repository's .git/config names (fsmonitor, a clean filter)", async () => {
    const root = repo()
    const marks = tempDir()
    const plant = () => {
      git(root, "config", "core.fsmonitor", `touch ${marks}/fsmonitor; false`)
      git(root, "config", "filter.evil.clean", `touch ${marks}/clean; cat`)
      write(root, { ".gitattributes": "*.txt filter=evil\n", "planted.txt": "x\n" })
    }
    plant()
    // Without Lathe: the person's own `git status` runs both.
    execFileSync("git", ["status", "--porcelain"], { cwd: root })
    assert.sameMembers(readdirSync(marks), ["fsmonitor"])
    execFileSync("git", ["add", "planted.txt"], { cwd: root })
    assert.sameMembers(readdirSync(marks), ["fsmonitor", "clean"])
    for (const mark of readdirSync(marks)) rmSync(join(marks, mark))
    const [block] = await added(await createGitContextPlugin().setup(pluginContext(root)))
    assert.include(block, "planted.txt")
    assert.deepStrictEqual(readdirSync(marks), [])
  })
})
