/**
 * "Permissions judge the real path": a file tool asks with the path's real name (symlinks resolved, relative to the
 * root) and, when it differs, the name as given, each pattern a check of its own. The strictest verdict wins, and
 * an "always" reply remembers the pattern that asked: the real one when it asked, so a retargeted link is judged
 * afresh.
 */
import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import { Effect, Fiber } from "effect"
import { collectAsked, permissionLayer, rule, tempRoot } from "./helpers.js"

const rules = [
  rule("*", "*", "allow"),
  rule("read", "*.env", "ask"),
  rule("edit", "notes/*", "ask"),
  rule("edit", "secrets/*", "deny")
]

const fileAsk = (permission: string, patterns: ReadonlyArray<string>): PermissionAsk => ({
  sessionID: "ses_1",
  callID: "call_1",
  permission,
  patterns: [...patterns],
  ruleset: rules
})

describe("PermissionLive: a file tool's real and given path", () => {
  it.effect("read settings.txt -> .env asks for .env only; always remembers .env, which then covers read .env", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(permission.ask(fileAsk("read", [".env", "settings.txt"])))
      const [event] = yield* Fiber.join(asked)
      assert.deepStrictEqual(event?.patterns, [".env"])
      assert.deepStrictEqual(event?.always, [".env"])
      yield* permission.reply(event?.id ?? "", { type: "always" })
      yield* Fiber.join(call)
      yield* permission.ask(fileAsk("read", [".env"]))
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a deny on either name wins, even over an approval remembered for the other", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      // notes -> docs: only the name as given asks; "always" remembers it.
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(permission.ask(fileAsk("edit", ["docs/a.md", "notes/a.md"])))
      const [event] = yield* Fiber.join(asked)
      assert.deepStrictEqual(event?.patterns, ["notes/a.md"])
      yield* permission.reply(event?.id ?? "", { type: "always" })
      yield* Fiber.join(call)
      // The link now points at secrets/: the remembered approval of notes/a.md does not carry the write there.
      const error = yield* Effect.flip(permission.ask(fileAsk("edit", ["secrets/a.md", "notes/a.md"])))
      assert.strictEqual(error._tag, "PermissionDenied")
      assert.strictEqual(error._tag === "PermissionDenied" ? error.pattern : "", "secrets/a.md")
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})
