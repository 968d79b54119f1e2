import { assert, describe, it } from "@effect/vitest"
import { exploreAgent } from "../src/builtin.js"

describe("explore may search", () => {
  it("allows websearch and codesearch (its other rules deny everything it does not list)", () => {
    const rules = exploreAgent.permission as Readonly<Record<string, unknown>>
    assert.strictEqual(rules["*"], "deny")
    assert.strictEqual(rules.websearch, "allow")
    assert.strictEqual(rules.codesearch, "allow")
  })
})
