/**
 * Test layers for Lathe's services, for our tests and plugin authors' alike:
 * ```ts
 * const app = testLayer({ root: dir })            // everything in memory, every ask allowed
 * await Effect.runPromise(program.pipe(Effect.provide(app)))
 * ```
 * Override any one service by providing your own layer on top.
 */

import type { Plugin } from "@lathe/plugin"
import { Layer } from "effect"
import { Config, type ConfigTestInput } from "../config/config.js"
import { Paths, type PathsShape } from "../config/paths.js"
import { Bus } from "../contracts/bus.js"
import { PermissionNext } from "../contracts/permission-next.js"
import { Snapshot } from "../contracts/snapshot.js"
import { type LoopLayers, loopLayer } from "../loop/loop-layer.js"
import { Question } from "../loop/question.js"
import { Retry } from "../loop/retry.js"
import { Subagents } from "../loop/subagents.js"
import type { PluginEntry } from "../plugin-host/plugin-loader.js"
import { Plugins } from "../plugin-host/plugins.js"
import { SessionStore, type StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import { ScriptedLLM, type ScriptedOptions, type ScriptedStep } from "./scripted-llm.js"

export * from "./scripted-llm.js"
export * from "./scripted-server.js"
export * from "./scripted-wire.js"
export * from "./wire-bedrock.js"
export * from "./wire-chat.js"
export * from "./wire-gemini.js"
export * from "./wire-ollama.js"
export * from "./wire-responses.js"
export { Bus, Config, Paths, PermissionNext, Plugins, Question, Retry, SessionStore, SessionWriter, Snapshot }

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
  const base = SessionWriter.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Paths.layerTest(options.root, options.paths ?? {}),
        Config.layerTest(options.config ?? {}),
        Bus.layer,
        SessionStore.memory
      )
    )
  )
  return Layer.mergeAll(
    Plugins.layer(options.plugins ?? []),
    Question.layer,
    options.permission === "deny" ? PermissionNext.denyAll : PermissionNext.allowAll,
    Snapshot.disabled,
    Retry.layerTest()
  ).pipe(Layer.provideMerge(base))
}

/** What `testLoopLayer` builds from: the test services, plus the model's script. */
export interface TestLoopOptions extends TestLayerOptions {
  /** One entry per model call (see `ScriptedLLM.layer`). */
  readonly steps: ReadonlyArray<ScriptedStep>
  readonly scripted?: ScriptedOptions
  /** Replaces the allow-all / deny-all permission layer (e.g. the real one from `@lathe/permission`). */
  readonly permissionLayer?: Layer.Layer<PermissionNext>
  /** Replaces `Snapshot.disabled` (e.g. the git layer from `@lathe/snapshot`). */
  readonly snapshotLayer?: Layer.Layer<Snapshot>
  /** Replaces the Bus-driven `Question` service (e.g. `Question.layerTest(answer)`). */
  readonly questionLayer?: Layer.Layer<Question>
  /** Replaces the zero-delay retry policy. */
  readonly retryLayer?: Layer.Layer<Retry>
  /** Replaces the in-memory store (e.g. `SqliteSessionStore.layerTemp()`). */
  readonly storeLayer?: Layer.Layer<SessionStore, StoreError>
  /** Replaces any of the loop's own services (`ToolRunner`, `Processor`, `Step`, `Compaction`, `Title`, …). */
  readonly loop?: LoopLayers
}

/**
 * The agent loop over test services: its own services (`SessionPrompt`, `Step`, `Processor`, `ToolRunner`,
 * `Compaction`, `Title`, `SystemPrompt`) for real unless `loop` replaces them, the model scripted (`ScriptedLLM`
 * records its requests), everything else as in {@link testLayer}. Provide a layer on top to override a service the
 * loop does not hold, or pass `loop` to replace one of the loop's.
 */
export const testLoopLayer = (options: TestLoopOptions) => {
  const services = SessionWriter.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Paths.layerTest(options.root, options.paths ?? {}),
        Config.layerTest(options.config ?? {}),
        Bus.layer,
        options.storeLayer ?? SessionStore.memory
      )
    )
  )
  const features = Layer.mergeAll(
    Plugins.layer(options.plugins ?? []),
    options.questionLayer ?? Question.layer,
    Subagents.layer,
    options.permissionLayer ?? (options.permission === "deny" ? PermissionNext.denyAll : PermissionNext.allowAll),
    options.snapshotLayer ?? Snapshot.disabled,
    options.retryLayer ?? Retry.layerTest(),
    ScriptedLLM.layer(options.steps, options.scripted ?? {})
  ).pipe(Layer.provideMerge(services))
  return loopLayer(options.loop).pipe(Layer.provideMerge(features))
}
