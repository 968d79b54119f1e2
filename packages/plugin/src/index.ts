/**
 * @lathe/plugin: what a plugin author needs, and nothing of the host. Depend on this package, not on `@lathe/core`:
 * `definePlugin`, `Tool.define`, `defineAgent`, the hook, context, tool and event types, `evaluate` for rulesets, and
 * the few Promise helpers a plugin uses to run programs safely. Tests add `@lathe/plugin/testing`.
 *
 * Every name here is re-exported from `@lathe/core`, so a value made with one is the same value in the other. The list
 * is deliberate: a name joins it when authors need it, never by `export *`.
 */

// Sessions, messages, parts and events, as hooks and `ctx.client` see them.
export type {
  AssistantMessage,
  EventOf,
  FilePart,
  LatheEvent,
  LatheEventType,
  Message,
  MessageWithParts,
  ModelInfo,
  Part,
  PartOf,
  PartType,
  PatchPart,
  PromptPart,
  ReasoningPart,
  Session,
  StepFinishPart,
  StepStartPart,
  SubtaskPart,
  TextPart,
  ToolPart,
  ToolState,
  UserMessage
} from "@lathe/core"
// Plugins and their hooks.
// Tools.
// Permissions: what `ctx.ask` takes and rejects with, and the rulesets hooks receive.
// Questions and subagents, as `ctx.question` and `ctx.subagent` use them.
// Running programs the way Lathe does: without secrets, with a time limit, and git without the repository's programs.
export {
  AgentDefinition,
  type AgentInfo,
  type AgentMode,
  type AnyTool,
  type ConfigInfo,
  DEFAULT_HOOK_TIMEOUT_MS,
  defineAgent,
  definePlugin,
  denied,
  type EvaluateOptions,
  evaluate,
  type HookInput,
  type HookName,
  type HookOutput,
  type Hooks,
  isPlugin,
  type PermissionAction,
  PermissionConfig,
  PermissionDenied,
  type PermissionError,
  PermissionRejected,
  type PermissionRequest,
  type Plugin,
  type PluginClient,
  type PluginCommand,
  type PluginCommandArgument,
  type PluginContext,
  type PluginEntry,
  type PluginHooks,
  type PluginLogger,
  type PluginResource,
  type PluginResources,
  type PluginSetup,
  type ProcessResult,
  parseOnce,
  prepareSafeGit,
  type QuestionAnswers,
  QuestionDismissed,
  type QuestionItem,
  type Rule,
  type Ruleset,
  type RunProcessOptions,
  type RunProgramOptions,
  type RunProgramResult,
  rejected,
  runProcess,
  runSafeGit,
  type SafeGit,
  type SafeGitRunOptions,
  type SafeGitTarget,
  type SubagentResult,
  scrubEnv,
  spawnProgram,
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
} from "@lathe/core"
