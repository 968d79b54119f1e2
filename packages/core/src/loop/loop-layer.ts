import { Layer } from "effect"
import { Compaction } from "./compaction.js"
import { Processor } from "./processor.js"
import { SessionPrompt } from "./session-prompt.js"
import { Step } from "./step.js"
import { SystemPrompt } from "./system-prompt.js"
import { Title } from "./title.js"
import { ToolRunner } from "./tool-runner.js"

/**
 * Replacements for the loop's own services, each built over the same services the real one needs (a `Title` that
 * records, a `ToolRunner` for another backend, …). What is left out is the real layer.
 */
export interface LoopLayers {
  readonly toolRunner?: Layer.Layer<ToolRunner, never, Layer.Services<typeof ToolRunner.layer>>
  readonly processor?: Layer.Layer<Processor, never, Layer.Services<typeof Processor.layer>>
  readonly systemPrompt?: Layer.Layer<SystemPrompt, never, Layer.Services<typeof SystemPrompt.layer>>
  readonly step?: Layer.Layer<Step, never, Layer.Services<typeof Step.layer>>
  readonly compaction?: Layer.Layer<Compaction, never, Layer.Services<typeof Compaction.layer>>
  readonly title?: Layer.Layer<Title, never, Layer.Services<typeof Title.layer>>
}

/**
 * The agent loop, its services each on its own layer and bound once: `ToolRunner` (one call) under `Processor` (one
 * streamed step) and `SystemPrompt`, under `Step` (an attempt and its retries), under `Compaction` and `Title`, under
 * `SessionPrompt` (the turn). Every one of them is in the output, so a caller can use or replace any; the services
 * they need (store, writer, bus, LLM, config, paths, plugins, permission, snapshot, question, subagents, retry) come
 * from below.
 */
export const loopLayer = (replace: LoopLayers = {}) => {
  const tools = replace.toolRunner ?? ToolRunner.layer
  const processor = Layer.mergeAll(
    replace.processor ?? Processor.layer,
    replace.systemPrompt ?? SystemPrompt.layer
  ).pipe(Layer.provideMerge(tools))
  const step = (replace.step ?? Step.layer).pipe(Layer.provideMerge(processor))
  const aside = Layer.mergeAll(replace.compaction ?? Compaction.layer, replace.title ?? Title.layer).pipe(
    Layer.provideMerge(step)
  )
  return SessionPrompt.layer.pipe(Layer.provideMerge(aside))
}
