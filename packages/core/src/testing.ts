/**
 * Test layers for Lathe's services, for our tests and plugin authors' alike:
 * ```ts
 * const app = testLayer({ root: dir })            // everything in memory, every ask allowed
 * await Effect.runPromise(program.pipe(Effect.provide(app)))
 * ```
 * Override any one service by providing your own layer on top.
 */
import { Layer } from "effect"
import { Bus } from "./bus.js"
import { Config, type ConfigTestInput } from "./config.js"
import { Paths, type PathsShape } from "./paths.js"
import { PermissionNext } from "./permission-next.js"
import type { Plugin } from "./plugin.js"
import { type PluginEntry, Plugins } from "./plugins.js"
import { Retry } from "./retry.js"
import { SessionStore } from "./session-store.js"
import { Snapshot } from "./snapshot.js"

export { Bus, Config, Paths, PermissionNext, Plugins, Retry, SessionStore, Snapshot }

/** What `testLayer` builds from. */
export interface TestLayerOptions {
  /** The project directory (a temp dir): paths, data and config all live under it. */
  readonly root: string
  readonly paths?: Partial<PathsShape>
  /** Config as an object (validated like a file). */
  readonly config?: ConfigTestInput
  readonly plugins?: ReadonlyArray<PluginEntry | Plugin>
  /** "allow" (default) answers every ask yes; "deny" answers no. */
  readonly permission?: "allow" | "deny"
}

/**
 * The whole service graph with test layers: fixed paths, config from an object, the real Bus, an in-memory
 * store, permissions that always allow (or deny), snapshots off, zero-delay retries, and the given plugins.
 */
export const testLayer = (options: TestLayerOptions) => {
  const base = Layer.mergeAll(
    Paths.layerTest(options.root, options.paths ?? {}),
    Config.layerTest(options.config ?? {}),
    Bus.layer,
    SessionStore.memory
  )
  return Layer.mergeAll(
    Plugins.layer(options.plugins ?? []),
    options.permission === "deny" ? PermissionNext.denyAll : PermissionNext.allowAll,
    Snapshot.disabled,
    Retry.layerTest()
  ).pipe(Layer.provideMerge(base))
}
