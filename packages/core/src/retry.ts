import { Context, Duration, Effect, Layer, Option } from "effect"
import type { ProviderError } from "./llm.js"

/**
 * Which provider errors are worth another attempt, and how long to wait first. Rate limits, overload, 5xx
 * and dropped streams retry; auth, invalid requests and context overflow do not.
 */
export class Retry extends Context.Service<
  Retry,
  {
    /** The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based); none = give up. */
    readonly delay: (error: ProviderError, attempt: number) => Effect.Effect<Option.Option<Duration.Duration>>
  }
>()("@lathe/core/Retry") {
  /** Retries what is retryable with no wait, at most `maxRetries` times: for tests. */
  static readonly layerTest = (maxRetries = 3) =>
    Layer.succeed(
      Retry,
      Retry.of({
        delay: (error, attempt) =>
          Effect.succeed(attempt <= maxRetries && isRetryable(error) ? Option.some(Duration.zero) : Option.none())
      })
    )
}

/** Whether an error is worth another attempt at all, whatever the wait. */
export const isRetryable = (error: ProviderError): boolean => {
  switch (error.reason._tag) {
    case "RateLimited":
    case "Overloaded":
    case "ServerError":
    case "StreamCut":
      return true
    default:
      return false
  }
}
