import type { LatheEvent } from "@lathe/plugin/schema"
import type { TurnSummary } from "./run-tally.js"

/**
 * `lathe run --format stream-json`: the line protocol `claude -p --output-format stream-json --verbose` writes, built
 * from Lathe's events, so the scripts, dashboards and SDK wrappers written for that stream read Lathe's runs too. One
 * JSON object per line: a `system`/`init` line when the turn's prompt is stored, an `assistant` line for each finished
 * content block of the model (text, thinking, tool_use), a `user` line for each tool result, and one `result` line at
 * the end of the turn. The contract (with what Lathe adds and leaves out) is packages/cli/schema/stream-json.schema.json
 * and docs/headless.md.
 */

/** What the `init` line says that the events do not: what this process offers the model and how it answers asks. */
export interface StreamJsonContext {
  readonly cwd: string
  /** The names of the tools the agent may be offered. */
  readonly tools: ReadonlyArray<string>
  /** `bypassPermissions` with `--yes` (deny rules still hold), else `default`. */
  readonly permissionMode: "default" | "bypassPermissions"
}

type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly thinking: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }

/**
 * A random id in the UUID v4 format, for a line's `uuid`: it only tells lines apart, so `Math.random` does (loading
 * `node:crypto` for it would cost a stream-json run some 5 ms before its first model request).
 */
const uuid = (): string =>
  "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, (c) =>
    (c === "x" ? Math.floor(Math.random() * 16) : 8 + Math.floor(Math.random() * 4)).toString(16)
  )

/** Writes a turn's events as stream-json lines through `write` (one line each, with its newline). */
export const streamJsonWriter = (write: (line: string) => void, described: () => StreamJsonContext) => {
  let main: string | undefined
  let initSent = false
  /** The sessions of this turn's tree, each with the tool call of its parent that started it (null: the main one). */
  const parentCall = new Map<string, string | null>()
  /** The model's messages (a compaction summary is not one), with the model that wrote each. */
  const assistantModel = new Map<string, string>()
  /** Text and reasoning parts already written: a part is written once, when it is finished. */
  const written = new Set<string>()
  /** Tool calls whose `tool_use` block is written. */
  const used = new Set<string>()
  const line = (value: Record<string, unknown>) => write(`${JSON.stringify({ ...value, uuid: uuid() })}\n`)

  const init = (model: string, agent: string | undefined) => {
    initSent = true
    const context = described()
    line({
      type: "system",
      subtype: "init",
      cwd: context.cwd,
      session_id: main,
      model,
      tools: context.tools,
      permissionMode: context.permissionMode,
      ...(agent === undefined ? {} : { agent })
    })
  }

  const assistant = (sessionID: string, messageID: string, block: Block) =>
    line({
      type: "assistant",
      message: {
        id: messageID,
        type: "message",
        role: "assistant",
        model: assistantModel.get(messageID) ?? "",
        content: [block]
      },
      parent_tool_use_id: parentCall.get(sessionID) ?? null,
      session_id: main
    })

  const toolUse = (event: Extract<LatheEvent, { type: `tool.${string}` }>) => {
    if (used.has(event.callID)) return
    used.add(event.callID)
    assistant(event.sessionID, event.messageID, {
      type: "tool_use",
      id: event.callID,
      name: event.tool,
      input: event.state.input
    })
  }

  return {
    /** Starts a turn of session `sessionID`: its lines carry that id; its `init` line is due again. */
    begin: (sessionID: string) => {
      main = sessionID
      initSent = false
      parentCall.clear()
      parentCall.set(sessionID, null)
    },
    event: (event: LatheEvent) => {
      if (event.type === "session.created") {
        const parent = event.session.parentID
        if (parent !== undefined && parentCall.has(parent) && event.callID !== undefined)
          parentCall.set(event.session.id, event.callID)
        return
      }
      if (event.type === "message.updated") {
        const message = event.message
        if (!parentCall.has(message.sessionID)) return
        // A compaction summary is history, not something the model said in this turn.
        if (message.role === "assistant") {
          if (message.summary !== true) assistantModel.set(message.id, message.model.modelID)
        } else if (message.sessionID === main && !initSent)
          init(`${message.model.providerID}/${message.model.modelID}`, message.agent)
        return
      }
      if (event.type === "part.updated") {
        const part = event.part
        if (!parentCall.has(part.sessionID) || !assistantModel.has(part.messageID) || written.has(part.id)) return
        if (part.type === "text" && part.time?.end !== undefined && part.synthetic !== true && part.text !== "") {
          written.add(part.id)
          assistant(part.sessionID, part.messageID, { type: "text", text: part.text })
        } else if (part.type === "reasoning" && part.time.end !== undefined && part.text !== "") {
          written.add(part.id)
          assistant(part.sessionID, part.messageID, { type: "thinking", thinking: part.text })
        }
        return
      }
      if (event.type !== "tool.running" && event.type !== "tool.completed" && event.type !== "tool.error") return
      if (!parentCall.has(event.sessionID)) return
      // A call's input is whole once it runs; a call refused before it ran is said when it fails.
      toolUse(event)
      if (event.type === "tool.running") return
      const state = event.state
      line({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: event.callID,
              content: state.status === "completed" ? state.output : state.status === "error" ? state.error : "",
              is_error: state.status === "error"
            }
          ]
        },
        parent_tool_use_id: parentCall.get(event.sessionID) ?? null,
        session_id: main
      })
    },
    /** The turn's `result` line (after its `init` line, written here when the prompt never was stored). */
    result: (summary: TurnSummary, model: string | undefined) => {
      if (!initSent) {
        main = summary.sessionID
        init(model ?? "", undefined)
      }
      line({
        type: "result",
        subtype: summary.subtype,
        is_error: summary.isError,
        duration_ms: summary.durationMs,
        num_turns: summary.steps,
        result: summary.result,
        session_id: summary.sessionID,
        total_cost_usd: summary.cost,
        usage: {
          input_tokens: summary.tokens.input,
          output_tokens: summary.tokens.output,
          cache_read_input_tokens: summary.tokens.cache.read,
          cache_creation_input_tokens: summary.tokens.cache.write
        },
        permission_denials: summary.permissionDenials.map((denial) => ({
          tool_name: denial.tool,
          tool_use_id: denial.callID,
          tool_input: denial.input
        })),
        ...(summary.structured === undefined ? {} : { structured_output: summary.structured }),
        ...(summary.error === undefined ? {} : { errors: [summary.error.message], error: summary.error }),
        exit_code: summary.exitCode
      })
    }
  }
}

/** A stream-json writer; see {@link streamJsonWriter}. */
export type StreamJsonWriter = ReturnType<typeof streamJsonWriter>
