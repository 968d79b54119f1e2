import { Context, Duration, Effect, Layer, Option } from "effect"
import { Config } from "../config/config.js"
import type { ProviderError } from "../llm/provider-error.js"

/** The policy's knobs; `Retry.layer` reads them from config `retry`. */
export interface RetryPolicy {
  /** Most retries after the first attempt (config `retry.max_retries`, default 8). */
  readonly maxRetries: number
  /** The longest wait Lathe accepts from a server's `retry-after` (config `retry.max_delay_ms`, default 5 min). */
  readonly maxDelayMs: number
}

/** Defaults: 8 retries; a server may ask for up to 5 minutes. */
export const defaultRetryPolicy: RetryPolicy = { maxRetries: 8, maxDelayMs: 5 * 60_000 }

/** First backoff step: 2 s, doubling per attempt. */
export const RETRY_BASE_MS = 2_000
/** Backoff cap when the server gives no hint: 30 s. */
export const RETRY_CAP_MS = 30_000

/**
 * Most retries when no connection could be made at all (refused, unknown host): 2 (after 2 s and 4 s), enough for a
 * local server that is still starting. With the full 8, a wrong base URL or a server that is not running kept a
 * person waiting two and a half minutes for the error.
 */
export const UNREACHABLE_RETRIES = 2

/** How many retries `error` gets under `policy`. */
const retriesFor = (error: ProviderError, policy: RetryPolicy): number =>
  error.reason._tag === "StreamCut" && error.reason.unreachable === true
    ? Math.min(UNREACHABLE_RETRIES, policy.maxRetries)
    : policy.maxRetries

/**
 * The wait before retrying after `error` on attempt `attempt` (1-based), or none to give up: none for a
 * non-retryable reason or once `attempt > maxRetries` (`UNREACHABLE_RETRIES` at most when no connection was made);
 * else the server's `retryAfterMs` (honoured beyond the 30 s cap, up to `maxDelayMs`), else 2 s × 2^(attempt-1)
 * capped at 30 s. Pure: the caller does the waiting.
 */
export const retryDelay = (
  error: ProviderError,
  attempt: number,
  policy: RetryPolicy = defaultRetryPolicy
): Option.Option<Duration.Duration> => {
  if (!isRetryable(error) || attempt > retriesFor(error, policy)) return Option.none()
  const hint = "retryAfterMs" in error.reason ? error.reason.retryAfterMs : undefined
  if (hint !== undefined) return Option.some(Duration.millis(Math.min(Math.max(0, hint), policy.maxDelayMs)))
  const backoff = RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1)
  return Option.some(Duration.millis(Math.min(backoff, RETRY_CAP_MS, policy.maxDelayMs)))
}

/**
 * Which provider errors are worth another attempt, and how long to wait first. Rate limits, overload, 5xx
 * and dropped streams retry; auth, invalid requests, context overflow and an account without quota do not.
 */
export class Retry extends Context.Service<
  Retry,
  {
    /** The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based); none = give up. */
    readonly delay: (error: ProviderError, attempt: number) => Effect.Effect<Option.Option<Duration.Duration>>
  }
>()("@lathe/core/Retry") {
  /** The production policy, with `retry.max_retries` and `retry.max_delay_ms` from `Config`. */
  static readonly layer: Layer.Layer<Retry, never, Config> = Layer.effect(
    Retry,
    Effect.gen(function* () {
      const { retry } = (yield* Config).info
      const policy: RetryPolicy = {
        maxRetries: retry?.max_retries ?? defaultRetryPolicy.maxRetries,
        maxDelayMs: retry?.max_delay_ms ?? defaultRetryPolicy.maxDelayMs
      }
      const delay = Effect.fn("Retry.delay")((error: ProviderError, attempt: number) =>
        Effect.succeed(retryDelay(error, attempt, policy))
      )
      return Retry.of({ delay })
    })
  )

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
