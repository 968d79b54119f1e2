/**
 * @lathe/plugin/testing: test a plugin with plain Promises. `runPluginTurn` runs a real turn of Lathe's loop with your
 * plugins and a scripted model and returns what happened as plain data; `pluginContext` and `runTool` call a plugin's
 * setup, hooks and tools directly. No Effect anywhere: every helper returns a Promise or a plain value.
 */
export type { ConfigTestInput, LLMRequest } from "@lathe/core"
export { chunks, type ScriptedStep, type ServerStep, type ServerUsage } from "@lathe/core/testing"
export { type PluginContextOptions, pluginContext } from "./plugin-context.js"
export { type PluginTurn, type PluginTurnOptions, runPluginTurn } from "./run-plugin-turn.js"
export { runTool, type ToolContextOptions, toolContext } from "./run-tool.js"
export type { PluginTurnStep, ScriptedReply } from "./scripted-reply.js"
