/**
 * A runner: a process that holds sessions. It joins the cluster with an address, hosts the `AgentSession` entities
 * of the shards it owns, runs their turns with the same app a local `lathe serve` would build for the session's
 * directory, and relays every event to the servers through Postgres.
 *
 * Entity memory does not move with a session: everything a turn needs is read from the store when a `Run` arrives,
 * so a session taken over from a dead runner continues from its last completed step.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import {
  INTERRUPTED_MESSAGE_ERROR,
  INTERRUPTED_TOOL_ERROR,
  PermissionNext,
  Question,
  recoverSession,
  redoSession,
  SessionStore,
  SessionWriter,
  TurnRunner,
  undoSession
} from "@lathe/core"
import type { MessageWithParts, Part } from "@lathe/plugin/schema"
import { type AppFactory, Directories, type DirectoryApp, type ServerServices } from "@lathe/server"
import type { Workspaces } from "@lathe/workspace"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { Entity } from "effect/cluster"
import { type ClusterOptions, clusterLayer, pgLayer, runnerApplicationName } from "./cluster-layer.js"
import { deadRunnerSweep } from "./liveness.js"
import { reportLogger } from "./log.js"
import { AgentSession, type RunOutcome } from "./protocol.js"
import { type EventPublisher, makePublisher } from "./relay.js"

/** How to start a runner. */
export interface RunnerOptions extends Omit<ClusterOptions, "runner"> {
  /** Builds the app of a directory (the CLI passes its `appLayer`, with the Postgres store). */
  readonly app: AppFactory
  /** The runner's own directory: its config is the one used to find sessions. */
  readonly directory: string
  /** The address other runners and servers reach this one at (default host 127.0.0.1). */
  readonly host?: string
  readonly port: number
  /** The interface to listen on, when it differs from `host` (e.g. `0.0.0.0` in a container). */
  readonly listenHost?: string
  /**
   * Clones for sessions created with a `repo`: the runner rebuilds each such session's work tree from its recorded
   * checkpoints when it takes the session (its app should checkpoint edits: `workspacePlugin`).
   */
  readonly workspaces?: Workspaces["Service"]
  /** Serve `GET /health` on this port (loopback unless `listenHost` says otherwise); absent: no health endpoint. */
  readonly healthPort?: number
  /** Progress lines for the person running it. */
  readonly report?: (line: string) => void
}

/** A running runner. */
export interface LatheRunner {
  /** `host:port`. */
  readonly address: string
  /** `http://HOST:PORT/health` when a health port was asked for. */
  readonly healthUrl?: string
  /**
   * Leaves the cluster: its shards go to the other runners, turns in progress stop (their `Run` resumes on the new
   * owner), events and store writes are flushed. Resolves when done.
   */
  readonly close: () => Promise<void>
}

/** How many interrupted attempts of one prompt a runner takes over before it gives up on it. */
const MAX_INTERRUPTED = 2

/**
 * How long a runner giving a session up (its shard moved, SIGTERM) waits for the turn it stopped to end before it
 * lets the shard go. Below Effect Cluster's `entityTerminationTimeout` (15 s), so the wait is ours, not cut short.
 */
const HANDOVER_WAIT_MS = 10_000
const HANDOVER_WAIT = `${HANDOVER_WAIT_MS} millis` as const

/** The error a rolled-back tool call is left with: what the model reads before it carries on. */
export const ROLLED_BACK_TOOL_ERROR =
  "interrupted: the process running this call stopped before it finished, and the workspace was put back to how it was before the call; run it again if it is still needed"

/** The newest checkpoint a completed tool call reported (`metadata.checkpoint` set by the workspace plugin). */
const acknowledgedCheckpoint = (messages: ReadonlyArray<MessageWithParts>): number | undefined => {
  let newest: number | undefined
  for (const { parts } of messages)
    for (const part of parts) {
      if (part.type !== "tool" || part.state.status !== "completed") continue
      const checkpoint = part.state.metadata?.checkpoint
      if (typeof checkpoint === "number" && (newest === undefined || checkpoint > newest)) newest = checkpoint
    }
  return newest
}

const runIn = async <A, E>(app: DirectoryApp, effect: Effect.Effect<A, E, ServerServices>): Promise<A> => {
  const exit = await app.runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw exit.cause
}

/** The state a runner keeps for one resident session (lost when it moves: only the running turn lives here). */
interface Resident {
  running?: { readonly controller: AbortController; aborted: boolean; readonly done: Promise<RunOutcome> }
}

/**
 * A runner leaving (SIGTERM): `signal` stops every turn before the cluster hands the shards over, and `turns` are the
 * turns in progress, which `close` waits for. Effect Cluster's own handoff forces entities to stop without waiting
 * for them, so a turn must be over before it starts.
 */
interface Handover {
  readonly signal: AbortSignal
  readonly turns: Set<Promise<RunOutcome>>
}

const sessionHandlers = (
  homeApp: () => Promise<DirectoryApp>,
  directories: Directories,
  runnerName: string,
  report: (line: string) => void,
  workspaces: Workspaces["Service"] | undefined,
  handover: Handover
) =>
  AgentSession.toLayer(
    Effect.gen(function* () {
      const address = yield* Entity.CurrentAddress
      const sessionID = String(address.entityId)
      const resident: Resident = {}

      const appOf = async (): Promise<DirectoryApp> => {
        const home = await homeApp()
        const session = await runIn(
          home,
          Effect.flatMap(SessionStore, (store) => store.getSession(sessionID))
        )
        let directory = session.directory
        if (session.workspace && workspaces) {
          // This runner's own clone: rebuilt from the base commit and the newest checkpoint when it is new here.
          directory = await Effect.runPromise(workspaces.open(sessionID, session.workspace))
          if (directory !== session.directory) {
            const moved = { ...session, directory }
            await runIn(
              home,
              // The clone's app reads the session through its own store: the move must be out of this batch first.
              Effect.flatMap(SessionWriter, (writer) => writer.updateSession(moved, { durable: true }))
            )
          }
        }
        return directory === home.directory ? home : directories.get(directory)
      }

      const messagesOf = (app: DirectoryApp) =>
        runIn(
          app,
          Effect.flatMap(SessionStore, (store) => store.messages(sessionID))
        )

      /** How many times a process died while answering `messageID` (interrupted steps recorded for it). */
      const interruptions = (messages: ReadonlyArray<MessageWithParts>, messageID: string): number =>
        messages.filter(
          (m) =>
            m.info.role === "assistant" &&
            m.info.parentID === messageID &&
            m.info.error?.message === INTERRUPTED_MESSAGE_ERROR
        ).length

      /** The cluster's own rule over the turn-runner's queue: a prompt that took down its runners too often is dropped. */
      const admit = (messageID: string, messages: ReadonlyArray<MessageWithParts>): string | undefined =>
        interruptions(messages, messageID) >= MAX_INTERRUPTED
          ? `Gave up on message ${messageID}: the runners holding it stopped ${MAX_INTERRUPTED} times while answering it.`
          : undefined

      /** Stores `parts` changed and tells the clients. */
      const putParts = (app: DirectoryApp, parts: ReadonlyArray<Part>) =>
        parts.length === 0
          ? Promise.resolve()
          : runIn(
              app,
              Effect.gen(function* () {
                const writer = yield* SessionWriter
                // A settled call's new wording is no news of the call: `part.updated` only.
                for (const part of parts) yield* writer.putPart(part, { toolEvent: false })
                yield* writer.flush
              })
            )

      /**
       * A cloned session taken over here: settles what the last holder left open, then puts the work tree back to
       * the newest checkpoint a completed tool call reported. A newer checkpoint comes from a call whose result never
       * reached the session (the holder died or handed over between the checkpoint and the stored result): the model
       * was told it was interrupted, so it must not have happened, or a call the model runs again (an append) would
       * happen twice. Those calls' errors say the workspace was put back.
       */
      const settleWorkspace = async (app: DirectoryApp) => {
        if (!workspaces || workspaces.directory(sessionID) === undefined) return
        await runIn(app, recoverSession(sessionID))
        const messages = await messagesOf(app)
        const acknowledged = acknowledgedCheckpoint(messages)
        if (!(await Effect.runPromise(workspaces.rollback(sessionID, acknowledged)))) return
        report(`session ${sessionID}: work tree put back to checkpoint ${acknowledged ?? "base"}`)
        await putParts(
          app,
          messages.flatMap(({ parts }) =>
            parts.flatMap(
              (part): Array<Part> =>
                part.type === "tool" && part.state.status === "error" && part.state.error === INTERRUPTED_TOOL_ERROR
                  ? [{ ...part, state: { ...part.state, error: ROLLED_BACK_TOOL_ERROR } }]
                  : []
            )
          )
        )
      }

      /**
       * A turn stopped because the session moves (not because someone aborted it): its calls cut short say they were
       * interrupted, as after a crash, so the next holder rolls their edits back and the model runs them again.
       */
      const markHandedOver = async (app: DirectoryApp, since: number) => {
        const messages = await messagesOf(app)
        await putParts(
          app,
          messages.flatMap(({ parts }) =>
            parts.flatMap(
              (part): Array<Part> =>
                part.type === "tool" &&
                part.state.status === "error" &&
                part.state.error === "aborted" &&
                part.state.time.end >= since
                  ? [{ ...part, state: { ...part.state, error: INTERRUPTED_TOOL_ERROR } }]
                  : []
            )
          )
        )
      }

      const turns = async (messageID: string, signal: AbortSignal): Promise<RunOutcome> => {
        const app = await appOf()
        const started = Date.now()
        await settleWorkspace(app)
        report(`session ${sessionID}: answering ${messageID}`)
        const controller = new AbortController()
        signal.addEventListener("abort", () => controller.abort(), { once: true })
        handover.signal.addEventListener("abort", () => controller.abort(), { once: true })
        /** Whether the session is moving to another runner (its shard moved, or this runner is leaving). */
        const moving = () => signal.aborted || handover.signal.aborted
        const entry: NonNullable<Resident["running"]> = {
          controller,
          aborted: false,
          done: undefined as unknown as Promise<RunOutcome>
        }
        // The app's turn-runner answers the prompt and every one stored behind it; only the handover is ours.
        const work = async (): Promise<RunOutcome> => {
          const end = await app.runtime.runPromise(
            Effect.flatMap(TurnRunner, (runner) =>
              runner.answer({ sessionID, messageID, abort: controller.signal, title: false, admit })
            )
          )
          if (moving() && !entry.aborted) await markHandedOver(app, started)
          if (end.status === "failed") return end
          return { status: entry.aborted || moving() ? "aborted" : "done" }
        }
        ;(entry as { done: Promise<RunOutcome> }).done = work().finally(() => {
          if (resident.running === entry) delete resident.running
          handover.turns.delete(entry.done)
          report(`session ${sessionID}: ${moving() ? "handed over" : "idle"}`)
        })
        handover.turns.add(entry.done)
        resident.running = entry
        return entry.done
      }

      return AgentSession.of({
        Run: ({ payload }) =>
          resident.running
            ? // The running turn sees a prompt stored meanwhile and answers it before it ends.
              Effect.succeed({ status: "queued" as const })
            : Effect.callback<RunOutcome>((resume, signal) => {
                const done = turns(payload.messageID, signal).catch((error: unknown): RunOutcome => {
                  // A session that cannot be set up here (its clone failed, its store row is gone) is answered as
                  // failed, not retried forever.
                  const message = error instanceof Error ? error.message : String(error)
                  report(`session ${sessionID}: failed: ${message}`)
                  return { status: "failed", message }
                })
                // A turn stopped because this runner leaves is not answered: the Run stays pending and resumes on the
                // runner that takes the shard.
                void done.then((outcome) => {
                  if (!handover.signal.aborted) resume(Effect.succeed(outcome))
                })
                // Interrupted (the shard moves, SIGTERM): the signal stops the turn, and the shard is let go only once
                // the turn has ended. Resuming at once let the next holder start while this turn still wrote
                // checkpoints and results, and the two holders' checkpoints replaced each other.
                return Effect.promise(() => done).pipe(Effect.timeout(HANDOVER_WAIT), Effect.ignore)
              }),
        Abort: () =>
          Effect.sync(() => {
            const running = resident.running
            if (!running) return false
            running.aborted = true
            running.controller.abort()
            return true
          }),
        Respond: ({ payload }) =>
          Effect.promise(async () => {
            const app = await appOf()
            const exit = await app.runtime.runPromiseExit(
              payload.kind === "permission"
                ? Effect.flatMap(PermissionNext, (p) =>
                    p.reply(
                      payload.requestID,
                      payload.reply === "reject"
                        ? { type: "reject", ...(payload.message ? { message: payload.message } : {}) }
                        : { type: payload.reply ?? "once" }
                    )
                  )
                : Effect.flatMap(Question, (q) =>
                    payload.answers !== undefined
                      ? q.reply(payload.requestID, payload.answers)
                      : q.dismiss(payload.requestID, payload.dismissed)
                  )
            )
            return Exit.isSuccess(exit)
          }),
        Revert: ({ payload }) =>
          Effect.promise(async () => {
            if (resident.running) return { reverted: false, message: `Session ${sessionID} is running a turn.` }
            const app = await appOf()
            const exit = await app.runtime.runPromiseExit(
              payload.verb === "undo"
                ? undoSession(sessionID, { step: payload.step, turn: payload.turn, force: payload.force })
                : redoSession(sessionID, { force: payload.force })
            )
            if (Exit.isSuccess(exit)) return { reverted: true, message: `${payload.verb} done` }
            const error = exit.cause.reasons[0]
            const message =
              error?._tag === "Fail" && typeof error.error === "object" && error.error && "message" in error.error
                ? String(error.error.message)
                : `${payload.verb} failed`
            return { reverted: false, message }
          }),
        Status: () => Effect.succeed({ running: resident.running !== undefined, runner: runnerName })
      })
    }),
    { concurrency: "unbounded", maxIdleTime: "10 minutes" }
  )

/**
 * Starts a runner: builds its home app, joins the cluster (Postgres + socket transport), and hosts sessions until
 * `close`. Resolves once it is a member and listening.
 */
export const startRunner = async (options: RunnerOptions): Promise<LatheRunner> => {
  const host = options.host ?? "127.0.0.1"
  const address = `${host}:${options.port}`
  const report = options.report ?? (() => {})
  const sql = pgLayer(options.url, options.maxConnections, runnerApplicationName(address))
  // The relay and the directories' apps live in one runtime of their own, so the cluster can stop first.
  const relayRuntime = ManagedRuntime.make(Layer.merge(sql, reportLogger(report)))
  const relayScope = Scope.makeUnsafe()
  const publisher: EventPublisher = await relayRuntime.runPromise(makePublisher().pipe(Scope.provide(relayScope)))
  // While it leaves, a turn stopped for the handover ends here as aborted; its "idle" is not news to clients (the new
  // owner carries on and publishes its own busy/idle), so it is not relayed.
  let leaving = false
  const directories = new Directories(options.app, {
    push: (event) => {
      if (
        leaving &&
        (event.type === "session.idle" || (event.type === "session.status" && event.status.type === "idle"))
      )
        return
      publisher.publish(event)
    }
  })
  let home: Promise<DirectoryApp> | undefined
  const homeApp = (): Promise<DirectoryApp> => {
    home ??= directories.get(options.directory)
    return home
  }
  await homeApp()
  const leave = new AbortController()
  const handover: Handover = { signal: leave.signal, turns: new Set() }
  const cluster = sessionHandlers(homeApp, directories, address, report, options.workspaces, handover).pipe(
    Layer.merge(deadRunnerSweep(address, report)),
    Layer.provide(
      clusterLayer({
        ...options,
        runner: { host, port: options.port, ...(options.listenHost ? { listenHost: options.listenHost } : {}) }
      })
    ),
    Layer.provide(sql),
    Layer.provideMerge(reportLogger(report))
  )
  const runtime = ManagedRuntime.make(cluster)
  await runtime.runPromise(Effect.void)
  report(`runner ${address} joined the cluster`)
  const health = options.healthPort === undefined ? undefined : await healthServer(options, address, () => leaving)
  return {
    address,
    ...(health ? { healthUrl: health.url } : {}),
    close: async () => {
      report(`runner ${address}: handing its sessions over`)
      leaving = true
      // Every turn stops and ends here before the shards go: the next holder must not start while one still writes.
      leave.abort()
      await Promise.race([
        Promise.allSettled([...handover.turns]),
        new Promise((resolve) => setTimeout(resolve, HANDOVER_WAIT_MS))
      ])
      await runtime.dispose()
      await directories.dispose()
      await Effect.runPromise(Scope.close(relayScope, Exit.void))
      await relayRuntime.dispose()
      health?.server.close()
      report(`runner ${address}: stopped`)
    }
  }
}

/**
 * `GET /health` for a load balancer or an orchestrator: 200 `{ ok: true, address }` while the runner is a member,
 * 503 `{ ok: false, … }` once it is leaving (SIGTERM), so nothing new is routed to it.
 */
const healthServer = (options: RunnerOptions, address: string, leaving: () => boolean) =>
  new Promise<{ readonly server: Server; readonly url: string }>((resolve, reject) => {
    const server = createServer((req, res) => {
      const ok = !leaving()
      const known = req.url === "/health" || req.url === "/"
      res.writeHead(known ? (ok ? 200 : 503) : 404, { "content-type": "application/json" })
      res.end(JSON.stringify(known ? { ok, address, ...(ok ? {} : { reason: "leaving" }) } : { error: "not found" }))
    })
    const host = options.listenHost ?? options.host ?? "127.0.0.1"
    server.once("error", reject)
    server.listen(options.healthPort, host, () => {
      const { port } = server.address() as AddressInfo
      resolve({ server, url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/health` })
    })
  })
