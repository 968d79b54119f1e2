import { Context, type Effect } from "effect"
import type { ModelNotFound, ProviderError, ProviderNotConfigured } from "./llm.js"
import type { MessageWithParts } from "./message.js"
import type { DoomLoopDetected } from "./processor.js"
import type { SessionNotFound, StoreError } from "./session-store.js"

/** A piece of a prompt as a person gives it. */
export type PromptPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "file"; readonly url: string; readonly mime: string; readonly filename?: string }

/** One prompt to a session. */
export interface PromptInput {
  readonly sessionID: string
  readonly parts: ReadonlyArray<PromptPart>
  /** The agent to answer (default: the session's, else the configured default, else `build`). */
  readonly agent?: string
  /** `provider/model` for this turn (default: the agent's, else the configured model). */
  readonly model?: string
  /** Aborting ends the turn cleanly and records the aborted state. */
  readonly abort?: AbortSignal
}

/** Every way a turn can fail. */
export type PromptError =
  | SessionNotFound
  | StoreError
  | ProviderError
  | ProviderNotConfigured
  | ModelNotFound
  | DoomLoopDetected

/**
 * The outer loop: stores the prompt, then repeats (assemble the system prompt and tools for the agent, call
 * the model, let the Processor consume the step) until the model stops calling tools, a permission is
 * rejected, an error is not retryable, the turn is aborted, or the agent's step limit is reached;
 * compacts history when the context fills up.
 */
export class SessionPrompt extends Context.Service<
  SessionPrompt,
  {
    /** Runs one turn; returns the last assistant message with its parts. */
    readonly prompt: (input: PromptInput) => Effect.Effect<MessageWithParts, PromptError>
    /** Aborts the session's running turn, if any. */
    readonly cancel: (sessionID: string) => Effect.Effect<void>
  }
>()("@lathe/core/SessionPrompt") {}
