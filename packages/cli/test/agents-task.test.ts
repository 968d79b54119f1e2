// @lathe/agents' task tool in core's real loop (subagent sessions, permissions, aborts): a test of the two together,
// so it lives with the CLI, the one package that knows both (a feature package's tests see the kit alone).
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { createTaskTool } from "@lathe/agents"
import { Bus, createSession, type LLMRequest, PermissionNext, SessionPrompt, SessionStore } from "@lathe/core"
import { chunks, ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import { definePlugin, rejected, Tool } from "@lathe/plugin"
import { Effect, Layer } from "effect"
import { z } from "zod"

const root = () => mkdtempSync(join(tmpdir(), "lathe-task-"))
const usage = { input: 100, output: 10 }

/** Called when the "slow" lookup starts: the abort test aborts from here, not after a guessed delay. */
let slowStarted: (() => void) | undefined

const lookup = Tool.define("lookup", {
  description: "Looks a word up",
  parameters: z.object({ word: z.string() }),
  mutates: false,
  execute: async ({ word }, ctx) => {
    // alpha answers later than beta, so two parallel tasks finish in the other order than they started.
    if (word === "alpha") await new Promise((resolve) => setTimeout(resolve, 150))
    if (word === "slow")
      await new Promise<void>((resolve) => {
        slowStarted?.()
        const timer = setTimeout(resolve, 10_000)
        ctx.abort.addEventListener("abort", () => {
          clearTimeout(timer)
          resolve()
        })
      })
    return { title: word, output: `${word} means ${word.length} letters` }
  }
})
const plugin = definePlugin({
  name: "test",
  setup: () => ({ tools: [createTaskTool([{ name: "scout", description: "looks things up" }]), lookup] })
})
const config = { agent: { scout: { mode: "subagent" as const, description: "looks things up" } } }

const text = (request: LLMRequest) => JSON.stringify(request.messages)
/** One responder for every call, by content: parent and children may call in any order. */
const respond = (request: LLMRequest) => {
  const isChild = !Object.hasOwn(request.tools, "task")
  const all = text(request)
  if (!isChild) {
    if (all.includes("<task_metadata>")) return [chunks.text("Parent done."), chunks.finish(usage)]
    return [
      chunks.toolCall("t1", "task", { description: "look up alpha", prompt: "look up alpha", subagent_type: "scout" }),
      chunks.toolCall("t2", "task", { description: "look up beta", prompt: "look up beta", subagent_type: "scout" }),
      chunks.finish(usage, "tool-calls")
    ]
  }
  const word = all.includes("look up alpha") ? "alpha" : all.includes("look up beta") ? "beta" : "slow"
  if (all.includes(`${word} means`)) return [chunks.text(`${word}: found`), chunks.finish({ input: 50, output: 5 })]
  return [chunks.toolCall(`c-${word}`, "lookup", { word }), chunks.finish({ input: 50, output: 5 }, "tool-calls")]
}

const turn = (prompt: string, abort?: AbortSignal, model?: string) =>
  Effect.gen(function* () {
    const session = yield* createSession()
    const result = yield* (yield* SessionPrompt).prompt({
      sessionID: session.id,
      parts: [{ type: "text", text: prompt }],
      title: false,
      ...(abort ? { abort } : {}),
      ...(model ? { model } : {})
    })
    return { session, result }
  })

/** `provider/model` of each recorded request, parent's and children's apart. */
const modelsUsed = Effect.gen(function* () {
  const requests = yield* (yield* ScriptedLLM).requests
  const id = (r: LLMRequest) => `${r.model.providerID}/${r.model.modelID}`
  return {
    parent: [...new Set(requests.filter((r) => Object.hasOwn(r.tools, "task")).map(id))],
    children: [...new Set(requests.filter((r) => !Object.hasOwn(r.tools, "task")).map(id))]
  }
})

describe("the task tool", () => {
  it("is kept from subagents by its trait (no recursion), not by its name", () => {
    assert.isFalse(createTaskTool([{ name: "scout", description: "looks things up" }]).subagents)
  })

  it.live("two tasks in one step run in parallel child sessions; results, metadata and cost come back", () =>
    Effect.gen(function* () {
      const { session, result } = yield* turn("research")
      const store = yield* SessionStore
      const children = yield* store.listSessions({ parentID: session.id })
      assert.deepStrictEqual(children.map((c) => c.title).sort(), [
        "look up alpha (@scout subagent)",
        "look up beta (@scout subagent)"
      ])
      const parent = yield* store.messages(session.id)
      const calls = parent.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.tool === "task" ? [p] : [])))
      const outputs = calls.map((c) => (c.state.status === "completed" ? c.state.output : c.state.status))
      assert.include(outputs[0], "alpha: found")
      assert.include(outputs[0], "The subagent's tool calls: lookup alpha (completed).")
      assert.match(outputs[0] ?? "", /<task_metadata>\nsession_id: ses_\w+\n<\/task_metadata>/)
      assert.include(outputs[1], "beta: found")
      // The children's cost (2 × 2 steps × 50 in / 5 out) rolled up into the parent step that called them.
      const first = parent.find((m) => m.info.role === "assistant")?.info
      assert.strictEqual(first?.role === "assistant" ? first.tokens.input : 0, 100 + 4 * 50)
      // No recursion: children are not offered the task tool.
      const requests = yield* (yield* ScriptedLLM).requests
      const childRequests = requests.filter((r) => !Object.hasOwn(r.tools, "task"))
      assert.strictEqual(childRequests.length, 4)
      assert.deepStrictEqual(Object.keys(childRequests[0]?.tools ?? {}), ["lookup"])
      assert.strictEqual(result.info.role === "assistant" ? result.info.finish : "", "stop")
    }).pipe(Effect.provide(testLoopLayer({ root: root(), plugins: [plugin], config, steps: Array(7).fill(respond) })))
  )

  it.live("each child session is announced with the task call that started it", () =>
    Effect.gen(function* () {
      const created: Array<{ title: string; callID: string | undefined }> = []
      yield* (yield* Bus).listen(
        (event) => {
          if (event.type === "session.created" && event.session.parentID !== undefined)
            created.push({ title: event.session.title, callID: event.callID })
        },
        ["session.created"]
      )
      yield* turn("research")
      yield* Effect.sleep("20 millis") // the listener runs on its own fiber
      assert.deepStrictEqual(
        created.sort((a, b) => a.title.localeCompare(b.title)),
        [
          { title: "look up alpha (@scout subagent)", callID: "t1" },
          { title: "look up beta (@scout subagent)", callID: "t2" }
        ]
      )
    }).pipe(Effect.provide(testLoopLayer({ root: root(), plugins: [plugin], config, steps: Array(7).fill(respond) })))
  )

  it.live("a slow first task and a fast second one: each result goes back to its own call", () =>
    Effect.gen(function* () {
      const { session } = yield* turn("research")
      const store = yield* SessionStore
      const calls = (yield* store.messages(session.id)).flatMap((m) =>
        m.parts.flatMap((p) => (p.type === "tool" && p.tool === "task" && p.state.status === "completed" ? [p] : []))
      )
      assert.deepStrictEqual(
        calls.map((c) => [c.callID, c.state.status === "completed" ? c.state.output.split("\n")[0] : ""]),
        [
          ["t1", "alpha: found"],
          ["t2", "beta: found"]
        ]
      )
      // beta's child finished first: its last answer completed before alpha's.
      const children = yield* store.listSessions({ parentID: session.id })
      const finished = (title: string) =>
        Effect.gen(function* () {
          const child = children.find((c) => c.title.startsWith(title))
          const last = (yield* store.messages(child?.id ?? "")).findLast((m) => m.info.role === "assistant")?.info
          return last?.role === "assistant" ? (last.time.completed ?? 0) : 0
        })
      assert.isBelow(yield* finished("look up beta"), yield* finished("look up alpha"))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config,
          steps: Array(7).fill(respond)
        })
      )
    )
  )

  it.live("session_id continues an earlier child session", () =>
    Effect.gen(function* () {
      const first = yield* turn("start")
      const store = yield* SessionStore
      const [child] = yield* store.listSessions({ parentID: first.session.id })
      const prompt = yield* SessionPrompt
      yield* prompt.prompt({
        sessionID: first.session.id,
        parts: [{ type: "text", text: `continue ${child?.id}` }],
        title: false
      })
      const again = yield* store.listSessions({ parentID: first.session.id })
      assert.strictEqual(again.length, 1, "no second child session")
      const users = (yield* store.messages(child?.id ?? "")).filter((m) => m.info.role === "user")
      assert.strictEqual(users.length, 2)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config,
          steps: Array(8).fill((request: LLMRequest) => {
            const all = text(request)
            const isChild = !Object.hasOwn(request.tools, "task")
            if (isChild) return [chunks.text("child answer"), chunks.finish(usage)]
            const resume = /continue (ses_\w+)/.exec(all)
            const done = (all.match(/<task_metadata>/g) ?? []).length
            if (resume && done < 2)
              return [
                chunks.toolCall("t2", "task", {
                  description: "again",
                  prompt: "more",
                  subagent_type: "scout",
                  session_id: resume[1]
                }),
                chunks.finish(usage, "tool-calls")
              ]
            if (!resume && done === 0)
              return [
                chunks.toolCall("t1", "task", { description: "first", prompt: "first", subagent_type: "scout" }),
                chunks.finish(usage, "tool-calls")
              ]
            return [chunks.text("ok"), chunks.finish(usage)]
          })
        })
      )
    )
  )

  it.live("each task asks the task permission with the subagent's name; a rejection leaves the child unstarted", () => {
    const asked: Array<string> = []
    return Effect.gen(function* () {
      const { session } = yield* turn("research")
      assert.deepStrictEqual(asked, ["task:scout", "task:scout"])
      const store = yield* SessionStore
      assert.deepStrictEqual(yield* store.listSessions({ parentID: session.id }), [])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config,
          permissionLayer: Layer.succeed(
            PermissionNext,
            PermissionNext.of({
              ask: (request) => {
                asked.push(`${request.permission}:${request.patterns.join(",")}`)
                return Effect.fail(rejected(request.permission, request.patterns))
              },
              reply: () => Effect.void,
              pending: Effect.succeed([])
            })
          ),
          steps: Array(3).fill(respond)
        })
      )
    )
  })

  it.live("aborting the parent aborts a running child", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      // Once the child's tool runs (a fixed delay raced the child's start on a loaded machine).
      slowStarted = () => setTimeout(() => controller.abort(), 20)
      const { session } = yield* turn("slow one", controller.signal).pipe(
        Effect.ensuring(Effect.sync(() => (slowStarted = undefined)))
      )
      const store = yield* SessionStore
      const [child] = yield* store.listSessions({ parentID: session.id })
      const childParts = (yield* store.messages(child?.id ?? "")).flatMap((m) => m.parts)
      const lookupCall = childParts.find((p) => p.type === "tool" && p.tool === "lookup")
      assert.strictEqual(
        lookupCall?.type === "tool" && lookupCall.state.status === "error" ? lookupCall.state.error : "",
        "aborted"
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config,
          steps: [
            [
              chunks.toolCall("t1", "task", { description: "slow", prompt: "look up slow", subagent_type: "scout" }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.toolCall("c1", "lookup", { word: "slow" }), chunks.finish(usage, "tool-calls")]
          ]
        })
      )
    )
  )

  it.live("a subagent with no model of its own runs on the model of the turn that called it", () =>
    Effect.gen(function* () {
      yield* turn("research", undefined, "local/beta")
      // Regression: every child request went to the configured default model, not the caller's -m.
      assert.deepStrictEqual(yield* modelsUsed, { parent: ["local/beta"], children: ["local/beta"] })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config: { ...config, model: "local/alpha" },
          steps: Array(7).fill(respond)
        })
      )
    )
  )

  it.live("a subagent with a model of its own keeps it, whatever model its caller runs on", () =>
    Effect.gen(function* () {
      yield* turn("research")
      assert.deepStrictEqual(yield* modelsUsed, { parent: ["local/gamma"], children: ["local/pinned"] })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config: {
            model: "local/alpha",
            agent: { build: { model: "local/gamma" }, scout: { ...config.agent.scout, model: "local/pinned" } }
          },
          steps: Array(7).fill(respond)
        })
      )
    )
  )

  it.live("an unknown or primary-only agent is an error the model reads; a foreign session_id is refused", () =>
    Effect.gen(function* () {
      const { session } = yield* turn("bad")
      const store = yield* SessionStore
      const calls = (yield* store.messages(session.id)).flatMap((m) =>
        m.parts.flatMap((p) =>
          p.type === "tool" && p.tool === "task" && p.state.status === "error" ? [p.state.error] : []
        )
      )
      assert.match(calls[0] ?? "", /No agent "build" can take a prompt\. Available agents: scout\./)
      assert.include(calls[1], "is not a subagent session of this session")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: root(),
          plugins: [plugin],
          config,
          steps: [
            [
              chunks.toolCall("t1", "task", { description: "x", prompt: "x", subagent_type: "build" }),
              chunks.toolCall("t2", "task", {
                description: "y",
                prompt: "y",
                subagent_type: "scout",
                session_id: "ses_other"
              }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  )
})
