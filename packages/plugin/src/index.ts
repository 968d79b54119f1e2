/**
 * @lathe/plugin: the contract between Lathe and a plugin. The kit defines it and Lathe's host implements it:
 * `definePlugin`, `Tool.define`/`defineTool`, `defineAgent`, the hook, context, command, resource and tool types, the
 * message, part and event schema, and `evaluate` for rulesets. It depends on `effect` and `zod` only; tests add
 * `@lathe/plugin/testing`, and `@lathe/plugin/schema` is the schema alone.
 *
 * The list is deliberate: a name joins it when authors need it, never by `export *`.
 */

// Agents a plugin contributes.
export { AgentDefinition, type AgentInfo, type AgentMode, defineAgent } from "./agent.js"
// Questions and subagents, as `ctx.question` and `ctx.subagent` use them.
export { type QuestionAnswers, QuestionDismissed, type SubagentResult } from "./answers.js"
// Config advice: a snippet of lathe.json on one line, as Lathe prints it.
export { renderSnippet } from "./config-snippet.js"
// What a host may do in a tool's place (`ctx.files`, `ctx.terminal`): an editor's buffers and terminal.
export type {
  HostCallSite,
  HostFiles,
  HostTerminal,
  HostTerminalCommand,
  HostTerminalResult
} from "./host-side.js"
// Permissions: what `ctx.ask` takes and rejects with, and the rulesets hooks receive.
export {
  denied,
  PermissionAction,
  PermissionConfig,
  PermissionDenied,
  type PermissionError,
  PermissionRejected,
  type PermissionRequest,
  Rule,
  type Ruleset,
  rejected
} from "./permission.js"
export { type EvaluateOptions, evaluate } from "./permission-rules.js"
// Plugins, their context, hooks, commands and resources.
export {
  type CatalogProvider,
  definePlugin,
  type GitOptions,
  type HookInput,
  type HookName,
  type HookOutput,
  type Hooks,
  type MaybePromise,
  type McpLocalServerConfig,
  type McpRemoteServerConfig,
  type McpServerConfig,
  type ModelInfo,
  type Plugin,
  type PluginCatalog,
  type PluginClient,
  type PluginCommand,
  type PluginCommandArgument,
  type PluginConfig,
  type PluginContext,
  type PluginHooks,
  type PluginLogger,
  type PluginResource,
  type PluginResources,
  type PluginSetup,
  type RunProgramOptions,
  type RunProgramResult
} from "./plugin.js"
// Programs a plugin starts itself (outside `ctx.run`): their environment without credentials, and how to run them.
export { runProgram, type StartProgramOptions } from "./run-program.js"
// Sessions, messages, parts and events, as hooks and `ctx.client` see them (schemas: `@lathe/plugin/schema`).
export type {
  AssistantMessage,
  EventOf,
  FilePart,
  LatheEvent,
  LatheEventType,
  Message,
  MessageWithParts,
  Part,
  PartOf,
  PartType,
  PatchPart,
  PromptPart,
  QuestionItem,
  ReasoningPart,
  Session,
  StepFinishPart,
  StepStartPart,
  SubtaskPart,
  TextPart,
  Tokens,
  ToolPart,
  ToolState,
  UserMessage
} from "./schema/index.js"
export { MIN_CONTAINED_SECRET, scrubEnv } from "./secret-env.js"
// Tools.
export {
  type AnyTool,
  defineTool,
  Tool,
  ToolAborted,
  type ToolArgs,
  type ToolAttachment,
  type ToolContext,
  type ToolDefinition,
  type ToolError,
  ToolExecutionError,
  type ToolInfo,
  ToolInvalidArguments,
  type ToolOutput,
  type ToolOutputMetadata,
  type ToolResult,
  type ToolRunContext
} from "./tool.js"
