// How a plugin author tests their plugin: build Lathe's test graph, then replace one service with a Layer.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, rejected } from "@lathe/plugin"
import { emptyTokens } from "@lathe/plugin/schema"
import { Effect, Layer, Ref, Semaphore } from "effect"
import { type PermissionAsk, PermissionNext } from "../src/contracts/permission-next.js"
import { Title } from "../src/loop/title.js"
import { ToolRunner } from "../src/loop/tool-runner.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { chunks, ScriptedLLM, SessionWriter, testLayer, testLoopLayer } from "../src/testing/index.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

describe("overriding a service with a Layer", () => {
  it.effect("a custom PermissionNext layer replaces the default one, and a plugin's hook sees the real config", () => {
    const asked: Array<PermissionAsk> = []
    // The author's own permission double: rejects bash, records everything.
    const RecordingPermission = Layer.succeed(
      PermissionNext,
      PermissionNext.of({
        ask: (request) =>
          Effect.sync(() => asked.push(request)).pipe(
            Effect.andThen(
              request.permission === "bash"
                ? Effect.fail(rejected("bash", request.patterns, "no shell today"))
                : Effect.void
            )
          ),
        reply: () => Effect.void,
        pending: Effect.succeed([])
      })
    )
    const plugin = definePlugin({
      name: "guard",
      setup: (ctx) => ({
        "chat.params": (_input, output) => {
          output.options.model = ctx.config.model ?? "none"
        }
      })
    })
    const app = Layer.provideMerge(
      RecordingPermission,
      testLayer({
        root: mkdtempSync(join(tmpdir(), "lathe-override-")),
        config: { model: "local/qwen" },
        plugins: [plugin]
      })
    )
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const ok = yield* permission
        .ask({ sessionID: "s", permission: "read", patterns: ["a.ts"], ruleset: [] })
        .pipe(Effect.result)
      const no = yield* permission
        .ask({ sessionID: "s", permission: "bash", patterns: ["rm -rf x"], ruleset: [] })
        .pipe(Effect.flip)
      assert.strictEqual(ok._tag, "Success")
      assert.strictEqual(no._tag, "PermissionRejected")
      assert.strictEqual(no.message, "The user rejected this bash request and said: no shell today")
      assert.deepStrictEqual(
        asked.map((a) => a.permission),
        ["read", "bash"]
      )

      const plugins = yield* Plugins
      const params = yield* plugins.trigger(
        "chat.params",
        { sessionID: "s", agent: "build", model: { providerID: "local", modelID: "qwen" }, modelInfo: modelInfo() },
        { options: {}, headers: {} }
      )
      assert.deepStrictEqual(params.options, { model: "local/qwen" })
    }).pipe(Effect.provide(app))
  })
})

describe("overriding the loop's own services with a Layer", () => {
  it.live("a Title and a ToolRunner of the author's replace the real ones inside the loop", () => {
    const titled: Array<string> = []
    // Names sessions without a model call: the scripted model sees only the turn's own steps.
    const FixedTitle = Layer.succeed(
      Title,
      Title.of({ generate: (_sessionID, text) => Effect.sync(() => titled.push(text)) })
    )
    // Runs no tool: every call completes with a canned answer, written through the real writer.
    const CannedTools = Layer.effect(
      ToolRunner,
      Effect.gen(function* () {
        const writer = yield* SessionWriter
        return ToolRunner.of({
          step: (input, stepStart) =>
            Effect.gen(function* () {
              return {
                input,
                stepStart,
                lock: yield* Semaphore.make(1),
                snapshot: yield* Ref.make<string | undefined>(undefined)
              }
            }),
          run: (_step, call) =>
            Effect.gen(function* () {
              const part = {
                ...call.part,
                state: {
                  status: "completed" as const,
                  input: call.args,
                  output: "canned",
                  title: "canned",
                  metadata: {},
                  time: { start: 1, end: 2 }
                }
              }
              yield* writer.putPart(part).pipe(Effect.orDie)
              return { part, blocked: false, children: { tokens: emptyTokens(), cost: 0 } }
            })
        })
      })
    )
    const plugin = definePlugin({ name: "echo", setup: () => ({ tools: [EchoTool] }) })
    const usage = { input: 10, output: 2 }
    return Effect.gen(function* () {
      const turn = yield* runTurn("echo", { title: true })
      assert.deepStrictEqual(titled, ["echo"])
      assert.deepStrictEqual(
        toolParts(turn).map((part) => (part.state.status === "completed" ? part.state.output : part.state.status)),
        ["canned"]
      )
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 2)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          loop: { title: FixedTitle, toolRunner: CannedTools },
          steps: [
            [chunks.toolCall("c1", "echo", { text: "hi" }), chunks.finish(usage, "tool-calls")],
            [chunks.text("done"), chunks.finish(usage)]
          ]
        })
      )
    )
  })
})

const modelInfo = () => ({
  providerID: "local",
  modelID: "qwen",
  name: "qwen",
  limit: { context: 32_000, output: 4_000 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
})
