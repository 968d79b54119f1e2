import { Clock, Effect } from "effect"
import type { Bus } from "../contracts/bus.js"
import { visibleHistory } from "../provider/model-messages.js"
import type { MessageWithParts } from "../schema/message.js"
import type { Part, ToolPart } from "../schema/part.js"
import type { SessionStore } from "../store/session-store.js"

/** Tool output of the newest calls that is never pruned, in estimated tokens. */
export const PRUNE_PROTECT_TOKENS = 40_000
/** Tools whose output is never pruned (the model needs them to keep its bearings). */
export const PRUNE_KEEP_TOOLS: ReadonlyArray<string> = ["skill", "todoread", "todowrite"]

/** A rough token count for text: four characters a token. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * Marks old tool outputs as compacted (the model then sees a stub instead), newest first keeping the most recent
 * {@link PRUNE_PROTECT_TOKENS} of output and everything of the turn in progress (messages from `keepFrom` on).
 * Returns the estimated tokens freed. Stored parts keep their output, so nothing is lost for the person.
 */
export const pruneToolOutputs = Effect.fnUntraced(function* (
  store: SessionStore["Service"],
  bus: Bus["Service"],
  messages: ReadonlyArray<MessageWithParts>,
  keepFrom: string | undefined
) {
  const candidates: Array<ToolPart> = []
  for (const message of visibleHistory(messages)) {
    if (keepFrom !== undefined && message.info.id >= keepFrom) continue
    for (const part of message.parts)
      if (part.type === "tool" && part.state.status === "completed" && part.state.time.compacted === undefined)
        candidates.push(part)
  }
  let protectedTokens = 0
  let freed = 0
  const now = yield* Clock.currentTimeMillis
  for (const part of candidates.reverse()) {
    if (part.state.status !== "completed" || PRUNE_KEEP_TOOLS.includes(part.tool)) continue
    const tokens = estimateTokens(part.state.output)
    if (protectedTokens + tokens <= PRUNE_PROTECT_TOKENS) {
      protectedTokens += tokens
      continue
    }
    protectedTokens = PRUNE_PROTECT_TOKENS // everything older than the protected window goes
    const pruned: Part = { ...part, state: { ...part.state, time: { ...part.state.time, compacted: now } } }
    yield* store.putPart(pruned)
    yield* bus.publish({ type: "part.updated", part: pruned })
    freed += tokens
  }
  return freed
})
