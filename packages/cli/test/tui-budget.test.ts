// The interactive session's status line shows what is left of the config's cost budget: the tighter of the turn's
// cap (`budget.max_cost`, against the latest turn's cost) and the session's (`max_session_cost`, against its total).
import { assert, describe, it } from "vitest"
import { createStyle } from "../src/style.js"
import { budgetLeft } from "../src/tui/app-bottom.js"
import { footerLine } from "../src/tui/panels.js"

const plain = createStyle(false)
const info = {
  agent: "build",
  model: "local/alpha",
  contextUsed: 0,
  contextLimit: 1000,
  cost: 1.5,
  status: "ready",
  statusTone: "idle" as const
}

describe("budget left in the status line", () => {
  it("is the tighter cap's remainder, never below zero; none without a budget", () => {
    assert.isUndefined(budgetLeft(undefined, { cost: 1, turnCost: 1 }))
    assert.strictEqual(budgetLeft({ maxCost: 2 }, { cost: 9, turnCost: 0.5 }), 1.5)
    assert.strictEqual(budgetLeft({ maxSessionCost: 10 }, { cost: 9, turnCost: 0.5 }), 1)
    assert.strictEqual(budgetLeft({ maxCost: 2, maxSessionCost: 10 }, { cost: 9.5, turnCost: 0.5 }), 0.5)
    assert.strictEqual(budgetLeft({ maxCost: 1 }, { cost: 3, turnCost: 3 }), 0)
  })

  it("is shown after the cost", () => {
    assert.include(footerLine({ ...info, budgetLeft: 0.5 }, 100, plain), "$1.5000 · $0.50 left")
    assert.notInclude(footerLine(info, 100, plain), "left")
  })
})
