import type { Reasoning } from "../provider/reasoning.js"

/** What Lathe knows about a model: limits, prices and capabilities. */
export interface ModelInfo {
  readonly providerID: string
  readonly modelID: string
  readonly name: string
  readonly limit: {
    /** Context window in tokens. */
    readonly context: number
    /** Most output tokens per step. */
    readonly output: number
  }
  /** USD per million tokens. */
  readonly cost: {
    readonly input: number
    readonly output: number
    readonly cacheRead: number
    readonly cacheWrite: number
  }
  readonly capabilities: {
    readonly reasoning: boolean
    readonly toolCall: boolean
    readonly temperature: boolean
    /** Takes images as input: tool results that carry images and image attachments are sent as images. */
    readonly image: boolean
    /** Takes PDF documents as input (the catalogue's input kinds); absent: not known to, and taken as no. */
    readonly pdf?: boolean
  }
  /**
   * How hard the model reasons on this turn (the `--variant`, else the agent's `reasoning`, else the model entry's);
   * absent: the provider's default. Sent only when `capabilities.reasoning` is true.
   */
  readonly reasoning?: Reasoning
}

/** A catalogue entry: a model's limits, USD prices per million tokens and capabilities. */
export type CatalogEntry = Omit<ModelInfo, "providerID" | "modelID">
