import { realpath, stat } from "node:fs/promises"
import { isAbsolute, resolve } from "node:path"
import {
  Bus,
  type Config,
  type LLM,
  type Paths,
  type PermissionNext,
  type Plugins,
  type Question,
  type SessionPrompt,
  type SessionStore,
  type SessionWriter,
  type Snapshot,
  type TurnRunner
} from "@lathe/core"
import type { LatheEvent } from "@lathe/core/schema"
import { Effect, Exit, type Layer, ManagedRuntime, Scope, Stream } from "effect"

/** The services the server uses from an app: what `lathe run` composes, for one directory. */
export type ServerServices =
  | SessionStore
  | SessionWriter
  | Bus
  | SessionPrompt
  | PermissionNext
  | Question
  | Snapshot
  | Paths
  | Config
  | Plugins
  | LLM
  | TurnRunner

/**
 * Builds the whole app for a directory (its config, trust, permission and sandbox rules, plugins and providers), as
 * the CLI would when started there. The session store must be the same for every directory (one SQLite file in the
 * data dir), so a session is found from any of them.
 */
export type AppFactory = (directory: string) => Layer.Layer<ServerServices, unknown>

/** Where an app's events go (the server's event log; a runner's relay to the servers). */
export interface EventSink {
  readonly push: (event: LatheEvent) => void
}

/** One directory's running app. */
export interface DirectoryApp {
  /** The directory, absolute with symlinks resolved (as sessions record it). */
  readonly directory: string
  readonly runtime: ManagedRuntime.ManagedRuntime<ServerServices, unknown>
}

/** The directory named in a request does not exist or is not a directory. */
export class BadDirectory extends Error {
  readonly _tag = "BadDirectory"
}

/** Resolves `directory` against `base` and checks it is an existing directory; returns its real path. */
export const resolveDirectory = async (base: string, directory: string): Promise<string> => {
  const absolute = isAbsolute(directory) ? directory : resolve(base, directory)
  const info = await stat(absolute).catch(() => undefined)
  if (!info?.isDirectory())
    throw new BadDirectory(
      `The directory "${directory}" ${info ? "is not a directory" : "does not exist"} (resolved to ${absolute}). ` +
        "Name an existing directory, absolute or relative to the server's."
    )
  return realpath(absolute)
}

/**
 * One app runtime per directory: built on first use (the server's own directory before the port is bound), fed into
 * the event log, and disposed on shutdown.
 */
export class Directories {
  private readonly apps = new Map<string, Promise<DirectoryApp>>()
  private readonly scopes: Array<Scope.Closeable> = []

  constructor(
    private readonly factory: AppFactory,
    private readonly log: EventSink
  ) {}

  /** The app of a directory (absolute, real path), building it the first time. */
  get(directory: string): Promise<DirectoryApp> {
    let app = this.apps.get(directory)
    if (!app) {
      app = this.build(directory)
      this.apps.set(directory, app)
      // A failed build is not cached: the next request tries again (and reports the error again).
      app.catch(() => this.apps.delete(directory))
    }
    return app
  }

  /** Every app built so far. */
  async all(): Promise<ReadonlyArray<DirectoryApp>> {
    const settled = await Promise.allSettled(this.apps.values())
    return settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []))
  }

  private async build(directory: string): Promise<DirectoryApp> {
    const runtime = ManagedRuntime.make(this.factory(directory))
    const log = this.log
    const scope = Scope.makeUnsafe()
    this.scopes.push(scope)
    // Subscribed before the app is handed out, so no event of any request is missed.
    const events = await runtime.runPromise(Effect.flatMap(Bus, (bus) => bus.subscribe).pipe(Scope.provide(scope)))
    runtime.runFork(Stream.runForEach(events, (event) => Effect.sync(() => log.push(event))))
    return { directory, runtime }
  }

  /** Flushes every store, then disposes every app (finalizers run: MCP servers stop, files close). */
  async dispose(): Promise<void> {
    const apps = await this.all()
    await Promise.all(apps.map((app) => app.runtime.dispose().catch(() => undefined)))
    for (const scope of this.scopes) await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
