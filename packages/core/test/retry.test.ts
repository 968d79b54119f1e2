import { assert, describe, it } from "@effect/vitest"
import type { ProviderErrorReason } from "@lathe/plugin/schema"
import { Duration, Effect, Layer, Option } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { ProviderError } from "../src/llm/provider-error.js"
import { defaultRetryPolicy, Retry, retryDelay, UNREACHABLE_RETRIES } from "../src/loop/retry.js"

const error = (reason: ProviderErrorReason) =>
  new ProviderError({ providerID: "p", modelID: "m", reason, message: "failed" })
const ms = (delay: Option.Option<Duration.Duration>) => Option.map(delay, Duration.toMillis)
const delays = (reason: ProviderErrorReason, attempts: number) =>
  Array.from({ length: attempts }, (_, i) => ms(retryDelay(error(reason), i + 1)))

const viaLayer = (config: ConfigTestInput, reason: ProviderErrorReason, attempt: number) =>
  Effect.gen(function* () {
    return ms(yield* (yield* Retry).delay(error(reason), attempt))
  }).pipe(Effect.provide(Retry.layer.pipe(Layer.provide(Config.layerTest(config)))))

describe("retryDelay", () => {
  it("backs off 2 s × 2^(n-1), capped at 30 s, for every retryable reason without a hint", () => {
    const expected = [2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000].map(Option.some)
    for (const reason of [
      { _tag: "RateLimited" },
      { _tag: "Overloaded" },
      { _tag: "ServerError", status: 502 },
      { _tag: "StreamCut" }
    ] as const)
      assert.deepStrictEqual(delays(reason, 8), expected, reason._tag)
  })

  it("never retries auth, invalid requests, context overflow, an account without quota or aborts", () => {
    for (const reason of [
      { _tag: "Auth" },
      { _tag: "QuotaExceeded" },
      { _tag: "InvalidRequest", status: 400 },
      { _tag: "ContextOverflow" },
      { _tag: "Aborted" }
    ] as const)
      assert.deepStrictEqual(ms(retryDelay(error(reason), 1)), Option.none(), reason._tag)
  })

  it("honours the server's hint, beyond the 30 s cap, up to max delay", () => {
    const hinted = (retryAfterMs: number, attempt = 1) =>
      ms(retryDelay(error({ _tag: "RateLimited", retryAfterMs }), attempt))
    assert.deepStrictEqual(hinted(2_000, 5), Option.some(2_000), "a hint replaces the backoff")
    assert.deepStrictEqual(hinted(90_000), Option.some(90_000), "beyond the 30 s cap")
    assert.deepStrictEqual(hinted(3_600_000), Option.some(300_000), "bounded by 5 minutes")
    assert.deepStrictEqual(ms(retryDelay(error({ _tag: "Overloaded", retryAfterMs: 0 }), 1)), Option.some(0))
    const server = error({ _tag: "ServerError", status: 503, retryAfterMs: 45_000 })
    assert.deepStrictEqual(ms(retryDelay(server, 1)), Option.some(45_000))
  })

  it("stops after max retries (default 8)", () => {
    assert.strictEqual(defaultRetryPolicy.maxRetries, 8)
    const cut = error({ _tag: "StreamCut" })
    assert.isTrue(Option.isSome(retryDelay(cut, 8)))
    assert.isTrue(Option.isNone(retryDelay(cut, 9)))
    assert.isTrue(Option.isNone(retryDelay(cut, 2, { maxRetries: 1, maxDelayMs: 300_000 })))
  })
})

describe("retryDelay when no connection could be made", () => {
  const unreachable = error({ _tag: "StreamCut", unreachable: true })

  it("retries twice (2 s, 4 s), not for minutes: a server that is not running or a wrong URL", () => {
    assert.strictEqual(UNREACHABLE_RETRIES, 2)
    assert.deepStrictEqual(
      [1, 2, 3].map((attempt) => ms(retryDelay(unreachable, attempt))),
      [Option.some(2_000), Option.some(4_000), Option.none()]
    )
    // A stream cut after the connection was made keeps the full eight.
    assert.isTrue(Option.isSome(retryDelay(error({ _tag: "StreamCut" }), 8)))
  })

  it("never more than max retries allows", () => {
    const policy = { maxRetries: 1, maxDelayMs: 300_000 }
    assert.isTrue(Option.isSome(retryDelay(unreachable, 1, policy)))
    assert.isTrue(Option.isNone(retryDelay(unreachable, 2, policy)))
    assert.isTrue(Option.isNone(retryDelay(unreachable, 1, { ...policy, maxRetries: 0 })))
  })
})

describe("Retry.layer", () => {
  it.effect("reads retry.max_retries and retry.max_delay_ms from config", () =>
    Effect.gen(function* () {
      const config = { retry: { max_retries: 2, max_delay_ms: 10_000 } }
      assert.deepStrictEqual(yield* viaLayer(config, { _tag: "StreamCut" }, 2), Option.some(4_000))
      assert.deepStrictEqual(yield* viaLayer(config, { _tag: "StreamCut" }, 3), Option.none())
      assert.deepStrictEqual(
        yield* viaLayer(config, { _tag: "RateLimited", retryAfterMs: 60_000 }, 1),
        Option.some(10_000)
      )
      assert.deepStrictEqual(yield* viaLayer(config, { _tag: "StreamCut" }, 5), Option.none())
    })
  )

  it.effect("defaults to 8 retries and a 5-minute bound", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* viaLayer({}, { _tag: "Overloaded" }, 8), Option.some(30_000))
      assert.deepStrictEqual(yield* viaLayer({}, { _tag: "Overloaded" }, 9), Option.none())
      assert.deepStrictEqual(
        yield* viaLayer({}, { _tag: "RateLimited", retryAfterMs: 400_000 }, 1),
        Option.some(300_000)
      )
    })
  )
})
