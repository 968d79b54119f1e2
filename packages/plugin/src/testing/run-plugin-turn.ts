import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  Bus,
  type ConfigTestInput,
  createSession,
  type LatheEvent,
  type LLMRequest,
  type MessageWithParts,
  type Plugin,
  type PluginEntry,
  SessionPrompt,
  SessionStore
} from "@lathe/core"
import { ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import { Effect, Fiber, Stream } from "effect"
import { type PluginTurnStep, toScriptedSteps } from "./scripted-reply.js"

/** What `runPluginTurn` runs. */
export interface PluginTurnOptions {
  /** The plugins under test (a `definePlugin` result, or `{ plugin, options }` to pass config options). */
  readonly plugins: ReadonlyArray<Plugin | PluginEntry>
  /** The scripted model's replies, one per model call; a call past the end fails the turn (see `runPluginTurn`). */
  readonly steps: ReadonlyArray<PluginTurnStep>
  /** The person's prompt. Default "Go." */
  readonly prompt?: string
  /**
   * The project folder, with everything Lathe keeps (tool output, data) under it. Default: a fresh temp folder,
   * removed after the turn; pass your own to look at files the turn changed.
   */
  readonly root?: string
  /** `lathe.json` as an object, validated like the file (e.g. `{ permission: { bash: "deny" } }`). */
  readonly config?: ConfigTestInput
  /** How permission asks are answered: "allow" (default) or "deny". */
  readonly permission?: "allow" | "deny"
}

/** What a turn did, as plain data. */
export interface PluginTurn {
  /** Every request the model received, in order: system prompt, messages (tool results included) and tools. */
  readonly requests: ReadonlyArray<LLMRequest>
  /** Every event of the turn, from `session.created` to `session.idle` (e.g. `tool.completed`, `plugin.error`). */
  readonly events: ReadonlyArray<LatheEvent>
  /** The session's stored messages with their parts: the prompt, then the assistant's messages. */
  readonly messages: ReadonlyArray<MessageWithParts>
  /** The text of the turn's last assistant message. */
  readonly text: string
  readonly sessionID: string
}

/**
 * Runs one real turn of Lathe's loop with `plugins` loaded and a scripted model: the prompt is stored, the model's
 * replies are played, tools run, hooks fire, and the turn's requests, events and messages come back. Everything but
 * the model is real (in memory); permission asks are answered by `permission`; nothing needs Effect. Rejects when the
 * turn fails (the script ran out: "The scripted model has no step for call 3"); a hook that throws does not fail it
 * (the host reports it as a `plugin.error` event and goes on).
 * ```ts
 * const turn = await runPluginTurn({ plugins: [myPlugin], steps: [
 *   { steps: [{ tool: "shout", input: { text: "hi" } }] },
 *   { steps: [{ text: "Done." }] }
 * ] })
 * ```
 */
export const runPluginTurn = async (options: PluginTurnOptions): Promise<PluginTurn> => {
  const root = options.root ?? (await mkdtemp(join(tmpdir(), "lathe-plugin-")))
  const layer = testLoopLayer({
    root,
    plugins: options.plugins,
    steps: toScriptedSteps(options.steps),
    ...(options.config === undefined ? {} : { config: options.config }),
    permission: options.permission ?? "allow"
  })
  const turn = Effect.gen(function* () {
    const bus = yield* Bus
    const prompt = yield* SessionPrompt
    const store = yield* SessionStore
    const model = yield* ScriptedLLM
    const collected = yield* bus.subscribe
    const session = yield* createSession({ title: "test" })
    const events = yield* collected.pipe(
      Stream.takeUntil((event) => event.type === "session.idle" && event.sessionID === session.id),
      Stream.runCollect,
      Effect.forkChild({ startImmediately: true })
    )
    const last = yield* prompt.prompt({
      sessionID: session.id,
      parts: [{ type: "text", text: options.prompt ?? "Go." }],
      title: false
    })
    return {
      requests: yield* model.requests,
      events: [...(yield* Fiber.join(events))],
      messages: yield* store.messages(session.id),
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
