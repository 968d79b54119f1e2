import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import { definePlugin, type Ruleset } from "@lathe/plugin"
import { Effect, Fiber } from "effect"
import { auditPath, readAudit } from "../src/audit.js"
import { loadBashParser } from "../src/bash.js"
import { checksOf, isPersonOnly, verdictOf } from "../src/checks.js"
import { defaults, fromConfig } from "../src/ruleset.js"
import { decide, project, rules } from "./decide.js"
import { collectAsked, permissionLayer, rule, tempRoot } from "./helpers.js"

// "Walls that hold": an ask only a person may approve (a rerun outside the sandbox, a write to a protected path) is
// never approved by a wildcard rule, a built-in default, a plugin hook or --yes; only by a rule naming that very
// permission, an "always" a person gave, or a person.
const command = "make install"
const escapeAsk = (ruleset: Ruleset, extra: Partial<PermissionAsk> = {}): PermissionAsk => ({
  sessionID: "ses_1",
  callID: "call_1",
  permission: "sandbox_escape",
  patterns: [command],
  requiresPerson: true,
  metadata: { command },
  ruleset,
  ...extra
})
const user = (config: Parameters<typeof fromConfig>[0]): Ruleset => [...defaults(), ...fromConfig(config, "lathe.json")]

/** Asks, and returns the published ask while the call waits (the call itself, forked). */
const askPending = (request: PermissionAsk) =>
  Effect.gen(function* () {
    const permission = yield* PermissionNext
    const asked = yield* collectAsked(1)
    const call = yield* Effect.forkChild(Effect.exit(permission.ask(request)))
    const [event] = yield* Fiber.join(asked)
    return { permission, event, call }
  })

/** A person-only ask under `ruleset` is published as an ask marked requiresPerson, not allowed. */
const stillAsked = (ruleset: Ruleset, extra: Partial<PermissionAsk> = {}) =>
  Effect.gen(function* () {
    const { permission, event, call } = yield* askPending(escapeAsk(ruleset, extra))
    assert.strictEqual(event?.metadata.requiresPerson, true)
    assert.lengthOf(yield* permission.pending, 1)
    yield* permission.reply(event?.id ?? "", { type: "reject" })
    yield* Fiber.join(call)
  })

describe("person-only asks: what may not approve them", () => {
  it.effect("the built-in defaults: sandbox_escape is an ask there, and the default '*': 'allow' does not count", () =>
    Effect.gen(function* () {
      const escapes = defaults().filter((entry) => entry.permission === "sandbox_escape")
      assert.deepStrictEqual(escapes, [
        { permission: "sandbox_escape", pattern: "*", action: "ask", source: "defaults" }
      ])
      yield* stillAsked(defaults())
      // A default that allowed it would not count either.
      yield* stillAsked([...fromConfig({ sandbox_escape: "allow" }, "defaults")])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a wildcard allow: '*', 'sandbox_*', and a '*' permission with this exact pattern", () =>
    Effect.gen(function* () {
      yield* stillAsked(user({ "*": "allow" }))
      yield* stillAsked([...defaults(), rule("*", "*", "allow")])
      yield* stillAsked([...defaults(), rule("sandbox_*", "*", "allow")])
      yield* stillAsked([...defaults(), rule("*", command, "allow")])
      yield* stillAsked([...defaults(), rule("?andbox_escape", command, "allow")])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a permission.ask hook that allows it: the person is asked all the same, and the trail says so", () => {
    const root = tempRoot()
    const permissive = definePlugin({
      name: "permissive",
      setup: () => ({
        "permission.ask": (_input, output) => {
          output.status = "allow"
        }
      })
    })
    return Effect.gen(function* () {
      yield* stillAsked(user({ "*": "allow" }))
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      const hooked = trail.find((entry) => entry.by === "hook")
      assert.strictEqual(hooked?.decision, "ask")
      assert.include(hooked?.reason ?? "", "only a person may approve it")
    }).pipe(Effect.provide(permissionLayer(root, [permissive])))
  })

  it.effect("a permission.ask hook may still deny it", () => {
    const strict = definePlugin({
      name: "strict",
      setup: () => ({
        "permission.ask": (_input, output) => {
          output.status = "deny"
          output.message = "never outside the sandbox here"
        }
      })
    })
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const error = yield* Effect.flip(permission.ask(escapeAsk(user({ "*": "allow" }))))
      assert.strictEqual(error._tag, "PermissionDenied")
      assert.include(error.message, "never outside the sandbox here")
    }).pipe(Effect.provide(permissionLayer(tempRoot(), [strict])))
  })

  it.effect("a --yes reply: rejected, and the model is told only a person may approve it and what to do", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(Effect.flip(permission.ask(escapeAsk(user({ "*": "allow" })))))
      const [event] = yield* Fiber.join(asked)
      yield* permission.reply(event?.id ?? "", { type: "always", by: "yes" })
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "PermissionRejected")
      assert.include(error.message, "Only a person may approve this sandbox_escape request, not --yes")
      assert.include(error.message, '{ "permission": { "sandbox_escape": { "make install": "allow" } } }')
      // Nothing was remembered: the next ask is asked again.
      yield* stillAsked(user({ "*": "allow" }))
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      assert.deepInclude(
        trail.map((entry) => [entry.decision, entry.by]),
        ["reject", "yes"]
      )
    }).pipe(Effect.provide(permissionLayer(root)))
  })

  it.effect("the mark may come from the typed field, the older metadata flag, or the permission's name", () =>
    Effect.gen(function* () {
      const edit = { permission: "edit", patterns: ["src/a.ts"] }
      yield* stillAsked(user({ "*": "allow" }), { ...edit })
      yield* stillAsked(user({ "*": "allow" }), { ...edit, requiresPerson: false, metadata: { requiresPerson: true } })
      yield* stillAsked(user({ "*": "allow" }), { permission: "protected_path", requiresPerson: false })
      // Without any mark the same wildcard allows an ordinary ask at once.
      const permission = yield* PermissionNext
      yield* permission.ask(escapeAsk(user({ "*": "allow" }), { ...edit, requiresPerson: false, metadata: {} }))
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})

describe("person-only asks: what may approve them", () => {
  it.effect("a rule naming the permission, whole or by pattern, in the user's config", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      yield* permission.ask(escapeAsk(user({ "*": "allow", sandbox_escape: "allow" })))
      yield* permission.ask(escapeAsk(user({ sandbox_escape: { "make *": "allow" } })))
      // Order does not let a later wildcard allow take over, nor hide the named rule.
      yield* permission.ask(escapeAsk(user({ sandbox_escape: "allow", "*": "allow" })))
      assert.deepStrictEqual(yield* permission.pending, [])
      // Only the patterns it names.
      yield* stillAsked(user({ sandbox_escape: { "make test": "allow" } }))
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("deny and ask rules of every kind still count: a wildcard deny denies, a later ask asks", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const error = yield* Effect.flip(permission.ask(escapeAsk(user({ sandbox_escape: "allow", "*": "deny" }))))
      assert.strictEqual(error._tag, "PermissionDenied")
      yield* stillAsked(user({ sandbox_escape: "allow", "*": "ask" }))
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a person at a terminal: once allows this call; always is remembered and allows the next", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const once = yield* askPending(escapeAsk(user({ "*": "allow" })))
      yield* once.permission.reply(once.event?.id ?? "", { type: "once" })
      assert.strictEqual((yield* Fiber.join(once.call))._tag, "Success")
      const always = yield* askPending(escapeAsk(user({ "*": "allow" })))
      yield* always.permission.reply(always.event?.id ?? "", { type: "always" })
      assert.strictEqual((yield* Fiber.join(always.call))._tag, "Success")
      yield* always.permission.ask(escapeAsk(user({ "*": "allow" })))
      assert.deepStrictEqual(yield* always.permission.pending, [])
      const stored = readFileSync(join(root, ".lathe-data", "permission", `${yield* projectFile(root)}`), "utf8")
      assert.include(stored, '"permission":"sandbox_escape","pattern":"make install","action":"allow"')
    }).pipe(Effect.provide(permissionLayer(root)))
  })
})

const projectFile = (root: string) =>
  Effect.sync(() => `${process.getBuiltinModule("node:crypto").createHash("sha1").update(root).digest("hex")}.json`)

describe("person-only checks, as explain and the engine decide them", () => {
  const context = project()
  const verdicts = (request: PermissionAsk) =>
    checksOf(request, context, undefined).map((check) => verdictOf(check, request.ruleset, [], context.home))

  it("isPersonOnly: the typed field, the metadata flag, sandbox_escape and protected_path", () => {
    const base = { permission: "edit", patterns: ["a"] }
    assert.isTrue(isPersonOnly({ ...base, requiresPerson: true }))
    assert.isTrue(isPersonOnly({ ...base, metadata: { requiresPerson: true } }))
    assert.isTrue(isPersonOnly({ permission: "sandbox_escape", patterns: [] }))
    assert.isTrue(isPersonOnly({ permission: "protected_path", patterns: [] }))
    assert.isFalse(isPersonOnly(base))
  })

  it("the verdict names the rule that made it an ask and carries requiresPerson; an explicit rule allows", () => {
    const [asked] = verdicts(escapeAsk(user({ "*": "allow" }), { requiresPerson: false }))
    assert.strictEqual(asked?.action, "ask")
    assert.isTrue(asked?.requiresPerson)
    assert.strictEqual(asked?.rule.source, "defaults")
    const [allowed] = verdicts(escapeAsk(user({ sandbox_escape: { "make *": "allow" } })))
    assert.strictEqual(allowed?.action, "allow")
    assert.strictEqual(allowed?.rule.source, "lathe.json")
  })

  it("an unknown command under a deny rule is not allowed by a '*' permission rule for that exact line", async () => {
    const parser = await loadBashParser()
    const line = "x=rm; $x -rf build"
    const deny = { "*": "allow", bash: { "*": "allow", "rm *": "deny" } } as const
    assert.strictEqual(
      decide(parser, context, rules({ ...deny, "*": { "*": "allow", [line]: "allow" } }), line),
      "person"
    )
    assert.strictEqual(
      decide(parser, context, rules({ ...deny, bash: { ...deny.bash, [line]: "allow" } }), line),
      "allow"
    )
  })
})
