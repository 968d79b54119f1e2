import { assert, describe, it } from "@effect/vitest"
import { evaluate } from "@lathe/plugin"
import { defaults, fromConfig, merge } from "../src/ruleset.js"

// A search sends its query outside the machine, and a provider's own search runs without a per-call ask: both are
// asked by default, and an agent's (explore's) or the person's allow opens them.
describe("web and code search in the default rules", () => {
  it("websearch and codesearch are asked by default; webfetch stays allowed", () => {
    assert.strictEqual(evaluate("websearch", "zod 4.6", defaults()).action, "ask")
    assert.strictEqual(evaluate("codesearch", "streamText lang:ts", defaults()).action, "ask")
    assert.strictEqual(evaluate("webfetch", "https://zod.dev", defaults()).action, "allow")
  })

  it("an agent's or the person's allow opens them", () => {
    const explore = merge(defaults(), fromConfig({ "*": "deny", websearch: "allow", codesearch: "allow" }, "agent"))
    assert.strictEqual(evaluate("websearch", "zod 4.6", explore).action, "allow")
    assert.strictEqual(evaluate("codesearch", "x", explore).action, "allow")
    assert.strictEqual(
      evaluate("websearch", "*", merge(defaults(), fromConfig({ websearch: "allow" }))).action,
      "allow"
    )
  })
})
