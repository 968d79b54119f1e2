import { Layer } from "effect"
import { AgentSwitch } from "./agent-switch.js"
import { Budget } from "./budget.js"
import { Compaction } from "./compaction.js"
import { NestedRules } from "./nested-rules.js"
import { Processor } from "./processor.js"
import { SessionPrompt } from "./session-prompt.js"
import { Step } from "./step.js"
import { SystemPrompt } from "./system-prompt.js"
import { Title } from "./title.js"
import { ToolRunner } from "./tool-runner.js"
import { TurnRunner } from "./turn-runner.js"

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
 * The agent loop, its services each on its own layer and bound once: `SystemPrompt` (and the `NestedRules` it hands
 * out) under `ToolRunner` (one call), under `Processor` (one streamed step), under `Step` (an attempt and its
 * retries), under `Compaction` and `Title`, under `SessionPrompt` (the turn), under `TurnRunner` (what every front
 * drives). Every one of them is in the output, so a
 * caller can use or replace any; the services they need (store, writer, bus, LLM, config, paths, plugins, permission,
 * snapshot, question, subagents, retry) come from below.
 */
export const loopLayer = (replace: LoopLayers = {}) => {
  // The runner reaches the session's nested rules through the system prompt's layer, below it.
  // The agent a tool hands the session to (`plan_exit`): recorded by the runner's calls, taken by the turn's loop.
  const system = NestedRules.layer.pipe(
    Layer.provideMerge(replace.systemPrompt ?? SystemPrompt.layer),
    Layer.provideMerge(AgentSwitch.layer)
  )
  const tools = (replace.toolRunner ?? ToolRunner.layer).pipe(Layer.provideMerge(system))
  const processor = (replace.processor ?? Processor.layer).pipe(Layer.provideMerge(tools))
  const step = (replace.step ?? Step.layer).pipe(Layer.provideMerge(processor))
  const aside = Layer.mergeAll(replace.compaction ?? Compaction.layer, replace.title ?? Title.layer).pipe(
    Layer.provideMerge(step)
  )
  // The turns' cost budgets: opened per turn by `SessionPrompt` (only it opens them, so the layer stays inside).
  const turns = SessionPrompt.layer.pipe(Layer.provide(Budget.layer), Layer.provideMerge(aside))
  return TurnRunner.layer.pipe(Layer.provideMerge(turns))
}
