/**
 * @lathe/plugin/testing: test a plugin with plain Promises. `pluginContext`, `runTool`, `runCommand` and `readResource`
 * call a plugin's setup, hooks, tools, commands and resources directly, with the kit alone; `runPluginTurn` runs a
 * real turn of Lathe's loop with your plugins and a scripted model (it needs `@lathe/core` installed as a dev
 * dependency) and returns what happened as plain data. No Effect anywhere: every helper returns a Promise or a value.
 */
export {
  type CommandExpansion,
  type ContributionOptions,
  listCommands,
  listResources,
  readResource,
  runCommand,
  type SetUpPlugin,
  setUpPlugin
} from "./contributions.js"
export { type PluginContextOptions, pluginContext, type TestPluginContext } from "./plugin-context.js"
export { PluginTurnHostMissing, runPluginTurn } from "./run-plugin-turn.js"
export { runTool, type ToolContextOptions, toolContext } from "./run-tool.js"
export { toolSchemasJson } from "./tool-schemas.js"
export type {
  PluginTurn,
  PluginTurnHost,
  PluginTurnLog,
  PluginTurnOptions,
  PluginTurnRequest,
  PluginTurnStep,
  PluginTurnToolResult,
  PluginWithOptions,
  ScriptedPart,
  ScriptedReply
} from "./turn-types.js"
