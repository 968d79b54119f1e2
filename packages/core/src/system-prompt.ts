import { Context, type Effect } from "effect"
import type { AgentInfo } from "./agent.js"
import type { ModelInfo } from "./llm.js"

/** What the system prompt is built for. */
export interface SystemPromptInput {
  readonly sessionID: string
  readonly agent: AgentInfo
  readonly model: ModelInfo
}

/**
 * Assembles the system prompt of a step: the provider prompt for the model's family, the environment (cwd,
 * git branch and state, platform, date), the rules files (`AGENTS.md`, `CLAUDE.md`, `CONTEXT.md` from cwd up
 * to the root, the global ones, config `instructions`), the agent's prompt, then the `system.transform` hook.
 */
export class SystemPrompt extends Context.Service<
  SystemPrompt,
  {
    /** The system messages, in order. */
    readonly build: (input: SystemPromptInput) => Effect.Effect<ReadonlyArray<string>>
    /** The rules files' text alone, for the compaction summariser (so a summary never forgets the rules). */
    readonly rules: (sessionID: string) => Effect.Effect<ReadonlyArray<string>>
  }
>()("@lathe/core/SystemPrompt") {}
