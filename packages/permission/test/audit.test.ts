import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { PendingAsk } from "@lathe/core"
import { implicitAsk } from "@lathe/plugin/host"
import { Effect, Schema } from "effect"
import { readApprovals, writeApprovals } from "../src/approvals.js"
import { AuditEntry, appendAudit, auditPath, readAudit } from "../src/audit.js"
import { describeAsk } from "../src/describe.js"
import { rule, tempRoot } from "./helpers.js"

describe("audit trail", () => {
  it.effect("appends JSON lines and reads them back, skipping torn lines, filtered and limited", () =>
    Effect.gen(function* () {
      const path = auditPath(join(tempRoot(), "data"))
      yield* appendAudit(path, [
        { time: 1, sessionID: "a", permission: "bash", pattern: "ls", decision: "allow", by: "rule" },
        { time: 2, sessionID: "b", permission: "edit", pattern: "x.ts", decision: "once", by: "reply" }
      ])
      appendFileSync(path, '{"time": 3, "sessionID": "a", "perm\n')
      yield* appendAudit(path, [
        {
          time: 4,
          sessionID: "a",
          permission: "bash",
          pattern: "rm x",
          decision: "deny",
          by: "rule",
          rule: rule("bash", "rm *", "deny")
        }
      ])
      const all = yield* Effect.promise(() => readAudit(path))
      assert.deepStrictEqual(
        all.map((entry) => entry.time),
        [1, 2, 4]
      )
      assert.deepStrictEqual(all[2]?.rule, rule("bash", "rm *", "deny"))
      const a = yield* Effect.promise(() => readAudit(path, { sessionID: "a", limit: 1 }))
      assert.deepStrictEqual(
        a.map((entry) => entry.pattern),
        ["rm x"]
      )
      assert.deepStrictEqual(yield* Effect.promise(() => readAudit(join(tempRoot(), "missing.jsonl"))), [])
    })
  )

  it.effect("writes each entry as the audit schema encodes it (its fields only, in order)", () =>
    Effect.gen(function* () {
      const path = auditPath(join(tempRoot(), "data"))
      const entries: Array<AuditEntry> = [
        { time: 1, sessionID: "a", permission: "read", pattern: "a.txt", decision: "allow", by: "rule" },
        {
          reason: "no",
          rule: { ...rule("bash", "rm *", "deny"), extra: "not in the schema" } as AuditEntry["rule"] & object,
          by: "reply",
          decision: "reject",
          pattern: "rm x",
          permission: "bash",
          requestID: "r",
          callID: "c",
          sessionID: "b",
          time: 2
        }
      ]
      yield* appendAudit(path, entries)
      const encode = Schema.encodeSync(Schema.fromJsonString(AuditEntry))
      assert.deepStrictEqual(
        readFileSync(path, "utf8").split("\n").filter(Boolean),
        entries.map((entry) => encode(entry))
      )
    })
  )
})

describe("remembered approvals file", () => {
  it.effect("round-trips, and a corrupt file fails with a message naming it", () =>
    Effect.gen(function* () {
      const dir = join(tempRoot(), "permission")
      const path = join(dir, "p.json")
      assert.deepStrictEqual(yield* readApprovals(path), [])
      yield* writeApprovals(path, [rule("bash", "git push *", "allow")])
      assert.deepStrictEqual(yield* readApprovals(path), [rule("bash", "git push *", "allow")])
      mkdirSync(dir, { recursive: true })
      writeFileSync(path, '{"version":1,"rules":[{"permission":1}]}')
      const error = yield* Effect.flip(readApprovals(path))
      assert.strictEqual(error._tag, "ApprovalStoreError")
      assert.include(error.message, path)
      assert.include(error.message, "Fix or delete the file")
    })
  )
})

describe("describeAsk", () => {
  it("renders what is asked, why, what always remembers and the answers", () => {
    const ask: PendingAsk = {
      id: "per_1",
      sessionID: "s",
      permission: "bash",
      patterns: ["git push origin main"],
      always: ["git push *"],
      metadata: {
        tool: "bash",
        command: "CI=true git push origin main",
        checks: [
          { permission: "bash", pattern: "git push origin main", rule: rule("bash", "*", "ask") },
          { permission: "external_directory", pattern: "/etc/x", rule: implicitAsk("external_directory") }
        ]
      }
    }
    const text = describeAsk(ask)
    assert.include(text, "Permission needed: bash")
    assert.include(text, "command: CI=true git push origin main")
    assert.include(text, '• git push origin main\n    why: rule bash "*": ask (from test.json)')
    assert.include(text, "• external_directory /etc/x\n    why: no rule matched, so Lathe asks")
    assert.include(text, "always would allow from now on: git push *")
    assert.include(text, "[o]nce, [a]lways, or [r]eject")
  })
})
