// How a plugin author tests their plugin: build Lathe's test graph, then replace one service with a Layer.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type PermissionAsk, PermissionNext, rejected } from "../src/contracts/permission-next.js"
import { definePlugin } from "../src/plugin-host/plugin.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { testLayer } from "../src/testing/index.js"

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

const modelInfo = () => ({
  providerID: "local",
  modelID: "qwen",
  name: "qwen",
  limit: { context: 32_000, output: 4_000 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
})
