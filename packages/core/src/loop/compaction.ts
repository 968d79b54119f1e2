import type { AgentInfo } from "@lathe/plugin"
import type { AssistantMessage, MessageWithParts, UserMessage } from "@lathe/plugin/schema"
import { emptyTokens, type Part, type ToolPart } from "@lathe/plugin/schema"
import { Clock, Context, Effect, Layer } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { Bus } from "../contracts/bus.js"
import { visibleHistory } from "../llm/model-messages.js"
import { contextUsed, isOverflow } from "../llm/usage.js"
import { Plugins } from "../plugin-host/plugins.js"
import { ascendingId } from "../schema/id.js"
import { SessionStore, type StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import type { BudgetLedger } from "./budget.js"
import { DoomLoopGuard } from "./doom-loop.js"
import { compactionPrompt } from "./prompts.js"
import { Step, type StepError } from "./step.js"
import { SystemPrompt } from "./system-prompt.js"

/** Tool output of the newest calls that is never pruned, in estimated tokens. */
export const PRUNE_PROTECT_TOKENS = 40_000

/** A rough token count for text: four characters a token. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** A compaction to run. */
export interface CompactInput {
  readonly sessionID: string
  /** The turn in progress: messages from here on stay verbatim after the summary. */
  readonly keepFrom: string
  readonly model: ModelInfo
  readonly agents: Map<string, AgentInfo>
  readonly abort: AbortSignal
  /** Started by the loop (the context filled up), not asked for by the person. */
  readonly auto: boolean
  /** The text of the turn's prompt, repeated after the summary when the whole history (this turn too) is summarised. */
  readonly request?: string
  /** The turn's cost budget: the summary's model call draws on it like the turn's own. */
  readonly budget?: BudgetLedger
}

/**
 * The completed tool calls whose output goes, newest first keeping the most recent {@link PRUNE_PROTECT_TOKENS} of
 * output, everything from `keepFrom` on, and the output of the tools in `kept`; with the estimated tokens freed.
 */
export const prunableOutputs = (
  messages: ReadonlyArray<MessageWithParts>,
  keepFrom: string | undefined,
  kept: ReadonlySet<string>
): { readonly parts: ReadonlyArray<ToolPart>; readonly freed: number } => {
  const candidates: Array<ToolPart> = []
  for (const message of visibleHistory(messages)) {
    if (keepFrom !== undefined && message.info.id >= keepFrom) continue
    for (const part of message.parts)
      if (part.type === "tool" && part.state.status === "completed" && part.state.time.compacted === undefined)
        candidates.push(part)
  }
  let protectedTokens = 0
  let freed = 0
  const parts: Array<ToolPart> = []
  for (const part of candidates.reverse()) {
    if (part.state.status !== "completed" || kept.has(part.tool)) continue
    const tokens = estimateTokens(part.state.output)
    if (protectedTokens + tokens <= PRUNE_PROTECT_TOKENS) {
      protectedTokens += tokens
      continue
    }
    protectedTokens = PRUNE_PROTECT_TOKENS // everything older than the protected window goes
    parts.push(part)
    freed += tokens
  }
  return { parts, freed }
}

/** Whether pruning alone brought the last step's context back under the model's limit. */
const prunedEnough = (messages: ReadonlyArray<MessageWithParts>, freed: number, model: ModelInfo): boolean => {
  const last = messages.findLast((m) => m.info.role === "assistant" && !m.info.summary)?.info
  if (last?.role !== "assistant" || freed <= 0) return false
  const used = contextUsed(last.tokens) - freed
  return !isOverflow({ ...emptyTokens(), input: Math.max(0, used) }, model)
}

/** The text that asks the model to go on after a summary of the whole history. */
const continueText = (request: string | undefined): string =>
  "Continue the task from the summary above. If it is already done, say so briefly." +
  (request ? `\nThe request being worked on was:\n${request}` : "")

/**
 * Keeps a session's history within the model's context: `prune` stubs old tool outputs (the stored parts keep them),
 * `compact` prunes and, unless that was enough for an automatic compaction, has the hidden `compaction` agent
 * summarise the history before the turn in progress (the whole history when there is nothing older), so the model
 * then sees the summary instead of the older messages.
 */
export class Compaction extends Context.Service<
  Compaction,
  {
    /**
     * Marks old tool outputs of `messages` as compacted (see {@link prunableOutputs}; a tool without the `prunable`
     * trait keeps its output) and returns the estimated tokens freed; nothing when config `compaction.prune` is false.
     */
    readonly prune: (
      messages: ReadonlyArray<MessageWithParts>,
      keepFrom: string | undefined
    ) => Effect.Effect<number, StoreError>
    /** Prunes, then summarises with the `compaction` agent when it exists and pruning was not enough. */
    readonly compact: (input: CompactInput) => Effect.Effect<void, StepError>
  }
>()("@lathe/core/Compaction") {
  /** The real compaction: the summary is one `Step` of the `compaction` agent. */
  static readonly layer = Layer.effect(
    Compaction,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const writer = yield* SessionWriter
      const bus = yield* Bus
      const plugins = yield* Plugins
      const system = yield* SystemPrompt
      const paths = yield* Paths
      const step = yield* Step
      const config = yield* Config

      const prune = Effect.fn("Compaction.prune")(function* (
        messages: ReadonlyArray<MessageWithParts>,
        keepFrom: string | undefined
      ) {
        // `compaction.prune: false`: the person wants every output the model saw to stay; a compaction then summarises.
        if (config.info.compaction?.prune === false) return 0
        const kept = new Set(plugins.tools.flatMap((tool) => (tool.prunable ? [] : [tool.id])))
        const { parts, freed } = prunableOutputs(messages, keepFrom, kept)
        const now = yield* Clock.currentTimeMillis
        for (const part of parts) {
          if (part.state.status !== "completed") continue
          const pruned: Part = { ...part, state: { ...part.state, time: { ...part.state.time, compacted: now } } }
          // A pruned output is no news of its call: `part.updated` only.
          yield* writer.putPart(pruned, { toolEvent: false })
        }
        return freed
      })

      /** Stores the user message that marks the compaction, with its `compaction` part. */
      const mark = Effect.fnUntraced(function* (input: CompactInput, keepFrom: string | undefined) {
        const user: UserMessage = {
          id: ascendingId("message"),
          sessionID: input.sessionID,
          role: "user",
          time: { created: yield* Clock.currentTimeMillis },
          agent: "compaction",
          model: { providerID: input.model.providerID, modelID: input.model.modelID }
        }
        yield* writer.putMessage(user)
        yield* writer.putPart({
          id: ascendingId("part"),
          sessionID: input.sessionID,
          messageID: user.id,
          type: "compaction",
          auto: input.auto,
          ...(keepFrom ? { keepFrom } : {})
        })
        return user
      })

      /** Runs the summariser's step: the history up to the turn in progress (which stays verbatim), then the request. */
      const summarise = Effect.fnUntraced(function* (
        input: CompactInput,
        agent: AgentInfo,
        user: UserMessage,
        keepFrom: string | undefined
      ) {
        const { sessionID } = input
        const hook = yield* plugins.trigger("session.compacting", { sessionID }, { context: [] })
        const rules = yield* system.rules(sessionID)
        const summary: AssistantMessage = {
          id: ascendingId("message"),
          sessionID,
          role: "assistant",
          parentID: user.id,
          agent: "compaction",
          model: { providerID: input.model.providerID, modelID: input.model.modelID },
          path: { cwd: paths.directory, root: paths.root },
          time: { created: yield* Clock.currentTimeMillis },
          tokens: emptyTokens(),
          cost: 0,
          summary: true
        }
        yield* step.run({
          assistant: summary,
          agent,
          model: input.model,
          tools: {},
          abort: input.abort,
          ruleset: agent.permission,
          step: 1,
          guard: new DoomLoopGuard({ threshold: 0, ignoredTools: [] }),
          lastStep: false,
          system: [hook.prompt ?? compactionPrompt, ...rules, ...hook.context],
          history: (all) => all.filter((m) => keepFrom === undefined || m.info.id < keepFrom || m.info.id >= user.id),
          ...(input.budget ? { budget: input.budget } : {})
        })
        return summary
      })

      /** Everything was summarised: a synthetic prompt asks the model to go on from the summary. */
      const goOn = Effect.fnUntraced(function* (input: CompactInput, user: UserMessage) {
        const next: UserMessage = {
          ...user,
          id: ascendingId("message"),
          agent: "build",
          time: { created: yield* Clock.currentTimeMillis }
        }
        yield* writer.putMessage(next)
        yield* writer.putPart({
          id: ascendingId("part"),
          sessionID: input.sessionID,
          messageID: next.id,
          type: "text",
          synthetic: true,
          text: continueText(input.request)
        })
      })

      const compact = Effect.fn("Compaction.compact")(function* (input: CompactInput) {
        const { sessionID } = input
        const agent = input.agents.get("compaction")
        const messages = yield* store.messages(sessionID)
        const hasOlder = visibleHistory(messages).some((m) => m.info.id < input.keepFrom)
        const keepFrom = hasOlder ? input.keepFrom : undefined
        const freed = yield* prune(messages, keepFrom)
        // Automatic compaction: pruning alone is enough when it brings the last step's context back under the limit.
        if (input.auto && prunedEnough(messages, freed, input.model)) return
        if (!agent) return
        const user = yield* mark(input, keepFrom)
        const summary = yield* summarise(input, agent, user, keepFrom)
        if (!keepFrom) yield* goOn(input, user)
        yield* bus.publish({ type: "session.compacted", sessionID, messageID: summary.id })
      })

      return Compaction.of({ prune, compact })
    })
  )
}
