import type { SubtaskPart, ToolPart } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { ascendingId } from "../schema/id.js"
import type { SessionWriter } from "../store/session-writer.js"

/** What a task call asked of its subagent. */
export interface SubtaskRequest {
  readonly agent: string
  readonly description: string
  readonly prompt: string
  readonly sessionID?: string
}

/**
 * Runs a subagent with its `subtask` part in the caller's message beside the call's tool part: `running` (with the
 * child session's id as soon as it exists, so a UI can open it while it works), then `completed` or `error`. The
 * part's writes never fail the call: it is a record of the work, not the work.
 */
export const withSubtaskPart = <A extends { readonly sessionID: string }, E, R>(
  writer: SessionWriter["Service"],
  call: ToolPart,
  request: SubtaskRequest,
  run: (onStart: (childSessionID: string) => Effect.Effect<void>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let current: SubtaskPart = {
      id: ascendingId("part"),
      sessionID: call.sessionID,
      messageID: call.messageID,
      type: "subtask",
      agent: request.agent,
      description: request.description,
      prompt: request.prompt,
      ...(request.sessionID ? { childSessionID: request.sessionID } : {}),
      callID: call.callID,
      status: "running"
    }
    const put = (next: SubtaskPart) =>
      Effect.suspend(() => {
        current = next
        return writer.putPart(next).pipe(Effect.catch((error) => Effect.logWarning("subtask part not stored", error)))
      })
    return put(current).pipe(
      Effect.andThen(run((childSessionID) => put({ ...current, childSessionID }))),
      Effect.onExit((exit) =>
        exit._tag === "Success"
          ? put({ ...current, childSessionID: exit.value.sessionID, status: "completed" })
          : put({ ...current, status: "error" })
      )
    )
  })
