import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import type { Rule } from "@lathe/plugin"
import type { ToolPermission } from "@lathe/plugin/schema"
import { Effect, Fiber } from "effect"
import { DEFAULTS_SOURCE, RUN_FLAGS_SOURCE } from "../src/ruleset.js"
import { collectAsked, permissionLayer, tempRoot } from "./helpers.js"

// What decided an ask reaches the caller (`onDecided`), so the tool runner can record it on the call's part.
const rules: ReadonlyArray<Rule> = [
  { permission: "*", pattern: "*", action: "allow", source: DEFAULTS_SOURCE },
  { permission: "read", pattern: "*.env", action: "ask", source: DEFAULTS_SOURCE },
  { permission: "bash", pattern: "git *", action: "allow", source: "/home/me/.config/lathe/lathe.json" },
  { permission: "bash", pattern: "npm *", action: "allow", source: RUN_FLAGS_SOURCE },
  { permission: "bash", pattern: "rm *", action: "deny", source: "lathe.json" }
]

const decide = (request: Omit<PermissionAsk, "sessionID" | "ruleset" | "onDecided">) =>
  Effect.gen(function* () {
    const decided: Array<ToolPermission> = []
    const permission = yield* PermissionNext
    yield* Effect.exit(
      permission.ask({ sessionID: "ses_1", ruleset: rules, ...request, onDecided: (d) => decided.push(d) })
    )
    return decided
  })

describe("PermissionLive: what decided an ask", () => {
  it.effect("a config rule, a default, a run flag, and a deny: each with the rule as written and its source", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* decide({ permission: "bash", patterns: ["git status"] }), [
        { by: "rule", rule: 'bash "git *" allow', source: "/home/me/.config/lathe/lathe.json" }
      ])
      assert.deepStrictEqual(yield* decide({ permission: "read", patterns: ["a.ts"] }), [
        { by: "default", rule: '* "*" allow', source: DEFAULTS_SOURCE }
      ])
      assert.deepStrictEqual(yield* decide({ permission: "bash", patterns: ["npm test"] }), [
        { by: "flag", rule: 'bash "npm *" allow', source: RUN_FLAGS_SOURCE }
      ])
      assert.deepStrictEqual(yield* decide({ permission: "bash", patterns: ["rm -rf x"] }), [
        { by: "rule", rule: 'bash "rm *" deny', source: "lathe.json" }
      ])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect('the person\'s reply, and a later ask covered by their "always"', () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const decided: Array<ToolPermission> = []
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(
        permission.ask({
          sessionID: "ses_1",
          permission: "read",
          patterns: ["secret.env"],
          ruleset: rules,
          onDecided: (d) => decided.push(d)
        })
      )
      const [event] = yield* Fiber.join(asked)
      yield* permission.reply(event?.id ?? "", { type: "always" })
      yield* Fiber.join(call)
      assert.deepStrictEqual(decided, [{ by: "person", reply: "always" }])
      const again = yield* decide({ permission: "read", patterns: ["secret.env"] })
      assert.strictEqual(again[0]?.by, "person")
      assert.strictEqual(again[0]?.reply, "always")
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("--yes answers as a flag", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const decided: Array<ToolPermission> = []
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(
        permission.ask({
          sessionID: "ses_1",
          permission: "read",
          patterns: ["secret.env"],
          ruleset: rules,
          onDecided: (d) => decided.push(d)
        })
      )
      const [event] = yield* Fiber.join(asked)
      yield* permission.reply(event?.id ?? "", { type: "once", by: "yes" })
      yield* Fiber.join(call)
      assert.deepStrictEqual(decided, [{ by: "flag", source: "--yes", reply: "once" }])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})
