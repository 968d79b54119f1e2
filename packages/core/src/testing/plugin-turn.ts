/**
 * The host side of `@lathe/plugin/testing`'s `runPluginTurn`: the kit defines what a turn takes and gives back
 * (plain data in the kit's types), and imports this module when an author's test runs one. Nothing here is for
 * authors to call directly.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { PromptPart, ToolPart } from "@lathe/plugin/schema"
import type {
  PluginTurn,
  PluginTurnLog,
  PluginTurnOptions,
  PluginTurnRequest,
  PluginTurnToolResult,
  ScriptedReply
} from "@lathe/plugin/testing"
import { Effect, Fiber, Layer, Logger, References, Stream } from "effect"
import type { ConfigTestInput } from "../config/config.js"
import { Bus } from "../contracts/bus.js"
import { SessionPrompt } from "../loop/session-prompt.js"
import { Plugins } from "../plugin-host/plugins.js"
import { createSession } from "../store/session.js"
import { SessionStore } from "../store/session-store.js"
import { testLoopLayer } from "./index.js"
import { chunks, type ScriptedChunks, ScriptedLLM } from "./scripted-llm.js"

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

/** A finished tool part as the kit reports it. */
const toolResult = (part: ToolPart): ReadonlyArray<PluginTurnToolResult> => {
  const { state } = part
  const base = { tool: part.tool, callID: part.callID, input: state.input }
  if (state.status === "completed")
    return [{ ...base, status: "completed", output: state.output, title: state.title, metadata: state.metadata }]
  if (state.status === "error") return [{ ...base, status: "error", error: state.error }]
  return []
}

const LEVELS: Readonly<Record<string, PluginTurnLog["level"]>> = { Info: "info", Warn: "warn", Error: "error" }

/** A logger keeping the info, warning and error lines (`ctx.log`'s, and the host's about plugins) in `into`. */
const keepLogs = (into: Array<PluginTurnLog>) =>
  Logger.make(({ message, logLevel, fiber }) => {
    const level = LEVELS[logLevel]
    if (level === undefined) return
    const text = Array.isArray(message) ? message[0] : message
    const plugin = fiber.getRef(References.CurrentLogAnnotations).plugin
    into.push({ level, ...(typeof plugin === "string" ? { plugin } : {}), message: String(text) })
  })

/** Runs one turn for the kit's `runPluginTurn` (see there). */
export const runPluginTurn = async (options: PluginTurnOptions): Promise<PluginTurn> => {
  const root = options.root ?? (await mkdtemp(join(tmpdir(), "lathe-plugin-")))
  const logs: Array<PluginTurnLog> = []
  const layer = testLoopLayer({
    root,
    ...(options.home === undefined && options.configDir === undefined
      ? {}
      : {
          paths: {
            ...(options.home === undefined ? {} : { home: options.home }),
            ...(options.configDir === undefined ? {} : { config: options.configDir })
          }
        }),
    plugins: options.plugins,
    steps: options.steps.map(replyChunks),
    // The kit takes config as a plain object; the host validates it as it does a lathe.json.
    ...(options.config === undefined ? {} : { config: options.config as ConfigTestInput }),
    permission: options.permission ?? "allow"
  }).pipe(Layer.provide(Logger.layer([keepLogs(logs)])))
  const turn = Effect.gen(function* () {
    const bus = yield* Bus
    const prompt = yield* SessionPrompt
    const store = yield* SessionStore
    const model = yield* ScriptedLLM
    const plugins = yield* Plugins
    const collected = yield* bus.subscribe
    const session = yield* createSession({ title: "test" })
    const events = yield* collected.pipe(
      Stream.takeUntil((event) => event.type === "session.idle" && event.sessionID === session.id),
      Stream.runCollect,
      Effect.forkChild({ startImmediately: true })
    )
    const command = options.command
    const expansion = command
      ? yield* plugins.runCommand(command.name, command.args ?? [])
      : { parts: [{ type: "text", text: options.prompt ?? "Go." }] satisfies ReadonlyArray<PromptPart> }
    const last = yield* prompt.prompt({
      sessionID: session.id,
      parts: expansion.parts,
      ...("agent" in expansion && expansion.agent !== undefined ? { agent: expansion.agent } : {}),
      ...("model" in expansion && expansion.model !== undefined ? { model: expansion.model } : {}),
      title: false
    })
    const messages = yield* store.messages(session.id)
    const requests: ReadonlyArray<PluginTurnRequest> = (yield* model.requests).map((request) => ({
      system: request.system,
      tools: Object.keys(request.tools)
    }))
    return {
      events: [...(yield* Fiber.join(events))],
      toolResults: messages.flatMap((message) =>
        message.parts.flatMap((part) => (part.type === "tool" ? toolResult(part) : []))
      ),
      requests,
      messages,
      logs,
      text: last.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""),
      sessionID: session.id
    } satisfies PluginTurn
  })
  try {
    return await Effect.runPromise(turn.pipe(Effect.scoped, Effect.provide(layer)))
  } finally {
    if (options.root === undefined) await rm(root, { recursive: true, force: true })
  }
}
