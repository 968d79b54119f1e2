import type { LatheEvent, LatheEventType } from "@lathe/plugin/schema"
import { Context, Effect, Fiber, Layer, PubSub, type Scope, Stream } from "effect"

/** A handle on a callback subscription; `close()` stops delivery. */
export interface Listener {
  readonly close: () => Promise<void>
}

/**
 * The in-process event bus. Every subscriber sees every event published after it subscribed, in publish
 * order. Publishing never waits for subscribers (the queue is unbounded), so a slow renderer cannot stall
 * the loop.
 */
export class Bus extends Context.Service<
  Bus,
  {
    /** Publishes one event to every current subscriber. */
    readonly publish: (event: LatheEvent) => Effect.Effect<void>
    /**
     * Subscribes now (before the effect completes, so nothing published afterwards is missed) and returns
     * the stream of events; the subscription ends with the scope.
     */
    readonly subscribe: Effect.Effect<Stream.Stream<LatheEvent>, never, Scope.Scope>
    /**
     * Calls `handler` for each event (optionally only those named in `types`) from a background fiber, in
     * order; for code outside Effect (renderers, plugin `event` hooks). A throwing handler is logged and
     * delivery goes on.
     */
    readonly listen: (
      handler: (event: LatheEvent) => void | Promise<void>,
      types?: ReadonlyArray<LatheEventType>
    ) => Effect.Effect<Listener, never, Scope.Scope>
  }
>()("@lathe/core/Bus") {
  /** The in-process PubSub bus. */
  static readonly layer = Layer.effect(
    Bus,
    Effect.gen(function* () {
      const pubsub = yield* PubSub.unbounded<LatheEvent>()
      yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))

      // Unbounded: a publish is always accepted at once, so the synchronous form is the whole of it.
      const publish = (event: LatheEvent) =>
        Effect.sync(() => {
          PubSub.publishUnsafe(pubsub, event)
        })

      const subscribe = Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription)

      const listen = Effect.fnUntraced(function* (
        handler: (event: LatheEvent) => void | Promise<void>,
        types?: ReadonlyArray<LatheEventType>
      ) {
        const wanted = types ? new Set<string>(types) : undefined
        const events = yield* subscribe
        const fiber = yield* events.pipe(
          Stream.filter((event) => wanted === undefined || wanted.has(event.type)),
          Stream.runForEach((event) =>
            Effect.tryPromise(async () => handler(event)).pipe(
              Effect.catch((error) => Effect.logWarning("Bus listener failed", error))
            )
          ),
          Effect.forkScoped
        )
        return { close: () => Effect.runPromise(Fiber.interrupt(fiber)) }
      })

      return Bus.of({ publish, subscribe, listen })
    })
  )
}
