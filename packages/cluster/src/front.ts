/**
 * The server side of a cluster: `lathe serve --cluster` takes HTTP traffic and runs no session itself. Prompts are
 * stored here (the store is the shared Postgres) and handed to the session's entity as a persisted `Run`; aborts,
 * answers and undo/redo go to the runner holding the session; events come back through the relay. The front's own
 * events (a session created, a prompt stored) go out through the relay too, so they are numbered with the runners'
 * events and every front sees them.
 */

import { SessionStore, TurnRunner } from "@lathe/core"
import type { LatheEvent } from "@lathe/core/schema"
import type { EventLog, PendingAsk, PendingAsked, SessionRunner, TurnPrompt } from "@lathe/server"
import { Deferred, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { type ClusterOptions, clusterLayer, pgLayer } from "./cluster-layer.js"
import { reportLogger } from "./log.js"
import { AgentSession } from "./protocol.js"
import { listen, makePublisher } from "./relay.js"

/** How a server joins a cluster (client-only). */
export interface FrontOptions extends Omit<ClusterOptions, "runner"> {
  /** Where the cluster's warnings go (default: nowhere). */
  readonly report?: (line: string) => void
}

/** Which sessions run a turn, and what waits for a person, as the relayed events tell. */
class Tracker {
  readonly running = new Set<string>()
  readonly asks = new Map<string, PendingAsk>()
  readonly questions = new Map<string, PendingAsked>()

  see(event: LatheEvent): void {
    switch (event.type) {
      case "session.status":
        if (event.status.type === "idle") this.running.delete(event.sessionID)
        else this.running.add(event.sessionID)
        break
      case "session.idle":
      case "session.deleted":
        this.running.delete(event.sessionID)
        break
      case "permission.asked": {
        const { type: _, ...ask } = event
        this.asks.set(event.id, ask)
        break
      }
      case "permission.replied":
        this.asks.delete(event.id)
        break
      case "question.asked": {
        const { type: _, ...asked } = event
        this.questions.set(event.id, asked)
        break
      }
      case "question.replied":
        this.questions.delete(event.id)
        break
    }
  }
}

/**
 * A {@link SessionRunner} for `serve({ runner })` that sends turns to the cluster. Resolves once the relay listens
 * (so no event of a prompt sent after start is missed).
 */
export const clusterFront =
  (options: FrontOptions) =>
  async (log: EventLog): Promise<SessionRunner> => {
    const sql = pgLayer(options.url, options.maxConnections)
    const runtime = ManagedRuntime.make(
      Layer.provideMerge(clusterLayer(options), sql).pipe(
        Layer.provideMerge(reportLogger(options.report ?? (() => {})))
      )
    )
    const tracker = new Tracker()
    const scope = Scope.makeUnsafe()
    const listening = await runtime.runPromise(Deferred.make<void>())
    await runtime.runPromise(
      listen(
        (event, position) => {
          tracker.see(event)
          log.push(event, position)
        },
        () => Deferred.doneUnsafe(listening, Exit.void)
      ).pipe(Scope.provide(scope))
    )
    await runtime.runPromise(Deferred.await(listening))
    const publisher = await runtime.runPromise(makePublisher().pipe(Scope.provide(scope)))
    const makeClient = await runtime.runPromise(AgentSession.client)
    const send = <A, E>(effect: Effect.Effect<A, E, never>) => runtime.runPromise(effect)

    const runner: SessionRunner = {
      count: 0,
      isRunning: (sessionID) => tracker.running.has(sessionID),
      prompt: async (app, input: TurnPrompt) => {
        const user = await app.runtime.runPromise(
          Effect.gen(function* () {
            // Stored here (its command expanded, its mentioned resources attached); a runner answers it.
            const stored = yield* (yield* TurnRunner).append({
              sessionID: input.sessionID,
              text: input.text,
              ...(input.command !== undefined ? { command: input.command } : {}),
              ...(input.arguments !== undefined ? { arguments: input.arguments } : {}),
              mentions: true,
              ...(input.agent ? { agent: input.agent } : {}),
              ...(input.model ? { model: input.model } : {})
            })
            // The runner reads the prompt from the store: it must be there before the Run is (the store batches).
            yield* (yield* SessionStore).flush
            return stored
          })
        )
        // The prompt's events go out before the runner's first ones (ids follow what happened).
        await send(publisher.flush)
        const queued = tracker.running.has(input.sessionID)
        // Busy from now on (the runner's own `busy` follows), so a delete or undo right after is refused.
        tracker.running.add(input.sessionID)
        await send(makeClient(input.sessionID).Run({ messageID: user.message.id }, { discard: true }))
        return {
          messageID: user.message.id,
          queued,
          ...(user.problems.length > 0 ? { notices: user.problems } : {})
        }
      },
      abort: (sessionID) =>
        tracker.running.has(sessionID) ? send(makeClient(sessionID).Abort(undefined)) : Promise.resolve(false),
      abortAll: async () => 0,
      revert: (sessionID, verb, options = {}) => send(makeClient(sessionID).Revert({ verb, ...options })),
      pending: () => ({ asks: [...tracker.asks.values()], questions: [...tracker.questions.values()] }),
      respond: async (response) => {
        const sessionID =
          response.kind === "permission"
            ? tracker.asks.get(response.requestID)?.sessionID
            : tracker.questions.get(response.requestID)?.sessionID
        if (sessionID === undefined) return false
        return send(
          makeClient(sessionID).Respond(
            response.kind === "permission"
              ? {
                  kind: "permission",
                  requestID: response.requestID,
                  reply: response.reply,
                  ...(response.message ? { message: response.message } : {})
                }
              : {
                  kind: "question",
                  requestID: response.requestID,
                  ...(response.answers ? { answers: response.answers } : {}),
                  ...(response.dismissed !== undefined ? { dismissed: response.dismissed } : {})
                }
          )
        )
      },
      publish: publisher.publish,
      dispose: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        await runtime.dispose()
      }
    }
    return runner
  }
