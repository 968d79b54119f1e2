// The parts of the message model that record what happened: a task call's `subtask` part (with the child session and
// how it ended), an `@agent` mention's `agent` part, a step's summary on its `patch` part, and the session's running
// summary by the hidden `summary` agent (only when config enables it).
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import type { LatheEvent, PatchPart, SubtaskPart } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { z } from "zod"
import { Snapshot } from "../src/contracts/snapshot.js"
import { toModelMessages } from "../src/llm/model-messages.js"
import { expandTaskCommand } from "../src/loop/task-command.js"
import { prepareTurn } from "../src/loop/turn-input.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { chunks, ScriptedLLM, SessionStore, testLayer, testLoopLayer } from "../src/testing/index.js"
import { AskTool, allParts, runTurn, tempRoot } from "./loop-helpers.js"

const usage = { input: 10, output: 2 }
const answer = (text: string) => [chunks.text(text), chunks.finish(usage)]
const calling = (tool: string, input: unknown) => [
  chunks.toolCall(`${tool}-1`, tool, input),
  chunks.finish(usage, "tool-calls")
]

/** Runs a subagent as the task tool does: the prompt given, or a command's expansion of it. */
const Delegate = Tool.define("delegate", {
  description: "Runs a subagent",
  parameters: z.object({ agent: z.string(), prompt: z.string(), command: z.string().optional() }),
  mutates: false,
  execute: async ({ agent, prompt, command }, ctx) => {
    if (!ctx.subagent || !ctx.command) throw new Error("no subagents here")
    const text = command ? (await ctx.command(command, prompt)).text : prompt
    const result = await ctx.subagent({ agent, description: "look around", prompt: text })
    return { title: agent, output: result.text, metadata: { sessionID: result.sessionID } }
  }
})

const plugin = definePlugin({
  name: "parts",
  setup: () => ({
    tools: [Delegate, AskTool],
    agents: [
      { name: "lead", mode: "primary" as const },
      { name: "general", mode: "subagent" as const },
      { name: "summary", mode: "primary" as const, hidden: true, prompt: "Summarise the conversation above." }
    ],
    commands: [
      { name: "review", description: "Reviews", run: (args: ReadonlyArray<string>) => `Review ${args.join(" ")}.` }
    ]
  })
})

const subtasks = (events: ReadonlyArray<LatheEvent>) =>
  events.flatMap((e) => (e.type === "part.updated" && e.part.type === "subtask" ? [e.part] : []))

describe("subtask part", () => {
  it.live(
    "a subagent call writes one subtask part beside its tool part: running with the child's id, then completed",
    () =>
      Effect.gen(function* () {
        const turn = yield* runTurn("go", { agent: "lead" })
        const parts = allParts(turn)
        const tool = parts.find((p) => p.type === "tool")
        const stored = parts.filter((p): p is SubtaskPart => p.type === "subtask")
        assert.strictEqual(stored.length, 1)
        const [subtask] = stored
        const child =
          tool?.type === "tool" && tool.state.status === "completed" ? tool.state.metadata.sessionID : undefined
        assert.match(String(child), /^ses/)
        assert.deepInclude(subtask as SubtaskPart, {
          agent: "general",
          description: "look around",
          prompt: "find the parser",
          childSessionID: child as string,
          callID: "delegate-1",
          status: "completed"
        })
        assert.strictEqual(subtask?.messageID, tool?.messageID)
        // Live: first running without a child, then running in the child session (a UI can open it) while it works.
        // (The events end at the first idle, the child's: the stored part above is the completed one.)
        const seen = subtasks(turn.events).map((p) => [p.status, p.childSessionID !== undefined])
        assert.deepStrictEqual(seen.slice(0, 2), [
          ["running", false],
          ["running", true]
        ])
      }).pipe(
        Effect.provide(
          testLoopLayer({
            root: tempRoot(),
            plugins: [plugin],
            steps: [
              calling("delegate", { agent: "general", prompt: "find the parser" }),
              answer("found"),
              answer("done")
            ]
          })
        )
      )
  )

  it.live("a subagent that cannot run leaves its subtask part in error", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go", { agent: "lead" })
      const subtask = allParts(turn).find((p): p is SubtaskPart => p.type === "subtask")
      assert.strictEqual(subtask?.status, "error")
      assert.strictEqual(subtask?.agent, "nobody")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          steps: [calling("delegate", { agent: "nobody", prompt: "x" }), answer("done")]
        })
      )
    )
  )

  it.live("ctx.command expands a command as /name args does: the subagent's prompt is the expansion", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go", { agent: "lead" })
      const subtask = allParts(turn).find((p): p is SubtaskPart => p.type === "subtask")
      assert.strictEqual(subtask?.prompt, "Review src/a.ts.")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.deepStrictEqual(requests[1]?.messages.at(-1), {
        role: "user",
        content: [{ type: "text", text: "Review src/a.ts." }]
      })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          steps: [
            calling("delegate", { agent: "general", prompt: "src/a.ts", command: "review" }),
            answer("reviewed"),
            answer("done")
          ]
        })
      )
    )
  )
})

describe("task command expansion", () => {
  it.effect("an unknown command fails naming the commands there are", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const expanded = yield* expandTaskCommand(plugins, "/review", "x y")
      assert.strictEqual(expanded.text, "Review x y.")
      const error = yield* Effect.flip(expandTaskCommand(plugins, "deploy", ""))
      assert.strictEqual(error.message, 'No command "deploy". Available commands: review.')
    }).pipe(Effect.provide(testLayer({ root: tempRoot(), plugins: [plugin] })))
  )
})

describe("agent part", () => {
  it.effect("a leading @subagent mention is named for the prompt's agent part", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const direct = yield* prepareTurn(
        plugins,
        {},
        { sessionID: "ses_x", text: "@general find the parser", subagentMention: true }
      )
      assert.strictEqual(direct.mention, "general")
      assert.strictEqual(direct.agent, "general")
      const plain = yield* prepareTurn(plugins, {}, { sessionID: "ses_x", text: "@lead hi", subagentMention: true })
      assert.strictEqual(plain.mention, undefined)
    }).pipe(Effect.provide(testLayer({ root: tempRoot(), plugins: [plugin] })))
  )

  it.live("the prompt stores an agent part; the addressed subagent is not told to hand the prompt to itself", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("find the parser", { agent: "general", allowSubagents: true, mention: "general" })
      const user = turn.messages[0]
      assert.deepStrictEqual(
        user?.parts.map((p) => p.type),
        ["text", "agent"]
      )
      assert.deepInclude(user?.parts[1], { type: "agent", name: "general" })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.deepStrictEqual(requests[0]?.messages, [
        { role: "user", content: [{ type: "text", text: "find the parser" }] }
      ])
      // Another agent answering the same history is told which agent the person asked for.
      const other = toModelMessages([{ ...user!, info: { ...user!.info, agent: "lead" } } as never])
      assert.deepStrictEqual(other[0]?.content, [
        { type: "text", text: "find the parser" },
        { type: "text", text: "Use the general agent (the task tool) for this request." }
      ])
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps: [answer("found")] })))
  )
})

/** A snapshot service whose patch names x.txt with its line counts. */
const countingSnapshots = Layer.succeed(
  Snapshot,
  Snapshot.of({
    track: Effect.succeed("tree1"),
    patch: (hash) =>
      Effect.succeed({
        hash,
        files: ["x.txt", "y.bin"],
        after: "tree2",
        lines: [
          { file: "x.txt", additions: 3, deletions: 1 },
          { file: "y.bin", additions: 0, deletions: 0 }
        ]
      }),
    diff: () => Effect.succeed(""),
    diffFull: () => Effect.succeed([]),
    restore: () => Effect.void,
    revert: () => Effect.void
  })
)

describe("step summary", () => {
  it.live("a step that changed files writes its summary on the patch part: per file and in total", () =>
    Effect.gen(function* () {
      const patch = allParts(yield* runTurn("write x", { agent: "lead" })).find(
        (p): p is PatchPart => p.type === "patch"
      )
      assert.deepStrictEqual(patch?.summary, {
        additions: 3,
        deletions: 1,
        files: [
          { file: "x.txt", additions: 3, deletions: 1 },
          { file: "y.bin", additions: 0, deletions: 0 }
        ]
      })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          snapshotLayer: countingSnapshots,
          steps: [calling("guarded", { path: "x.txt" }), answer("done")]
        })
      )
    )
  )
})

describe("session summary", () => {
  const steps = [answer("I looked."), answer("  The person asked to look; nothing changed.  ")]
  it.live(
    "config summary.enabled: the summary agent runs after the turn, without tools, and the session keeps it",
    () =>
      Effect.gen(function* () {
        const turn = yield* runTurn("look", { agent: "lead" })
        const requests = yield* (yield* ScriptedLLM).requests
        assert.strictEqual(requests.length, 2)
        assert.deepStrictEqual(Object.keys(requests[1]?.tools ?? {}), [])
        assert.deepStrictEqual(requests[1]?.messages.at(-1), {
          role: "user",
          content: "Summarise the conversation above."
        })
        const session = yield* (yield* SessionStore).getSession(turn.sessionID)
        assert.strictEqual(session.summary, "The person asked to look; nothing changed.")
      }).pipe(
        Effect.provide(
          testLoopLayer({ root: tempRoot(), plugins: [plugin], config: { summary: { enabled: true } }, steps })
        )
      )
  )

  it.live("off by default: one request, no summary", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("look", { agent: "lead" })
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 1)
      const session = yield* (yield* SessionStore).getSession(turn.sessionID)
      assert.strictEqual(session.summary, undefined)
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps })))
  )
})
