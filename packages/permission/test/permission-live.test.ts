import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PermissionAsk, PermissionNext } from "@lathe/core"
import { definePlugin } from "@lathe/plugin"
import { Effect, Fiber } from "effect"
import { approvalsPath } from "../src/approvals.js"
import { auditPath, readAudit } from "../src/audit.js"
import { collectAsked, collectReplied, permissionLayer, rule, tempRoot } from "./helpers.js"

const asks = [rule("*", "*", "allow"), rule("bash", "*", "ask"), rule("bash", "rm *", "deny"), rule("edit", "*", "ask")]
// Paths.layerTest names the project by the sha1 of its root.
const projectApprovals = (root: string) =>
  approvalsPath(join(root, ".lathe-data"), createHash("sha1").update(root).digest("hex"))

const bashAsk = (line: string, extra: Partial<PermissionAsk> = {}): PermissionAsk => ({
  sessionID: "ses_1",
  callID: "call_1",
  permission: "bash",
  patterns: [line],
  ruleset: asks,
  ...extra
})

describe("PermissionLive: rules", () => {
  const root = tempRoot()
  it.effect("an allowed ask succeeds at once, publishes nothing, and is audited with its rule", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      yield* permission.ask({ sessionID: "ses_1", callID: "c1", permission: "read", patterns: ["a.ts"], ruleset: asks })
      assert.deepStrictEqual(yield* permission.pending, [])
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      const last = trail.at(-1)
      assert.strictEqual(last?.decision, "allow")
      assert.strictEqual(last?.by, "rule")
      assert.strictEqual(last?.callID, "c1")
      assert.deepStrictEqual(last?.rule, asks[0])
    }).pipe(Effect.provide(permissionLayer(root)))
  )

  it.effect("a deny rule fails with PermissionDenied carrying the rule, even inside a command list", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const error = yield* Effect.flip(permission.ask(bashAsk("ls && rm -rf build")))
      assert.strictEqual(error._tag, "PermissionDenied")
      if (error._tag !== "PermissionDenied") return
      assert.strictEqual(error.pattern, "rm -rf build")
      assert.deepStrictEqual(error.rule, asks[2])
      assert.include(error.message, "test.json")
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})

describe("PermissionLive: a subagent under its parents' rules (constraints)", () => {
  const child = [rule("*", "*", "allow")]
  it.effect("a parent's deny wins over the child's allow, per command of a line", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      // The child alone would allow everything; the parent denies bash.
      const parent = [rule("*", "*", "allow"), rule("bash", "*", "deny")]
      const error = yield* Effect.flip(permission.ask(bashAsk("ls", { ruleset: child, constraints: [parent] })))
      assert.strictEqual(error._tag, "PermissionDenied")
      // A parent that denies only rm: the rm inside a list is still caught.
      const narrow = [rule("*", "*", "allow"), rule("bash", "rm *", "deny")]
      const inList = yield* Effect.flip(
        permission.ask(bashAsk("ls && rm x", { ruleset: child, constraints: [narrow] }))
      )
      assert.strictEqual(inList._tag === "PermissionDenied" ? inList.pattern : "", "rm x")
      // Allowed by both: no ask at all.
      yield* permission.ask(bashAsk("ls", { ruleset: child, constraints: [narrow] }))
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("a parent's ask turns the child's allow into an ask", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const parent = [rule("*", "*", "allow"), rule("edit", "*", "ask")]
      const asking = yield* permission
        .ask({ sessionID: "ses_1", permission: "edit", patterns: ["a.ts"], ruleset: child, constraints: [parent] })
        .pipe(Effect.forkChild)
      yield* Effect.yieldNow
      const [pending] = yield* permission.pending
      assert.strictEqual(pending?.permission, "edit")
      yield* permission.reply(pending?.id ?? "", { type: "once" })
      yield* Fiber.join(asking)
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})

describe("PermissionLive: asks", () => {
  it.effect("once: publishes permission.asked, lists it as pending, and succeeds on the reply", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const replied = yield* collectReplied(1)
      const call = yield* Effect.forkChild(permission.ask(bashAsk("CI=true git push origin main")))
      const [event] = yield* Fiber.join(asked)
      assert.deepStrictEqual(event?.patterns, ["git push origin main"])
      assert.deepStrictEqual(event?.always, ["git push *"])
      const pending = yield* permission.pending
      assert.strictEqual(pending.length, 1)
      assert.strictEqual(pending[0]?.id, event?.id)
      yield* permission.reply(event?.id ?? "", { type: "once" })
      yield* Fiber.join(call)
      assert.strictEqual((yield* Fiber.join(replied))[0]?.reply, "once")
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("always: remembered on disk, seen by a new layer instance, and settles covered pending asks", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      yield* Effect.gen(function* () {
        const permission = yield* PermissionNext
        const asked = yield* collectAsked(2)
        const first = yield* Effect.forkChild(permission.ask(bashAsk("git push origin main")))
        const second = yield* Effect.forkChild(permission.ask(bashAsk("git push origin dev", { sessionID: "ses_2" })))
        const [a] = yield* Fiber.join(asked)
        yield* permission.reply(a?.id ?? "", { type: "always" })
        yield* Fiber.join(first)
        yield* Fiber.join(second) // covered by the new approval: no reply needed
        assert.deepStrictEqual(yield* permission.pending, [])
      }).pipe(Effect.provide(permissionLayer(root)))
      const saved = readFileSync(projectApprovals(root), "utf8")
      assert.include(saved, '"pattern":"git push *"')
      assert.notInclude(saved, "git push origin dev")
      // A new layer over the same data dir: allowed without asking; deny rules still hold.
      yield* Effect.gen(function* () {
        const permission = yield* PermissionNext
        yield* permission.ask(bashAsk("git push upstream feature"))
        assert.deepStrictEqual(yield* permission.pending, [])
        const denied = yield* Effect.flip(
          permission.ask(bashAsk("git push --force", { ruleset: [...asks, rule("bash", "git push --force*", "deny")] }))
        )
        assert.strictEqual(denied._tag, "PermissionDenied")
      }).pipe(Effect.provide(permissionLayer(root)))
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      assert.isTrue(trail.some((entry) => entry.by === "approval" && entry.pattern === "git push upstream feature"))
    })
  })

  it.effect("reject fails with PermissionRejected and rejects the session's other asks, not other sessions'", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(3)
      const a = yield* Effect.forkChild(Effect.flip(permission.ask(bashAsk("npm publish"))))
      const b = yield* Effect.forkChild(Effect.flip(permission.ask(bashAsk("make deploy"))))
      const other = yield* Effect.forkChild(permission.ask(bashAsk("make deploy", { sessionID: "ses_other" })))
      const events = yield* Fiber.join(asked)
      const first = events.find((event) => event.patterns[0] === "npm publish")
      yield* permission.reply(first?.id ?? "", { type: "reject" })
      const errorA = yield* Fiber.join(a)
      const errorB = yield* Fiber.join(b)
      assert.strictEqual(errorA._tag, "PermissionRejected")
      assert.strictEqual(errorB._tag, "PermissionRejected")
      assert.isFalse("feedback" in errorA)
      const left = yield* permission.pending
      assert.deepStrictEqual(
        left.map((ask) => ask.sessionID),
        ["ses_other"]
      )
      yield* permission.reply(left[0]?.id ?? "", { type: "once" })
      yield* Fiber.join(other)
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("reject with a message: the person's words reach the model as feedback", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(Effect.flip(permission.ask(bashAsk("npm publish"))))
      const [event] = yield* Fiber.join(asked)
      yield* permission.reply(event?.id ?? "", { type: "reject", message: "bump the version first" })
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "PermissionRejected")
      if (error._tag !== "PermissionRejected") return
      assert.strictEqual(error.feedback, "bump the version first")
      assert.include(error.message, "bump the version first")
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("abort while waiting: the ask fails with PermissionRejected and leaves pending", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const controller = new AbortController()
      const asked = yield* collectAsked(1)
      const replied = yield* collectReplied(1)
      const call = yield* Effect.forkChild(
        Effect.flip(permission.ask(bashAsk("npm publish", { signal: controller.signal })))
      )
      yield* Fiber.join(asked)
      assert.strictEqual((yield* permission.pending).length, 1)
      controller.abort()
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "PermissionRejected")
      assert.include(error.message, "aborted")
      assert.deepStrictEqual(yield* permission.pending, [])
      assert.strictEqual((yield* Fiber.join(replied))[0]?.reply, "reject")
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      assert.strictEqual(trail.at(-1)?.by, "abort")
    }).pipe(Effect.provide(permissionLayer(root)))
  })

  it.effect("an already aborted signal never waits", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const controller = new AbortController()
      controller.abort()
      const error = yield* Effect.flip(permission.ask(bashAsk("npm publish", { signal: controller.signal })))
      assert.strictEqual(error._tag, "PermissionRejected")
      assert.deepStrictEqual(yield* permission.pending, [])
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})

describe("PermissionLive: plugin hook and bash analysis", () => {
  const hook = definePlugin({
    name: "policy",
    setup: () => ({
      "permission.ask": (input, output) => {
        if (input.patterns.every((pattern) => pattern.startsWith("npm test"))) output.status = "allow"
        if (input.patterns.some((pattern) => pattern.startsWith("curl"))) {
          output.status = "deny"
          output.message = "no network from this repo"
        }
      }
    })
  })

  it.effect("the permission.ask hook decides before anyone is asked", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      yield* permission.ask(bashAsk("npm test -- --watch=false"))
      const error = yield* Effect.flip(permission.ask(bashAsk("curl https://example.com")))
      assert.strictEqual(error._tag, "PermissionDenied")
      assert.include(error.message, "no network from this repo")
      assert.deepStrictEqual(yield* permission.pending, [])
      const trail = yield* Effect.promise(() => readAudit(auditPath(join(root, ".lathe-data"))))
      assert.deepStrictEqual(
        trail.filter((entry) => entry.by === "hook").map((entry) => entry.decision),
        ["allow", "deny"]
      )
    }).pipe(Effect.provide(permissionLayer(root, [hook])))
  })

  it.effect("an unparsable line is asked whole and never allowed by a prefix rule", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const ruleset = [rule("bash", "*", "ask"), rule("bash", "echo *", "allow")]
      yield* permission.ask(bashAsk("echo fine", { ruleset }))
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(permission.ask(bashAsk(`echo "unterminated`, { ruleset })))
      const [event] = yield* Fiber.join(asked)
      assert.include(event?.patterns ?? [], `echo "unterminated`)
      assert.deepStrictEqual(event?.always, [`echo "unterminated`])
      yield* permission.reply(event?.id ?? "", { type: "once" })
      yield* Fiber.join(call)
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )

  it.effect("writes outside the project become external_directory checks", () => {
    const root = tempRoot()
    return Effect.gen(function* () {
      const permission = yield* PermissionNext
      const ruleset = [rule("*", "*", "allow"), rule("external_directory", "*", "ask")]
      yield* permission.ask(bashAsk("echo hi > notes.txt && cp a.txt sub/b.txt", { ruleset }))
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(permission.ask(bashAsk("echo hi > /etc/lathe-test.conf", { ruleset })))
      const [event] = yield* Fiber.join(asked)
      assert.deepStrictEqual(event?.patterns, ["/etc/lathe-test.conf"])
      assert.deepStrictEqual(event?.always, ["/etc/*"])
      yield* permission.reply(event?.id ?? "", { type: "always" })
      yield* Fiber.join(call)
      assert.include(
        readFileSync(projectApprovals(root), "utf8"),
        '"permission":"external_directory","pattern":"/etc/*"'
      )
    }).pipe(Effect.provide(permissionLayer(root)))
  })
})

describe("PermissionLive: where a command runs", () => {
  it.effect("metadata.workdir (as the bash tool sends it) decides where relative writes land", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionNext
      const ruleset = [rule("*", "*", "allow"), rule("external_directory", "*", "ask")]
      const asked = yield* collectAsked(1)
      const call = yield* Effect.forkChild(
        Effect.flip(permission.ask(bashAsk("touch made.txt", { ruleset, metadata: { workdir: "/var/tmp" } })))
      )
      const [event] = yield* Fiber.join(asked)
      assert.deepStrictEqual(event?.patterns, ["/var/tmp/made.txt"])
      yield* permission.reply(event?.id ?? "", { type: "reject" })
      assert.strictEqual((yield* Fiber.join(call))._tag, "PermissionRejected")
    }).pipe(Effect.provide(permissionLayer(tempRoot())))
  )
})

describe("approvals file", () => {
  it("is written under <data>/permission/<projectID>.json", () => {
    const path = approvalsPath("/data", "abc/../x")
    assert.strictEqual(path, "/data/permission/abc_.._x.json")
    assert.isFalse(existsSync(path))
  })
})
