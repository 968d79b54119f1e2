import { mkdtempSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Bus, Config, Paths, Plugins, SessionStore } from "@lathe/core/testing"
import type { Plugin, Rule } from "@lathe/plugin"
import type { EventOf } from "@lathe/plugin/schema"
import { Effect, Layer, Stream } from "effect"
import { PermissionLive } from "../src/permission-live.js"

/** A fresh project folder (its own data dir under it). */
export const tempRoot = (): string => realpathSync(mkdtempSync(join(tmpdir(), "lathe-permission-")))

/** The real layer over real Bus and Plugins, with paths under `root` (data in `<root>/.lathe-data`). */
export const permissionLayer = (root: string, plugins: ReadonlyArray<Plugin> = [], home = root) =>
  PermissionLive.pipe(
    Layer.provideMerge(Plugins.layer(plugins)),
    Layer.provideMerge(
      Layer.mergeAll(Paths.layerTest(root, { home }), Config.layerTest({}), Bus.layer, SessionStore.memory)
    )
  )

/** Starts collecting the next `n` `permission.asked` events (subscribed before it returns). */
export const collectAsked = (n: number) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const events = yield* bus.subscribe
    return yield* events.pipe(
      Stream.filter((event): event is EventOf<"permission.asked"> => event.type === "permission.asked"),
      Stream.take(n),
      Stream.runCollect,
      Effect.forkChild
    )
  })

/** Starts collecting the next `n` `permission.replied` events. */
export const collectReplied = (n: number) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const events = yield* bus.subscribe
    return yield* events.pipe(
      Stream.filter((event): event is EventOf<"permission.replied"> => event.type === "permission.replied"),
      Stream.take(n),
      Stream.runCollect,
      Effect.forkChild
    )
  })

/** Shorthand for a rule. */
export const rule = (permission: string, pattern: string, action: Rule["action"]): Rule => ({
  permission,
  pattern,
  action,
  source: "test.json"
})
