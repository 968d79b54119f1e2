import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { compileOutputSchema } from "@lathe/core"
import type { TurnLimits } from "../backend.js"

/** `lathe run`'s limit flags, as parsed. */
export interface LimitFlags {
  readonly "max-cost"?: string | undefined
  readonly "max-steps"?: string | undefined
  readonly "output-schema"?: string | undefined
}

/** The `--max-cost` amount: a positive number of USD (a leading `$` allowed). */
const parseCost = (text: string): number | undefined => {
  const value = Number(text.trim().replace(/^\$/, ""))
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/** The `--output-schema` file, read and compiled; a string says where it is wrong. */
const readSchema = (file: string, cwd: string) => {
  let text: string
  try {
    text = readFileSync(resolve(cwd, file), "utf8")
  } catch (error) {
    return `--output-schema ${file}: ${error instanceof Error ? error.message : String(error)}`
  }
  let value: unknown
  try {
    // Only compiled below, as a JSON Schema; its syntax error names the line and column.
    value = JSON.parse(text)
  } catch (error) {
    return `--output-schema ${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`
  }
  const compiled = compileOutputSchema(value)
  return typeof compiled === "string" ? `--output-schema ${file} is not a usable JSON Schema: ${compiled}` : compiled
}

/**
 * The turn's limits from `--max-cost`, `--max-steps` and `--output-schema`, or a usage error (exit 2) saying which
 * flag is wrong and why. Absent flags leave the config's settings in force.
 */
export const runLimits = (values: LimitFlags, cwd: string): TurnLimits | string => {
  let limits: TurnLimits = {}
  const cost = values["max-cost"]
  if (cost !== undefined) {
    const maxCost = parseCost(cost)
    if (maxCost === undefined) return `--max-cost takes an amount in USD above 0 (e.g. --max-cost 0.50), not "${cost}".`
    limits = { ...limits, maxCost }
  }
  const steps = values["max-steps"]
  if (steps !== undefined) {
    const maxSteps = Number(steps)
    if (!/^\d+$/.test(steps.trim()) || !Number.isSafeInteger(maxSteps))
      return `--max-steps takes a whole number of model calls (0 = no cap), not "${steps}".`
    limits = { ...limits, maxSteps }
  }
  const schemaFile = values["output-schema"]
  if (schemaFile !== undefined) {
    const outputSchema = readSchema(schemaFile, cwd)
    if (typeof outputSchema === "string") return outputSchema
    limits = { ...limits, outputSchema }
  }
  return limits
}

/** Whether any limit flag was given (they apply to a run on this machine only). */
export const hasLimits = (values: LimitFlags): boolean =>
  values["max-cost"] !== undefined || values["max-steps"] !== undefined || values["output-schema"] !== undefined
