import { chunks, type ScriptedChunks, type ScriptedStep, type ServerStep, type ServerUsage } from "@lathe/core/testing"

/**
 * One model reply written the way `startScriptedServer` takes it: text, reasoning and tool calls in order, then a
 * finish reason and the usage. `finish` is OpenAI's word (`stop`, `tool_calls`, `length`); it defaults to `tool_calls`
 * when a step calls a tool, else `stop`. The usage defaults to 10 input and 5 output tokens.
 */
export interface ScriptedReply {
  readonly steps: ReadonlyArray<ServerStep>
  readonly finish?: string
  readonly usage?: ServerUsage
}

/** One model call of a plugin turn: a reply as above, or `ScriptedLLM`'s chunks (or a function of the request). */
export type PluginTurnStep = ScriptedStep | ScriptedReply

type Finish = NonNullable<Parameters<typeof chunks.finish>[1]>

const FINISH: Readonly<Record<string, Finish>> = {
  stop: "stop",
  tool_calls: "tool-calls",
  length: "length",
  content_filter: "content-filter",
  error: "error"
}

/** The chunks of a reply written the server's way; tool calls without an id get `call_<call>_<index>`. */
const replyChunks = (reply: ScriptedReply, call: number): ScriptedChunks => {
  const parts = reply.steps.map((step, index) => {
    if ("text" in step) return chunks.text(step.text)
    if ("reasoning" in step) return chunks.reasoning(step.reasoning)
    return chunks.toolCall(step.id ?? `call_${call}_${index}`, step.tool, step.input)
  })
  const calls = reply.steps.some((step) => "tool" in step)
  const finish = reply.finish === undefined ? (calls ? "tool-calls" : "stop") : (FINISH[reply.finish] ?? "other")
  const usage = reply.usage ?? { input: 10, output: 5 }
  return [
    ...parts,
    chunks.finish(
      { input: usage.input, output: usage.output, cacheRead: usage.cached ?? 0, reasoning: usage.reasoning ?? 0 },
      finish
    )
  ]
}

/** The script `ScriptedLLM.layer` plays: replies written the server's way become chunks, the rest pass as they are. */
export const toScriptedSteps = (steps: ReadonlyArray<PluginTurnStep>): ReadonlyArray<ScriptedStep> =>
  steps.map((step, call) =>
    typeof step === "function" || Array.isArray(step) ? step : replyChunks(step as ScriptedReply, call)
  )
