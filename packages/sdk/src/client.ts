import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { LatheApi } from "./api.js"
import type { LatheApiError } from "./errors.js"
import { type EventsOptions, subscribeEvents } from "./events.js"

/** Where a Lathe server is and how to authenticate to it. */
export interface LatheClientConfig {
  /** The server's address, e.g. `http://127.0.0.1:4096` (what `lathe serve` prints). */
  readonly baseUrl: string
  /** The bearer token the server was started with (`lathe serve --token`), if any. */
  readonly token?: string | undefined
}

/**
 * The Effect client: one method per endpoint of {@link LatheApi}, grouped as the API is
 * (`client.sessions.create({ payload: {} })`, `client.permissions.reply({ params, payload })`). Errors are typed: each
 * method fails with the API's error bodies it declares (`{ error: { code, message } }`), an `HttpClientError` when
 * the server cannot be reached, or a `SchemaError` when an answer does not match the API.
 *
 * `client.events.subscribe(...)` succeeds with a `Stream` (yield the effect first, then run the stream); it does not
 * reconnect. For a stream that resumes by itself after a dropped connection, use {@link latheEventStream}.
 */
export type LatheEffectClient = HttpApiClient.ForApi<typeof LatheApi>

/** Adds the bearer token, when there is one, to every request of `client`. */
export const withToken =
  (token: string | undefined) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
    token === undefined || token === "" ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token))

/**
 * Builds the Effect client of a Lathe server. It needs an `HttpClient`: provide `FetchHttpClient.layer` (any
 * runtime with `fetch`: Node, Deno, Bun, browsers) or another implementation.
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   const lathe = yield* makeLatheClient({ baseUrl: "http://127.0.0.1:4096" })
 *   const session = yield* lathe.sessions.create({ payload: {} })
 *   yield* lathe.sessions.prompt({ params: { id: session.id }, payload: { text: "fix the failing test" } })
 * })
 * Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
 * ```
 */
export const makeLatheClient = (
  config: LatheClientConfig
): Effect.Effect<LatheEffectClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(LatheApi, { baseUrl: config.baseUrl, transformClient: withToken(config.token) })

/**
 * The server's events as an Effect `Stream`, decoded with the event catalogue, resuming by itself with
 * `Last-Event-ID` after a dropped connection (never yielding an event twice). It uses `fetch` directly (the
 * `FetchHttpClient.Fetch` in context, else the global one), so it needs no `HttpClient`. It fails with
 * {@link LatheApiError} when the server refuses the subscription (a wrong token) and ends when the scope closes.
 */
export const latheEventStream = (
  config: LatheClientConfig,
  options: Omit<EventsOptions, "signal"> = {}
): Stream.Stream<LatheEvent, LatheApiError> =>
  Stream.unwrap(
    Effect.map(Effect.service(FetchHttpClient.Fetch), (fetch) =>
      Stream.fromAsyncIterable(
        {
          [Symbol.asyncIterator]: () => {
            const controller = new AbortController()
            const iterator = subscribeEvents({ ...config, fetch }, { ...options, signal: controller.signal })[
              Symbol.asyncIterator
            ]()
            return {
              next: () => iterator.next(),
              return: async () => {
                controller.abort()
                return (await iterator.return?.()) ?? { done: true, value: undefined }
              }
            }
          }
        },
        (error) => error as LatheApiError
      )
    )
  )
