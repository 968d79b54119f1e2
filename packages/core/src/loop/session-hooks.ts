import type { AgentInfo } from "@lathe/plugin"
import type { AssistantMessage, Part, Session, UserMessage } from "@lathe/plugin/schema"
import { Effect } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import type { Bus } from "../contracts/bus.js"
import type { Plugins } from "../plugin-host/plugins.js"
import { ascendingId } from "../schema/id.js"
import type { StoreError } from "../store/session-store.js"
import type { SessionWriter } from "../store/session-writer.js"

/** How often one turn goes on because a `turn.stop` hook asked it to. */
export const MAX_TURN_CONTINUES = 3

/** What the turn hooks need from the loop. */
export interface TurnHookServices {
  readonly plugins: Plugins["Service"]
  readonly writer: SessionWriter["Service"]
  readonly bus: Bus["Service"]
  /** Stores a prompt as a user message (the loop's own). */
  readonly storeUser: (
    sessionID: string,
    agent: AgentInfo,
    model: ModelInfo,
    parts: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  ) => Effect.Effect<UserMessage, StoreError>
}

const turnInput = (session: Session, agent: AgentInfo) => ({
  sessionID: session.id,
  agent: agent.name,
  ...(session.parentID ? { parentID: session.parentID } : {})
})

/**
 * The plugin hooks around a turn: `session.start` and `prompt.submit` before the model sees a prompt, `turn.stop`
 * when the model ends the turn. Never fails but for the store: a throwing hook is reported and skipped by `Plugins`.
 */
export const makeTurnHooks = ({ plugins, writer, bus, storeUser }: TurnHookServices) => {
  /** Sessions that had a turn in this process (`session.start` runs on each one's first). */
  const started = new Set<string>()

  /**
   * Runs `session.start` (a session's first turn here) and `prompt.submit` on a stored prompt: the context they give is
   * added to it as synthetic text; a blocked prompt is removed and the person told why. True when it was blocked.
   */
  const beforePrompt = Effect.fnUntraced(function* (
    session: Session,
    agent: AgentInfo,
    messageID: string,
    text: string,
    fresh: boolean
  ) {
    const context: Array<string> = []
    if (!started.has(session.id)) {
      started.add(session.id)
      const source = fresh ? ("startup" as const) : ("resume" as const)
      if (plugins.has("session.start")) {
        const output = yield* plugins.trigger(
          "session.start",
          { ...turnInput(session, agent), source },
          { context: [] }
        )
        context.push(...output.context)
      }
    }
    if (plugins.has("prompt.submit")) {
      const output = yield* plugins.trigger(
        "prompt.submit",
        { ...turnInput(session, agent), text, agentTools: agent.tools, agentPermission: agent.permission },
        { context: [] }
      )
      if (output.block !== undefined) {
        yield* writer.removeMessage(session.id, messageID)
        yield* bus.publish({ type: "notice", level: "warn", message: `A plugin withdrew the prompt: ${output.block}` })
        return true
      }
      context.push(...output.context)
    }
    for (const text of context.filter((entry) => entry.trim() !== "")) {
      const part: Part = {
        id: ascendingId("part"),
        sessionID: session.id,
        messageID,
        type: "text",
        text,
        synthetic: true
      }
      yield* writer.putPart(part)
    }
    return false
  })

  /** Asks `turn.stop` whether a turn the model ended goes on; when it does, its instruction is stored as a prompt. */
  const goOn = Effect.fnUntraced(function* (
    session: Session,
    agent: AgentInfo,
    model: ModelInfo,
    message: AssistantMessage,
    continued: number
  ) {
    if (!plugins.has("turn.stop") || continued >= MAX_TURN_CONTINUES) return false
    if (message.error !== undefined || message.finish === "tool-calls") return false
    const output = yield* plugins.trigger("turn.stop", { ...turnInput(session, agent), continued }, {})
    const instruction = output.continue?.trim()
    if (!instruction) return false
    yield* storeUser(session.id, agent, model, [{ type: "text", text: instruction }])
    return true
  })

  return { beforePrompt, goOn }
}
