import type { AssistantMessage, MessageError } from "@lathe/plugin/schema"
import { Clock, Effect } from "effect"
import type { Bus } from "../contracts/bus.js"
import type { SessionWriter } from "../store/session-writer.js"

/** Model calls one turn may make when neither config `max_steps` nor the agent sets a cap. */
export const DEFAULT_MAX_STEPS = 200

/**
 * The cap on steps for one turn: the agent's `max_steps`, else config `max_steps`, else {@link DEFAULT_MAX_STEPS};
 * `undefined` when the one that applies is 0 (no cap).
 */
export const stepCap = (agentMax: number | undefined, configMax: number | undefined): number | undefined => {
  const cap = agentMax ?? configMax ?? DEFAULT_MAX_STEPS
  return cap > 0 ? cap : undefined
}

/** The `StepLimit` error of a turn that ran `steps` steps, the cap: how many ran and how to go on. */
export const stepLimitError = (steps: number): MessageError => ({
  name: "StepLimit",
  steps,
  message:
    `Stopped after ${steps} step${steps === 1 ? "" : "s"}, the most one turn may take (max_steps). The work so far is ` +
    `kept; to go on, run lathe run -c "continue" (or send "continue" in the session). To allow longer turns, raise ` +
    "max_steps in lathe.json (0 = no limit)."
})

/**
 * Ends a turn at its step cap: records `StepLimit` on its last message (unless that message already failed) and
 * publishes it, with `session.error` so every front end says it. Returns the message as stored.
 */
export const recordStepLimit = (
  writer: SessionWriter["Service"],
  bus: Bus["Service"],
  message: AssistantMessage,
  steps: number
) =>
  Effect.gen(function* () {
    if (message.error) return message
    const error = stepLimitError(steps)
    const ended: AssistantMessage = {
      ...message,
      error,
      time: { ...message.time, completed: message.time.completed ?? (yield* Clock.currentTimeMillis) }
    }
    yield* writer.putMessage(ended)
    yield* bus.publish({ type: "session.error", sessionID: message.sessionID, error })
    return ended
  })
