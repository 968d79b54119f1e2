/**
 * The session clones of `lathe serve` and `lathe runner` (sessions created with a `repo`): checkouts under the data
 * dir's `workspaces/`, their record in the shared Postgres when there is one (so any runner can rebuild them), else in
 * memory (a single server: the clones live as long as the process remembers them).
 */
import { join } from "node:path"
import { Paths } from "@lathe/core"
import type { Plugin } from "@lathe/plugin"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { CliIO } from "./io.js"

/** A running workspaces service, the plugin that checkpoints edits, and how to stop it. */
export interface CliWorkspaces {
  readonly service: import("@lathe/workspace").Workspaces["Service"]
  readonly plugin: Plugin
  readonly dispose: () => Promise<void>
}

/** Starts the workspaces of this process; `url` is the shared Postgres, when there is one. */
export const startWorkspaces = async (io: CliIO, url: string | undefined): Promise<CliWorkspaces> => {
  const { MemoryWorkspaceLog, SqlWorkspaceLog, Workspaces, workspacePlugin } = await import("@lathe/workspace")
  const data = await Effect.runPromise(
    Effect.map(Paths, (paths) => paths.data).pipe(Effect.provide(Paths.layer(io.cwd, io.env)))
  )
  const log = url === undefined ? MemoryWorkspaceLog.layer() : await sqlLog(url, SqlWorkspaceLog)
  const runtime = ManagedRuntime.make(Workspaces.layer({ root: join(data, "workspaces") }).pipe(Layer.provide(log)))
  const service = await runtime.runPromise(
    Effect.gen(function* () {
      return yield* Workspaces
    })
  )
  return { service, plugin: workspacePlugin(service), dispose: () => runtime.dispose() }
}

const sqlLog = async (url: string, SqlWorkspaceLog: typeof import("@lathe/workspace").SqlWorkspaceLog) => {
  const { pgLayer } = await import("@lathe/cluster")
  return SqlWorkspaceLog.layer().pipe(Layer.provide(pgLayer(url, 4)))
}
