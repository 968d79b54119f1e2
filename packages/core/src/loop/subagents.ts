import type { Ruleset, SubagentResult } from "@lathe/plugin"
import { Context, Effect, Layer, Schema, Semaphore } from "effect"

/** Work handed to a subagent: it runs in a child session of `parentSessionID`. */
export interface SubagentRequest {
  readonly parentSessionID: string
  /** The tool call (in the parent session) that asked for the subagent, so UIs can nest the child under it. */
  readonly callID?: string
  readonly agent: string
  /** A few words for the child session's title. */
  readonly description: string
  readonly prompt: string
  /** Continue this earlier child session instead of starting one. */
  readonly sessionID?: string
  readonly abort: AbortSignal
  /** The callers' rulesets: the child's asks must pass each of them too (see `PermissionAsk.constraints`). */
  readonly constraints: ReadonlyArray<Ruleset>
  /**
   * The tool ids offered to the caller in the step that asked for the subagent (already within its own callers'):
   * the child is offered none outside them, so a tool switched off or denied outright anywhere up the chain stays off.
   */
  readonly callerTools: ReadonlyArray<string>
  /** Called with the child session's id once it exists (new or continued), before the subagent's turn runs. */
  readonly onStart?: (childSessionID: string) => Effect.Effect<void>
}

export type { SubagentResult } from "@lathe/plugin"
export type { SubagentCall } from "@lathe/plugin/host"

/** The subagent could not run or failed; `message` is for the model. */
export class SubagentFailed extends Schema.TaggedError<SubagentFailed>()("SubagentFailed", {
  agent: Schema.String,
  message: Schema.String
}) {}

/** How many subagents may run at once across a process (several `task` calls in one step run in parallel). */
export const SUBAGENT_CONCURRENCY = 4

/**
 * Runs subagents in child sessions. The loop (`SessionPrompt.layer`) registers the runner when it is built, which
 * breaks the cycle between the loop and the tools it runs; `run` bounds concurrency to {@link SUBAGENT_CONCURRENCY}.
 */
export class Subagents extends Context.Service<
  Subagents,
  {
    readonly run: (request: SubagentRequest) => Effect.Effect<SubagentResult, SubagentFailed>
    /** Called once by the loop with the function that runs a child session. */
    readonly register: (
      runner: (request: SubagentRequest) => Effect.Effect<SubagentResult, SubagentFailed>
    ) => Effect.Effect<void>
  }
>()("@lathe/core/Subagents") {
  static readonly layer = Layer.effect(
    Subagents,
    Effect.gen(function* () {
      const permits = yield* Semaphore.make(SUBAGENT_CONCURRENCY)
      let runner: ((request: SubagentRequest) => Effect.Effect<SubagentResult, SubagentFailed>) | undefined
      return Subagents.of({
        run: (request) =>
          runner
            ? permits.withPermit(runner(request))
            : Effect.fail(
                new SubagentFailed({
                  agent: request.agent,
                  message: "Subagents are not available in this host (no agent loop registered)."
                })
              ),
        register: (fn) =>
          Effect.sync(() => {
            runner = fn
          })
      })
    })
  )
}
