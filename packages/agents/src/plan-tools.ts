import { lstatSync, readFileSync, realpathSync } from "node:fs"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { type AnyTool, Tool, type ToolContext, type ToolResult } from "@lathe/plugin"
import { z } from "zod"
import { toolSchema } from "./tool-schemas.js"

/** Where plans live, relative to the project root (the plan agent may write only there). */
export const PLANS_DIR = ".lathe/plans"

/** The largest plan file `plan_exit` reads (256 KiB): a plan is prose, not data. */
export const MAX_PLAN_BYTES = 256 * 1024

/** `plan_exit` arguments: the plan as text, or the file it is in; one of the two. */
export const PlanExitInput = z.object({
  plan: z.string().optional().describe("The plan itself, as markdown (when it is not in a file)"),
  path: z
    .string()
    .optional()
    .describe(`The plan's file under ${PLANS_DIR}/ (e.g. ${PLANS_DIR}/add-retry.md), relative to the project root`)
})
/** `plan_exit` arguments, parsed. */
export type PlanExitInput = z.infer<typeof PlanExitInput>

/** `plan_enter` arguments. */
export const PlanEnterInput = z.object({
  reason: z.string().min(1).describe("Why the task should be planned first, in a sentence or two, for the person")
})
/** `plan_enter` arguments, parsed. */
export type PlanEnterInput = z.infer<typeof PlanEnterInput>

const errorTag = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : undefined

const feedbackOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "feedback" in error && typeof error.feedback === "string"
    ? error.feedback
    : undefined

/**
 * The plan file `path` names, read: it must resolve (links followed) to a regular file inside `<root>/.lathe/plans/`,
 * so a plan cannot be a way to read something else. Throws a message for the model otherwise.
 */
export const readPlanFile = (root: string, path: string): { readonly path: string; readonly text: string } => {
  const plans = resolve(root, PLANS_DIR)
  const lexical = resolve(root, path)
  const outside = (p: string, dir: string) => {
    const rel = relative(dir, p)
    return rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)
  }
  if (outside(lexical, plans))
    throw new Error(`The plan must be a file under ${PLANS_DIR}/ (got ${path}); or pass the plan's text as \`plan\`.`)
  let real: string
  try {
    real = realpathSync(lexical)
  } catch {
    throw new Error(`There is no plan file ${path}. Write it first, or pass the plan's text as \`plan\`.`)
  }
  let realPlans = plans
  try {
    realPlans = realpathSync(plans)
  } catch {}
  if (outside(real, realPlans))
    throw new Error(`${path} leads outside ${PLANS_DIR}/ (through a link); a plan must be a file under ${PLANS_DIR}/.`)
  const stat = lstatSync(real)
  if (!stat.isFile()) throw new Error(`${path} is not a file; a plan must be a file under ${PLANS_DIR}/.`)
  if (stat.size > MAX_PLAN_BYTES)
    throw new Error(`${path} is ${stat.size} bytes, over the ${MAX_PLAN_BYTES}-byte cap for a plan; shorten it.`)
  return { path: relative(root, lexical).split(sep).join("/"), text: readFileSync(real, "utf8") }
}

/** The plan `plan_exit` proposes: the file's content, or the text; throws a message for the model when neither. */
const planOf = (input: PlanExitInput, root: string): { readonly path?: string; readonly text: string } => {
  if (input.path !== undefined && input.plan !== undefined)
    throw new Error("Pass the plan either as `plan` (its text) or as `path` (its file), not both.")
  const plan = input.path !== undefined ? readPlanFile(root, input.path) : { text: input.plan ?? "" }
  if (plan.text.trim() === "")
    throw new Error(
      input.path !== undefined ? `The plan file ${input.path} is empty.` : "Pass the plan: `plan` or `path`."
    )
  return plan
}

/**
 * Asks the person (an ask only a person may approve: no rule of the defaults, no `--yes`, no hook answers it) whether
 * the session goes on as `agent`; on yes hands it over (`ctx.switchAgent`) and returns `approved`, on a rejection
 * returns what the current agent reads instead (the person's reason, or why no one could be asked). A denial by a
 * rule is thrown as it is: the model reads it.
 */
const proposeSwitch = async (
  ctx: ToolContext,
  permission: "plan_exit" | "plan_enter",
  agent: string,
  details: string,
  declined: (reason: string | undefined) => string
): Promise<{ readonly approved: true } | { readonly approved: false; readonly result: ToolResult }> => {
  if (!ctx.switchAgent)
    throw new Error(`This Lathe host cannot switch agents here (a subagent's turn); the ${ctx.agent} agent goes on.`)
  try {
    await ctx.ask({
      permission,
      patterns: [agent],
      always: [agent],
      requiresPerson: true,
      metadata: { tool: permission, agent, details }
    })
  } catch (error) {
    if (errorTag(error) !== "PermissionRejected") throw error
    const reason = feedbackOf(error)
    return {
      approved: false,
      result: {
        title: `stayed with ${ctx.agent}`,
        output: declined(reason),
        metadata: { switched: false, ...(reason !== undefined ? { reason } : {}) }
      }
    }
  }
  await ctx.switchAgent(agent)
  return { approved: true }
}

/**
 * `plan_exit` (offered to the plan agent): proposes the finished plan to the person and, when they approve, hands the
 * session to `build`, whose next step sees the plan in this call's output.
 */
export const createPlanExitTool = (): AnyTool =>
  Tool.define("plan_exit", {
    jsonSchema: toolSchema("plan_exit"),
    description:
      "Propose your finished plan to the user and ask to switch to the build agent to carry it out. Call it once the " +
      `plan is complete: pass its file under ${PLANS_DIR}/ as \`path\` (or its text as \`plan\`). If the user ` +
      "approves, you continue as the build agent with the plan; if not, you are told their reason: revise the plan.",
    parameters: PlanExitInput,
    mutates: false,
    // A subagent's turn cannot change the session's agent; the plan must stay in the history build reads.
    subagents: false,
    prunable: false,
    execute: async (input, ctx) => {
      const plan = planOf(input, ctx.root)
      const where = plan.path !== undefined ? ` (${plan.path})` : ""
      const decided = await proposeSwitch(ctx, "plan_exit", "build", plan.text, (reason) =>
        reason !== undefined
          ? `The switch to build was not approved: ${reason}\nStay in plan mode: revise the plan with this in mind ` +
            "and propose it again with plan_exit when it is ready."
          : "The user did not approve switching to build and gave no reason. Stay in plan mode: ask them what to change."
      )
      if (!decided.approved) return decided.result
      return {
        title: `plan approved${where}: switched to build`,
        output:
          `The user approved the plan${where}. From your next step you are the build agent: you have build's tools ` +
          "and permissions, and you may change the project. Carry out this plan now, step by step:\n\n" +
          `<plan>\n${plan.text.trimEnd()}\n</plan>`,
        metadata: {
          switched: true,
          from: ctx.agent,
          to: "build",
          ...(plan.path !== undefined ? { path: plan.path } : {})
        }
      }
    }
  })

/**
 * `plan_enter` (offered to the build agent): asks the person to switch the session to the plan agent, for a task
 * better planned before it is changed.
 */
export const createPlanEnterTool = (): AnyTool =>
  Tool.define("plan_enter", {
    jsonSchema: toolSchema("plan_enter"),
    description:
      "Ask the user to switch to the plan agent before changing anything: for a large, risky or unclear task that " +
      "should be studied and planned first. Say why in `reason`. If the user approves, you continue as the plan " +
      "agent (read-only except plan files); if not, you are told their reason and go on with the task.",
    parameters: PlanEnterInput,
    mutates: false,
    subagents: false,
    execute: async (input, ctx) => {
      const decided = await proposeSwitch(ctx, "plan_enter", "plan", input.reason, (reason) =>
        reason !== undefined
          ? `The switch to plan was not approved: ${reason}\nGo on with the task as you are.`
          : "The user did not approve switching to plan. Go on with the task as you are."
      )
      if (!decided.approved) return decided.result
      return {
        title: "switched to plan",
        output:
          "The user agreed to plan first. From your next step you are the plan agent: study the code, change " +
          `nothing outside ${PLANS_DIR}/, write the plan there, then call plan_exit to propose carrying it out.`,
        metadata: { switched: true, from: ctx.agent, to: "plan" }
      }
    }
  })

/** Both tools, for the agents plugin to return. */
export const createPlanTools = (): ReadonlyArray<AnyTool> => [createPlanExitTool(), createPlanEnterTool()]
