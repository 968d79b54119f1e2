import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import type { Rule } from "@lathe/plugin"
import { Effect, Fiber } from "effect"
import {
  APPROVAL_SOURCE,
  approvalsPath,
  forgetApprovals,
  listApprovals,
  readApprovalList,
  readApprovals
} from "../src/approvals.js"
import { describeAsk } from "../src/describe.js"
import { collectAsked, permissionLayer, rule, tempRoot } from "./helpers.js"

// Paths.layerTest names the project by the sha1 of its root and keeps data in <root>/.lathe-data.
const dataOf = (root: string) => join(root, ".lathe-data")
const fileOf = (root: string) => approvalsPath(dataOf(root), createHash("sha1").update(root).digest("hex"))

const ruleset = [rule("*", "*", "allow"), rule("bash", "*", "ask"), rule("doom_loop", "*", "ask")]
const request = (permission: string, pattern: string, sessionID = "ses_1", always = [pattern]): PermissionAsk => ({
  sessionID,
  permission,
  patterns: [pattern],
  always,
  ruleset
})

/** Asks once, answers the ask with `reply`, and waits for the ask to finish. */
const askAndReply = (ask: PermissionAsk, reply: "once" | "always") =>
  Effect.gen(function* () {
    const permission = yield* PermissionNext
    const asked = yield* collectAsked(1)
    const call = yield* Effect.forkChild(permission.ask(ask))
    const [event] = yield* Fiber.join(asked)
    yield* permission.reply(event?.id ?? "", { type: reply })
    yield* Fiber.join(call)
    return event
  })

/** Whether `ask` is decided without asking anyone. */
const decidedAtOnce = (ask: PermissionAsk) =>
  Effect.gen(function* () {
    const permission = yield* PermissionNext
    const asked = yield* collectAsked(1)
    const call = yield* Effect.forkChild(permission.ask(ask))
    const outcome = yield* Effect.raceFirst(
      Fiber.join(call).pipe(Effect.as("decided" as const)),
      Fiber.join(asked).pipe(Effect.as("asked" as const))
    )
    if (outcome === "asked") {
      const [pending] = yield* permission.pending
      yield* permission.reply(pending?.id ?? "", { type: "once" })
      yield* Fiber.join(call)
    }
    return outcome === "decided"
  })

describe("remembered approvals", () => {
  it.effect("an always reply is stored with its time and project; doom_loop's lasts for its session only", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      yield* Effect.gen(function* () {
        const doom = yield* askAndReply(request("doom_loop", "read"), "always")
        assert.include(describeAsk(doom as never), "always would allow for the rest of this session: read")
        yield* askAndReply(request("bash", "git status", "ses_1", ["git status *"]), "always")
        // The same session: the guard stays quiet for read; another session is asked again.
        assert.isTrue(yield* decidedAtOnce(request("doom_loop", "read")))
        assert.isFalse(yield* decidedAtOnce(request("doom_loop", "read", "ses_2")))
        assert.isTrue(yield* decidedAtOnce(request("bash", "git status -s", "ses_2")))
      }).pipe(Effect.provide(permissionLayer(root)))
      const stored = yield* readApprovalList(fileOf(root))
      assert.strictEqual(stored.length, 1)
      assert.deepInclude(stored[0], { permission: "bash", pattern: "git status *", action: "allow", project: root })
      assert.strictEqual(stored[0]?.source, APPROVAL_SOURCE)
      assert.isNumber(stored[0]?.time) // from Clock: the TestClock here
      // A later run (a new layer) is asked about doom_loop again; the bash approval holds.
      yield* Effect.gen(function* () {
        assert.isFalse(yield* decidedAtOnce(request("doom_loop", "read")))
        assert.isTrue(yield* decidedAtOnce(request("bash", "git status")))
      }).pipe(Effect.provide(permissionLayer(root)))
    })
  })

  it.effect(
    "an old file (no times, a stored doom_loop approval) is read; the doom_loop rule is listed, not applied",
    () => {
      const root = tempRoot()
      const file = fileOf(root)
      mkdirSync(join(dataOf(root), "permission"), { recursive: true })
      const old: Array<Rule> = [
        { permission: "doom_loop", pattern: "bash", action: "allow", source: APPROVAL_SOURCE },
        { permission: "bash", pattern: "npm test *", action: "allow", source: APPROVAL_SOURCE }
      ]
      writeFileSync(file, JSON.stringify({ version: 1, rules: old }))
      return Effect.gen(function* () {
        assert.deepStrictEqual(yield* readApprovals(file), old.slice(1))
        const listing = yield* listApprovals(dataOf(root))
        assert.deepStrictEqual(
          listing.approvals.map((entry) => [entry.number, entry.approval.pattern, entry.applies]),
          [
            [1, "bash", false],
            [2, "npm test *", true]
          ]
        )
        yield* Effect.gen(function* () {
          assert.isFalse(yield* decidedAtOnce(request("doom_loop", "bash")))
          assert.isTrue(yield* decidedAtOnce(request("bash", "npm test")))
        }).pipe(Effect.provide(permissionLayer(root)))
      })
    }
  )

  it.effect("forget removes by number or all, and a running session stops applying what was forgotten", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      yield* Effect.gen(function* () {
        yield* askAndReply(request("bash", "git status", "ses_1", ["git status *"]), "always")
        yield* askAndReply(request("bash", "git log", "ses_1", ["git log *"]), "always")
        const listing = yield* listApprovals(dataOf(root))
        assert.deepStrictEqual(
          listing.approvals.map((entry) => entry.approval.pattern),
          ["git status *", "git log *"]
        )
        const removed = yield* forgetApprovals(dataOf(root), [1])
        assert.deepStrictEqual(
          removed.map((entry) => entry.approval.pattern),
          ["git status *"]
        )
        // Same layer, no restart: asked again for the forgotten one, not for the other.
        assert.isFalse(yield* decidedAtOnce(request("bash", "git status")))
        assert.isTrue(yield* decidedAtOnce(request("bash", "git log")))
        // A new "always" does not write the forgotten approval back.
        yield* askAndReply(request("bash", "git diff", "ses_1", ["git diff *"]), "always")
        const patterns = (yield* readApprovalList(fileOf(root))).map((approval) => approval.pattern)
        assert.deepStrictEqual(patterns, ["git log *", "git diff *"])
        const unknown = yield* Effect.flip(forgetApprovals(dataOf(root), [7]))
        assert.strictEqual(
          unknown.message,
          "There is no remembered approval 7: they are numbered 1 to 2 (see lathe permissions approvals)."
        )
        yield* forgetApprovals(dataOf(root), "all")
        assert.deepStrictEqual(yield* readApprovalList(fileOf(root)), [])
        assert.isFalse(yield* decidedAtOnce(request("bash", "git log")))
      }).pipe(Effect.provide(permissionLayer(root)))
      assert.strictEqual(JSON.parse(readFileSync(fileOf(root), "utf8")).version, 1)
    })
  })

  it.effect("a corrupt file is reported by the listing while the other projects are listed", () => {
    const root = tempRoot()
    const folder = join(dataOf(root), "permission")
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "broken.json"), "{ not json")
    writeFileSync(
      join(folder, "good.json"),
      JSON.stringify({ version: 1, rules: [{ permission: "edit", pattern: "src/*", action: "allow", time: 5 }] })
    )
    return Effect.gen(function* () {
      const listing = yield* listApprovals(dataOf(root))
      assert.deepStrictEqual(
        listing.approvals.map((entry) => [entry.projectID, entry.approval.pattern]),
        [["good", "src/*"]]
      )
      assert.strictEqual(listing.problems.length, 1)
      assert.match(listing.problems[0]?.message ?? "", /broken\.json are corrupt/)
    })
  })
})
