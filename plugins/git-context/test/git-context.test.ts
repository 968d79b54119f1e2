import { execFileSync } from "node:child_process"
import { readdirSync, rmSync, writeFileSync } from "node:fs"
import { delimiter, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { MessageWithParts } from "@lathe/plugin"
import { pluginContext, runPluginTurn } from "@lathe/plugin/testing"
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

/** An earlier user message holding an old `<git-context>` block and a text to keep, as the store holds it. */
const oldTurn = (): MessageWithParts => {
  const base = { sessionID: "s", messageID: "m1" }
  return {
    info: {
      id: "m1",
      sessionID: "s",
      role: "user",
      time: { created: 1 },
      agent: "build",
      model: { providerID: "scripted", modelID: "model" }
    },
    parts: [
      { ...base, id: "p1", type: "text", text: OLD_BLOCK },
      { ...base, id: "p2", type: "text", text: "keep me" }
    ]
  }
}

describe("@lathe/git-context through the loop", () => {
  it("puts branch, upstream and dirty files in the system prompt", async () => {
    const root = trackingRepo()
    const turn = await runPluginTurn({ root, plugins: [gitContext], steps: [{ steps: [{ text: "ok" }] }] })
    assert.strictEqual(
      turn.requests[0]?.system.at(-1),
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
  })

  it("keeps old blocks from the model, on a copy of the history", async () => {
    const hooks = await gitContext.setup(pluginContext(tempDir()))
    const history = [oldTurn()]
    const output = { messages: [...history] }
    await hooks["messages.transform"]?.({ sessionID: "s", agent: "build", model: input.model }, output)
    const texts = (messages: ReadonlyArray<MessageWithParts>) =>
      messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "text" ? [p.text] : []))
    assert.deepStrictEqual(texts(output.messages), ["keep me"])
    // What the host stores stays as it was: the hook filtered a copy.
    assert.deepStrictEqual(texts(history), [OLD_BLOCK, "keep me"])
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
    // Through the host (a real turn): its `ctx.git` is what hardens the call; the kit's test context does not.
    const turn = await runPluginTurn({
      root,
      plugins: [createGitContextPlugin()],
      steps: [{ steps: [{ text: "ok" }] }]
    })
    assert.include(turn.requests[0]?.system.at(-1), "planted.txt")
    assert.deepStrictEqual(readdirSync(marks), [])
  })
})
