import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import type { LLMRequest } from "../src/llm/llm.js"
import { toolSpecs } from "../src/loop/step.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { fakeGit } from "./fake-git.js"
import { EchoTool, runTurn, tempRoot } from "./loop-helpers.js"

const usage = { input: 100, output: 20 }
const done = [chunks.text("done"), chunks.finish(usage)]

/** The system messages of each model request, joined. */
const systems = (requests: ReadonlyArray<LLMRequest>) => requests.map((request) => request.system.join("\n\n"))

/** Rewrites AGENTS.md in `root` (a mutating tool, like the agent editing its own rules mid-turn). */
const rulesWriter = (root: string) =>
  Tool.define("rules", {
    description: "Rewrites AGENTS.md",
    parameters: z.object({ text: z.string() }),
    mutates: true,
    execute: async ({ text }) => {
      writeFileSync(join(root, "AGENTS.md"), text)
      return { title: "AGENTS.md", output: "written" }
    }
  })

/** The system prompt of the first request of a one-step turn in `root`. */
const firstSystem = (root: string) =>
  Effect.gen(function* () {
    yield* runTurn("go")
    return systems(yield* (yield* ScriptedLLM).requests)[0] ?? ""
  }).pipe(Effect.provide(testLoopLayer({ root, steps: [done] })))

/** Runs `effect` with a fake `git <command>` (see `fakeGit`). */
const withFakeGit = <A, E, R>(command: string, script: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => fakeGit(command, script)),
    () => effect,
    (restore) => Effect.sync(restore)
  )

describe("SystemPrompt within a turn", () => {
  it.live("a rules file edited mid-turn reaches the next step; unchanged rules are sent as they were", () => {
    const root = tempRoot()
    writeFileSync(join(root, "AGENTS.md"), "Use tabs.")
    const plugin = definePlugin({ name: "rules-tool", setup: () => ({ tools: [rulesWriter(root), EchoTool] }) })
    return Effect.gen(function* () {
      yield* runTurn("go")
      const [first, second, third] = systems(yield* (yield* ScriptedLLM).requests)
      assert.include(first, `Instructions from ${join(root, "AGENTS.md")}:\nUse tabs.`)
      // Step 1 rewrote the file (a different size and content): step 2 sees the new rules, not the cached ones.
      assert.include(second, "Use two spaces, never tabs.")
      assert.notInclude(second, "Use tabs.")
      // Step 2 changed nothing: step 3's system prompt is the same text.
      assert.strictEqual(third, second)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root,
          plugins: [plugin],
          steps: [
            [
              chunks.toolCall("a", "rules", { text: "Use two spaces, never tabs." }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.toolCall("b", "echo", { text: "x" }), chunks.finish(usage, "tool-calls")],
            done
          ]
        })
      )
    )
  })

  it.live("the environment names the git branch and counts the uncommitted files, untracked ones included", () => {
    const root = tempRoot()
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, stdio: "ignore" })
    git("init", "-q", "-b", "trunk")
    writeFileSync(join(root, "a.txt"), "a")
    git("add", "a.txt")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    writeFileSync(join(root, "a.txt"), "changed")
    writeFileSync(join(root, "untracked.txt"), "new")
    return Effect.gen(function* () {
      yield* runTurn("go")
      const [system] = systems(yield* (yield* ScriptedLLM).requests)
      assert.include(system, "Is the directory a git repository: yes")
      assert.include(system, "Git branch: trunk")
      assert.include(system, "Uncommitted changes: 2 files\n")
    }).pipe(Effect.provide(testLoopLayer({ root, steps: [done] })))
  })

  it.live("a detached head is named HEAD; a repository without commits names its branch", () => {
    const detached = tempRoot()
    const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, stdio: "ignore" })
    git(detached, "init", "-q", "-b", "trunk")
    writeFileSync(join(detached, "a.txt"), "a")
    git(detached, "add", "a.txt")
    git(detached, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    git(detached, "checkout", "-q", "--detach")
    const empty = tempRoot()
    git(empty, "init", "-q", "-b", "fresh")
    return Effect.gen(function* () {
      const onDetached = yield* firstSystem(detached)
      assert.include(onDetached, "Git branch: HEAD\nUncommitted changes: none")
      const onEmpty = yield* firstSystem(empty)
      assert.include(onEmpty, "Is the directory a git repository: yes\nGit branch: fresh\nUncommitted changes: none")
    })
  })

  it.live("a git status that hangs or fails leaves the branch named and says the changes were not counted", () => {
    const repo = () => {
      const root = tempRoot()
      execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: root, stdio: "ignore" })
      return root
    }
    const hanging = repo()
    const failing = repo()
    return Effect.gen(function* () {
      const onHanging = yield* withFakeGit("status", "exec sleep 30", firstSystem(hanging))
      assert.include(
        onHanging,
        "Git branch: trunk\nUncommitted changes: not counted (git status did not answer within 2s"
      )
      const onFailing = yield* withFakeGit("status", "exit 128", firstSystem(failing))
      assert.include(onFailing, "Git branch: trunk\nUncommitted changes: not counted (git status failed")
    })
  })

  it.live("a git without `branch --show-current` (older than 2.22) still makes it a repository", () => {
    const root = tempRoot()
    execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: root, stdio: "ignore" })
    return Effect.gen(function* () {
      const system = yield* withFakeGit("branch", "exit 129", firstSystem(root))
      assert.include(system, "Is the directory a git repository: yes\nGit branch: unknown\nUncommitted changes: none")
    })
  })

  it.live("outside a git repository the environment says so", () =>
    Effect.gen(function* () {
      yield* runTurn("go")
      const [system] = systems(yield* (yield* ScriptedLLM).requests)
      assert.include(system, "Is the directory a git repository: no")
      assert.notInclude(system, "Git branch:")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), steps: [done] })))
  )
})

describe("tool specs", () => {
  it("are built once per tool set object, and afresh for a new tool set (a server's tools that arrived)", () => {
    const turn = { echo: EchoTool }
    const specs = toolSpecs(turn)
    assert.strictEqual(toolSpecs(turn), specs)
    assert.deepStrictEqual(Object.keys(specs), ["echo"])
    const rules = rulesWriter(tempRoot())
    const grown = toolSpecs({ echo: EchoTool, rules })
    assert.notStrictEqual(grown, specs)
    assert.deepStrictEqual(Object.keys(grown), ["echo", "rules"])
    assert.strictEqual(grown.rules?.description, "Rewrites AGENTS.md")
  })
})
