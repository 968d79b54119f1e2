import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Tool } from "@lathe/plugin"
import type { LatheEvent, MessageWithParts, Part, ToolPart } from "@lathe/plugin/schema"
import { Effect, Fiber, Stream } from "effect"
import { z } from "zod"
import { Bus } from "../src/contracts/bus.js"
import { type PromptInput, SessionPrompt } from "../src/loop/session-prompt.js"
import { createSession } from "../src/store/session.js"
import { SessionStore } from "../src/store/session-store.js"

/** A fresh temp project dir. */
export const tempRoot = () => mkdtempSync(join(tmpdir(), "lathe-loop-"))

/** Read-only: echoes its text. */
export const EchoTool = Tool.define("echo", {
  description: "Echo the text back",
  parameters: z.object({ text: z.string() }),
  mutates: false,
  execute: async ({ text }) => ({ title: `echo ${text}`, output: `echoed: ${text}`, metadata: { length: text.length } })
})

/** Always throws. */
export const BoomTool = Tool.define("boom", {
  description: "Fails",
  parameters: z.object({}),
  mutates: false,
  execute: async (): Promise<{ title: string; output: string }> => {
    throw new Error("kaboom")
  }
})

/** Waits until aborted (or 10 s), reporting progress through `ctx.metadata`. */
/** Called when `SlowTool` starts running: a test aborts from here, not after a guessed delay. */
export const slowToolStarted: { current?: (() => void) | undefined } = {}

export const SlowTool = Tool.define("slow", {
  description: "Waits",
  parameters: z.object({}),
  mutates: false,
  execute: async (_args, ctx) => {
    ctx.metadata({ title: "waiting" })
    slowToolStarted.current?.()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000)
      ctx.abort.addEventListener("abort", () => {
        clearTimeout(timer)
        resolve()
      })
    })
    return { title: "slow", output: "done" }
  }
})

/** Asks for the `edit` permission, then "writes" (mutating). */
export const AskTool = Tool.define("guarded", {
  description: "Asks permission",
  parameters: z.object({ path: z.string() }),
  mutates: true,
  execute: async ({ path }, ctx) => {
    await ctx.ask({ permission: "edit", patterns: [path] })
    return { title: path, output: `wrote ${path}` }
  }
})

/** The result of one turn: what it returned, every event it published, and the session's stored messages. */
export interface TurnResult {
  readonly result: MessageWithParts
  readonly events: ReadonlyArray<LatheEvent>
  readonly messages: ReadonlyArray<MessageWithParts>
  readonly sessionID: string
}

/** Creates a session and runs one prompt in it, collecting the bus events until the session is idle. */
export const runTurn = (text: string, options: Omit<PromptInput, "sessionID" | "parts"> = {}) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const store = yield* SessionStore
    const session = yield* createSession({ title: "test" })
    const collected = yield* (yield* bus.subscribe).pipe(
      Stream.takeUntil((event) => event.type === "session.idle"),
      Stream.runCollect,
      Effect.forkChild({ startImmediately: true })
    )
    const prompt = yield* SessionPrompt
    const result = yield* prompt.prompt({
      sessionID: session.id,
      parts: [{ type: "text", text }],
      title: false,
      ...options
    })
    const events = yield* Fiber.join(collected)
    const messages = yield* store.messages(session.id)
    return { result, events, messages, sessionID: session.id } satisfies TurnResult
  }).pipe(Effect.scoped)

/** Every part of the turn's messages, in order. */
export const allParts = (turn: TurnResult): ReadonlyArray<Part> => turn.messages.flatMap((m) => m.parts)

/** Every tool part of the turn. */
export const toolParts = (turn: TurnResult): ReadonlyArray<ToolPart> =>
  allParts(turn).filter((part): part is ToolPart => part.type === "tool")
