import { Context, Effect, Layer } from "effect"
import { SystemPrompt } from "./system-prompt.js"

/** The NestedRules service's shape. */
export interface NestedRulesService {
  /**
   * The rules (nested `AGENTS.md`) that `files` a call touched bring in and that the session has not been given yet,
   * each labelled with its path; empty when there is nothing new (see `SystemPrompt.nested`).
   */
  readonly forFiles: (sessionID: string, files: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}

/**
 * The rules a tool call's files bring in, for the `ToolRunner` to add after the call as a synthetic text part. A
 * service of its own so the runner reaches them by its layer, not by a callback threaded down through the step.
 */
export class NestedRules extends Context.Service<NestedRules, NestedRulesService>()("@lathe/core/NestedRules") {
  /** The session's `SystemPrompt` hands them out: it knows which rules files each session already has. */
  static readonly layer = Layer.effect(
    NestedRules,
    Effect.gen(function* () {
      const system = yield* SystemPrompt
      return NestedRules.of({ forFiles: system.nested })
    })
  )
  /** No nested rules, for a runner used without a system prompt. */
  static readonly layerNone = Layer.succeed(NestedRules, NestedRules.of({ forFiles: () => Effect.succeed([]) }))
}
