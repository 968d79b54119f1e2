import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import { Effect, Fiber } from "effect"
import { auditPath, readAudit } from "../src/audit.js"
import { describeAsk } from "../src/describe.js"
import { collectAsked, permissionLayer, rule, tempRoot } from "./helpers.js"

// An unknown command (one Lathe cannot know statically) under rules that deny something needs a person.
const withDeny = [rule("*", "*", "allow"), rule("bash", "*", "allow"), rule("bash", "rm *", "deny")]
const ask = (line: string, ruleset = withDeny): PermissionAsk => ({
  sessionID: "ses_1",
  callID: "call_1",
  permission: "bash",
  patterns: [line],
  ruleset
})

describe("PermissionLive: unknown commands", () => {
  it.effect("are asked with metadata.requiresPerson, and a --yes reply rejects them, telling the model why", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(Effect.flip(permission.ask(ask("x=rm; $x -rf build"))))
      const [event] = yield* Fiber.join(asked)
      assert.strictEqual(event?.metadata.requiresPerson, true)
      const pending = (yield* permission.pending)[0]
      assert.include(describeAsk(pending ?? { id: "", sessionID: "", permission: "", patterns: [] }), "--yes does not")
      yield* permission.reply(event?.id ?? "", { type: "once", by: "yes" })
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "PermissionRejected")
      assert.include(error.message, "only a person may approve it")
      assert.include(error.message, "command name is computed at run time")
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      assert.deepInclude(
        trail.map((entry) => [entry.decision, entry.by]),
        ["reject", "yes"]
      )
    }).pipe(Effect.provide(permissionLayer(root)))
  })

  it.effect("a person may approve one once", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(permission.ask(ask("eval $SCRIPT")))
      const [event] = yield* Fiber.join(asked)
      yield* permission.reply(event?.id ?? "", { type: "once" })
      yield* Fiber.join(call)
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("without deny rules they follow the * rule: allowed at once, nothing asked", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      yield* permission.ask(ask("echo rm | sh", [rule("*", "*", "allow")]))
      yield* permission.ask(ask("python3 -c 'print(1)'", [rule("*", "*", "allow")]))
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a run-time argument a deny rule could complete is a person's call; a --yes reply is rejected", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const ruleset = [rule("*", "*", "allow"), rule("bash", "git push *", "deny")]
      yield* permission.ask(ask(`git commit -m "$MSG"`, ruleset))
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(Effect.flip(permission.ask(ask("git $SUB origin", ruleset))))
      const [event] = yield* Fiber.join(asked)
      assert.strictEqual(event?.metadata.requiresPerson, true)
      yield* permission.reply(event?.id ?? "", { type: "always", by: "yes" })
      assert.strictEqual((yield* Fiber.join(call))._tag, "PermissionRejected")
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})
