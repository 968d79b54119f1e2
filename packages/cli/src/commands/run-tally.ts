import { addTokens } from "@lathe/core"
import { emptyTokens, type LatheEvent, type Tokens } from "@lathe/plugin/schema"

/**
 * How a turn of `lathe run` ended, in the terms of Claude Code's `result` line: `success`, `error_max_turns` (the
 * step limit), `error_max_budget_usd` (the cost budget), or `error_during_execution` (anything else that failed).
 */
export type ResultSubtype = "success" | "error_max_turns" | "error_max_budget_usd" | "error_during_execution"

/** A permission ask of the turn that was rejected: the call it stopped, when the ask came from one. */
export interface PermissionDenial {
  readonly tool: string
  readonly callID: string
  readonly input: Readonly<Record<string, unknown>>
}

/** What a turn came to: the closing line of every format (`result`, `run.result`) and `-o`'s file. */
export interface TurnSummary {
  readonly sessionID: string
  readonly subtype: ResultSubtype
  readonly isError: boolean
  /** The model's last text of the turn (its last step that said something), "" when it said nothing. */
  readonly result: string
  /** Model calls of the turn's own session (a subagent's are not counted). */
  readonly steps: number
  readonly durationMs: number
  /** USD: the turn's steps and every subagent's. */
  readonly cost: number
  /** The turn's tokens and every subagent's. */
  readonly tokens: Tokens
  readonly permissionDenials: ReadonlyArray<PermissionDenial>
  /** The answer's JSON value under `--output-schema` (then `result` is its JSON text). */
  readonly structured?: unknown
  /** Why the turn failed: the recorded error's name (`ProviderError`, `StepLimit`, `BudgetExhausted`, …) and message. */
  readonly error?: { readonly name: string; readonly message: string }
  /** The process's exit code for this turn (see docs/headless.md). */
  readonly exitCode: number
}

/** The subtype of a turn that ended with `exitCode`, and the recorded error's name if any. */
export const resultSubtype = (exitCode: number, errorName: string | undefined): ResultSubtype =>
  errorName === "StepLimit"
    ? "error_max_turns"
    : errorName === "BudgetExhausted" || exitCode === 3
      ? "error_max_budget_usd"
      : exitCode === 0 && errorName === undefined
        ? "success"
        : "error_during_execution"

/**
 * Counts one turn from its events: the main session's steps and last text, the cost and tokens of its whole tree of
 * sessions (subagents included), and the asks rejected in it. `begin` starts the next turn (`--input-format
 * stream-json` runs several in one process).
 */
export const turnTally = (now: () => number = Date.now) => {
  let main = ""
  let started = now()
  let steps = 0
  let cost = 0
  let tokens = emptyTokens()
  const tree = new Set<string>()
  const assistants = new Set<string>()
  /** The text parts of the main session's current step, and the last step's that had any. */
  let current = new Map<string, string>()
  let last = ""
  const inputs = new Map<string, Readonly<Record<string, unknown>>>()
  const asks = new Map<string, { readonly tool: string; readonly callID: string }>()
  let denials: Array<PermissionDenial> = []
  /** Whether the turn's prompt was stored (the turn ran, even if it then failed). */
  let stored = false

  const texts = () => [...current.values()].filter((text) => text !== "").join("\n\n")

  /** The turn's final text: the answer's JSON value's text under `--output-schema`, else the last step's words. */
  const text = (structured?: unknown) =>
    structured !== undefined ? JSON.stringify(structured) : texts() !== "" ? texts() : last

  return {
    text,
    begin: (sessionID: string) => {
      main = sessionID
      started = now()
      steps = 0
      cost = 0
      tokens = emptyTokens()
      tree.clear()
      tree.add(sessionID)
      current = new Map()
      last = ""
      denials = []
      stored = false
    },
    /** Whether the turn's prompt was stored: it ran, whatever came of it. */
    ran: () => stored,
    /** The turn's session was removed again (nothing was stored in it): the closing line names none. */
    forget: () => {
      main = ""
    },
    see: (event: LatheEvent) => {
      switch (event.type) {
        case "session.created":
          if (event.session.parentID !== undefined && tree.has(event.session.parentID)) tree.add(event.session.id)
          return
        case "message.updated":
          // A compaction summary is history, not the turn's answer.
          if (event.message.role === "assistant") {
            if (event.message.summary !== true) assistants.add(event.message.id)
          } else if (event.message.sessionID === main) stored = true
          return
        case "step.finished":
          if (!tree.has(event.sessionID)) return
          if (event.sessionID === main) steps++
          cost += event.cost
          tokens = addTokens(tokens, event.tokens)
          return
        case "part.updated": {
          const part = event.part
          if (part.sessionID !== main || !assistants.has(part.messageID)) return
          if (part.type === "step-start") {
            if (texts() !== "") last = texts()
            current = new Map()
          } else if (part.type === "text" && part.synthetic !== true) current.set(part.id, part.text)
          return
        }
        case "tool.pending":
        case "tool.running":
          inputs.set(event.callID, event.state.input)
          return
        case "permission.asked":
          if (tree.has(event.sessionID)) asks.set(event.id, { tool: event.permission, callID: event.callID ?? "" })
          return
        case "permission.replied": {
          const ask = asks.get(event.id)
          asks.delete(event.id)
          if (ask !== undefined && event.reply === "reject")
            denials.push({ ...ask, input: inputs.get(ask.callID) ?? {} })
          return
        }
        default:
          return
      }
    },
    /** The turn as it ended, with the exit code the run gives it and the error recorded on its answer, if any. */
    summary: (
      exitCode: number,
      error: { readonly name: string; readonly message: string } | undefined,
      structured?: unknown
    ): TurnSummary => {
      const result = text(structured)
      return {
        sessionID: main,
        subtype: resultSubtype(exitCode, error?.name),
        isError: exitCode !== 0 || error !== undefined,
        result,
        steps,
        durationMs: Math.max(0, Math.round(now() - started)),
        // Summed step by step in floating point (3.9829999999999997): rounded to the nano-dollar the budget counts in.
        cost: Math.round(cost * 1e9) / 1e9,
        tokens,
        permissionDenials: denials,
        ...(structured === undefined ? {} : { structured }),
        ...(error === undefined ? {} : { error: { name: error.name, message: error.message } }),
        exitCode
      }
    }
  }
}

/** A turn tally; see {@link turnTally}. */
export type TurnTally = ReturnType<typeof turnTally>
