import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PermissionDenied, PermissionRejected, type PermissionRequest } from "@lathe/plugin"
import { runTool } from "@lathe/plugin/testing"
import { buildAgent, planAgent } from "../src/builtin.js"
import { createPlanEnterTool, createPlanExitTool, readPlanFile } from "../src/plan-tools.js"

// The tools alone, against a real project folder: what they ask, what they hand over, what the model reads.
const project = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-plan-tools-"))
  mkdirSync(join(root, ".lathe", "plans"), { recursive: true })
  writeFileSync(join(root, ".lathe", "plans", "retry.md"), "# Retry\n1. add a retry loop\n")
  writeFileSync(join(root, "secret.txt"), "not a plan\n")
  return root
}

/** A context that records the asks and switches, answering each ask with `answer`. */
const recorder = (answer: (request: PermissionRequest) => Promise<void> = async () => {}) => {
  const asks: Array<PermissionRequest> = []
  const switches: Array<string> = []
  return {
    asks,
    switches,
    options: (root: string, agent = "plan") => ({
      root,
      agent,
      ask: async (request: PermissionRequest) => {
        asks.push(request)
        await answer(request)
      },
      switchAgent: async (name: string) => {
        switches.push(name)
      }
    })
  }
}

const rejected = (feedback?: string) =>
  new PermissionRejected({
    permission: "plan_exit",
    patterns: ["build"],
    ...(feedback !== undefined ? { feedback } : {}),
    message: "rejected"
  })

describe("plan_exit", () => {
  it("approved: asks plan_exit of a person only, with the plan, then hands the session to build", async () => {
    const root = project()
    const run = recorder()
    const out = await runTool(createPlanExitTool(), { path: ".lathe/plans/retry.md" }, run.options(root))
    assert.deepStrictEqual(run.switches, ["build"])
    const ask = run.asks[0]
    assert.strictEqual(ask?.permission, "plan_exit")
    assert.isTrue(ask?.requiresPerson)
    assert.deepStrictEqual(ask?.patterns, ["build"])
    assert.include(String(ask?.metadata?.details), "add a retry loop")
    assert.include(out.output, "<plan>\n# Retry\n1. add a retry loop\n</plan>")
    assert.include(out.output, "you are the build agent")
    assert.deepInclude(out.metadata, { switched: true, from: "plan", to: "build", path: ".lathe/plans/retry.md" })
  })

  it("takes the plan as text", async () => {
    const run = recorder()
    const out = await runTool(createPlanExitTool(), { plan: "1. do it" }, run.options(project()))
    assert.include(out.output, "<plan>\n1. do it\n</plan>")
    assert.deepStrictEqual(run.switches, ["build"])
  })

  it("rejected with a reason: no switch, and the model reads the reason", async () => {
    const run = recorder(async () => {
      throw rejected("add tests first")
    })
    const out = await runTool(createPlanExitTool(), { plan: "1. do it" }, run.options(project()))
    assert.deepStrictEqual(run.switches, [])
    assert.include(out.output, "add tests first")
    assert.include(out.output, "Stay in plan mode")
    assert.deepInclude(out.metadata, { switched: false, reason: "add tests first" })
  })

  it("rejected without a reason: no switch, and the model is told to ask", async () => {
    const run = recorder(async () => {
      throw rejected()
    })
    const out = await runTool(createPlanExitTool(), { plan: "1. do it" }, run.options(project()))
    assert.deepStrictEqual(run.switches, [])
    assert.include(out.output, "gave no reason")
  })

  it("denied by a rule: the denial is the call's error", async () => {
    const run = recorder(async () => {
      throw new PermissionDenied({ permission: "plan_exit", pattern: "build", message: "plan_exit is denied" })
    })
    const error = await runTool(createPlanExitTool(), { plan: "1. do it" }, run.options(project())).catch(
      (e: { _tag: string; message: string }) => e
    )
    assert.strictEqual((error as { _tag: string })._tag, "PermissionDenied")
    assert.deepStrictEqual(run.switches, [])
  })

  it("refuses a path outside .lathe/plans (also through a link), a missing file, both or neither", async () => {
    const root = project()
    symlinkSync(join(root, "secret.txt"), join(root, ".lathe", "plans", "link.md"))
    const run = recorder()
    const tool = createPlanExitTool()
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ path: "secret.txt" }, /must be a file under \.lathe\/plans/],
      [{ path: ".lathe/plans/../../secret.txt" }, /must be a file under \.lathe\/plans/],
      [{ path: join(root, "secret.txt") }, /must be a file under \.lathe\/plans/],
      [{ path: ".lathe/plans/link.md" }, /leads outside \.lathe\/plans/],
      [{ path: ".lathe/plans/none.md" }, /There is no plan file/],
      [{ path: ".lathe/plans" }, /must be a file under/],
      [{ path: ".lathe/plans/retry.md", plan: "x" }, /not both/],
      [{}, /Pass the plan/]
    ]
    for (const [args, pattern] of cases) {
      const error = await runTool(tool, args, run.options(root)).then(
        () => undefined,
        (e: { message: string }) => e.message
      )
      assert.match(String(error), pattern, JSON.stringify(args))
    }
    assert.deepStrictEqual(run.asks, [], "nothing is asked for a plan that cannot be read")
    assert.deepStrictEqual(run.switches, [])
  })

  it("reads a plan in a subfolder, and names it relative to the root", () => {
    const root = project()
    mkdirSync(join(root, ".lathe", "plans", "auth"))
    writeFileSync(join(root, ".lathe", "plans", "auth", "login.md"), "login\n")
    assert.deepStrictEqual(readPlanFile(root, join(root, ".lathe/plans/auth/login.md")), {
      path: ".lathe/plans/auth/login.md",
      text: "login\n"
    })
  })

  it("where the host cannot switch agents (a subagent's turn) nothing is asked", async () => {
    const asks: Array<PermissionRequest> = []
    const error = await runTool(
      createPlanExitTool(),
      { plan: "1. do it" },
      {
        root: project(),
        ask: async (r) => {
          asks.push(r)
        }
      }
    ).then(
      () => undefined,
      (e: { message: string }) => e.message
    )
    assert.match(String(error), /cannot switch agents/)
    assert.deepStrictEqual(asks, [])
  })
})

describe("plan_enter", () => {
  it("approved: asks plan_enter of a person only, with the reason, then hands the session to plan", async () => {
    const run = recorder()
    const out = await runTool(
      createPlanEnterTool(),
      { reason: "touches every module" },
      run.options(project(), "build")
    )
    assert.deepStrictEqual(run.switches, ["plan"])
    assert.strictEqual(run.asks[0]?.permission, "plan_enter")
    assert.isTrue(run.asks[0]?.requiresPerson)
    assert.strictEqual(run.asks[0]?.metadata?.details, "touches every module")
    assert.include(out.output, "you are the plan agent")
  })

  it("rejected: no switch, and build goes on with the reason", async () => {
    const run = recorder(async () => {
      throw rejected("just do it")
    })
    const out = await runTool(createPlanEnterTool(), { reason: "big" }, run.options(project(), "build"))
    assert.deepStrictEqual(run.switches, [])
    assert.include(out.output, "just do it")
  })
})

describe("the agents' setup", () => {
  it("build is offered plan_enter (asked) and not plan_exit; plan is not offered plan_enter", () => {
    assert.deepStrictEqual(buildAgent.permission, { plan_enter: "ask" })
    assert.deepInclude(buildAgent.tools ?? {}, { plan_exit: false })
    assert.deepInclude(planAgent.tools ?? {}, { plan_enter: false })
  })
})
