import { assert, describe, it } from "@effect/vitest"
import type { PermissionConfig, Ruleset } from "@lathe/plugin"
import { checksOf, isPersonOnly, verdictOf } from "../src/checks.js"
import { DEFAULTS_SOURCE, defaults, fromConfig, merge, RUN_FLAGS_SOURCE } from "../src/ruleset.js"
import { project } from "./decide.js"

// plan_exit and plan_enter hand the session between plan and build: only a person answers them. No default, no
// wildcard rule, no `--allow` and no `--yes` does; a rule of the person's config naming the permission does.
const context = project()
// The built-in agents' rules about these (`@lathe/agents`' test pins them): plan has none, build offers plan_enter.
const planAgent = { permission: { edit: { "*": "deny" } } satisfies PermissionConfig }
const buildAgent = { permission: { plan_enter: "ask" } satisfies PermissionConfig }

/** The ruleset a turn of `agent` is asked under: defaults → agent → the person's config → `--allow`. */
const turnRules = (
  agent: { readonly permission?: PermissionConfig },
  config: PermissionConfig = {},
  flags: PermissionConfig = {}
): Ruleset =>
  merge(
    defaults(),
    fromConfig(agent.permission, "agent"),
    fromConfig(config, "lathe.json"),
    fromConfig(flags, RUN_FLAGS_SOURCE)
  )

/** How an ask of `permission` (as the plan tools make it) is decided: "person" when only a person may approve it. */
const decided = (permission: "plan_exit" | "plan_enter", ruleset: Ruleset) => {
  const request = { sessionID: "s", permission, patterns: [permission === "plan_exit" ? "build" : "plan"], ruleset }
  const [verdict] = checksOf(request, context, undefined).map((check) => verdictOf(check, ruleset, [], context.home))
  return verdict?.action === "ask" && verdict.requiresPerson ? "person" : verdict?.action
}

describe("plan_exit and plan_enter are asks only a person may approve", () => {
  it("both permissions are person-only, whichever tool asks", () => {
    assert.isTrue(isPersonOnly({ permission: "plan_exit", patterns: ["build"] }))
    assert.isTrue(isPersonOnly({ permission: "plan_enter", patterns: ["plan"] }))
  })

  it("defaults: plan_exit asks, plan_enter is denied (build's own rule offers it, as an ask)", () => {
    const rules = defaults().filter((rule) => rule.permission.startsWith("plan_"))
    assert.deepStrictEqual(
      rules.map((rule) => [rule.permission, rule.action, rule.source]),
      [
        ["plan_enter", "deny", DEFAULTS_SOURCE],
        ["plan_exit", "ask", DEFAULTS_SOURCE]
      ]
    )
    assert.strictEqual(decided("plan_exit", turnRules(planAgent)), "person")
    assert.strictEqual(decided("plan_enter", turnRules(planAgent)), "deny")
    assert.strictEqual(decided("plan_enter", turnRules(buildAgent)), "person")
  })

  it("a wildcard or a --allow never approves them; a rule of the person's config naming them does", () => {
    assert.strictEqual(decided("plan_exit", turnRules(planAgent, { "*": "allow" })), "person")
    assert.strictEqual(decided("plan_exit", turnRules(planAgent, { "plan_*": "allow" })), "person")
    assert.strictEqual(decided("plan_exit", turnRules(planAgent, {}, { plan_exit: "allow" })), "person")
    assert.strictEqual(decided("plan_exit", turnRules(planAgent, { plan_exit: "allow" })), "allow")
    assert.strictEqual(decided("plan_enter", turnRules(buildAgent, { plan_enter: "allow" })), "allow")
    // A deny still holds.
    assert.strictEqual(decided("plan_exit", turnRules(planAgent, { plan_exit: "deny" })), "deny")
  })
})
