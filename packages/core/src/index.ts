/**
 * @lathe/core: Lathe's message model, service contracts, tool and plugin APIs.
 *
 * Plugin authors need only `definePlugin`, `Tool.define` and the types; test authors add `@lathe/core/testing`.
 *
 * The list is deliberate, grouped by room (each `src/<room>/README.md` says what the room holds): a name is here
 * because another Lathe package, a plugin or a documented API uses it. Add a name with its room's group; no
 * `export *`.
 */

// catalog/: the models.dev catalogue: limits, prices and abilities per model (ModelCatalog).
export type { CatalogModel, CatalogProvider } from "./catalog/catalog-index.js"
export { groupDigits } from "./catalog/group-digits.js"
export {
  type AssumedNoticeOptions,
  assumedModelNotice,
  catalogModelsOf,
  catalogReady,
  lookupModel,
  ModelCatalog,
  modelInfo,
  newestCatalogModel,
  UNKNOWN_MODEL
} from "./catalog/model-catalog.js"
export type { CatalogEntry, ModelInfo } from "./catalog/model-info.js"

// config/: merged config and trust, paths, rules files (Config, Paths).
export {
  Config,
  type ConfigInfo,
  type ConfigShape,
  type ConfigTestInput,
  declineTrust,
  type IgnoredFile,
  isTrusted,
  loadConfig,
  trustDeclined,
  trustedFolders,
  trustProject,
  untrustProject
} from "./config/config.js"
export {
  type ConfigAdviceName,
  configAdvice,
  configAdviceExamples,
  renderSnippet
} from "./config/config-advice.js"
export type { ForeignFormat } from "./config/config-foreign.js"
export { ConfigError } from "./config/config-load.js"
export { opencodeCommands } from "./config/config-opencode.js"
export {
  McpServerConfig,
  PermissionActionConfig,
  PermissionConfig,
  ProviderConfig,
  ProviderType,
  permissionRules
} from "./config/config-schema.js"
export type { DroppedRule, UntrustedItem } from "./config/config-untrusted.js"
export { configDir, dataDir, type PathEnv, Paths, type PathsShape, resolvePaths } from "./config/paths.js"
export { escapingRealPath, startupRulesFiles } from "./config/rules-files.js"
export { sha1Hex } from "./config/sha1.js"
export { parseOnce } from "./config/zod-once.js"

// contracts/: the event Bus, the permission and snapshot contracts, rulesets and wildcards.
export { Bus } from "./contracts/bus.js"
export {
  denied,
  type PendingAsk,
  PermissionAction,
  type PermissionAsk,
  PermissionDefaults,
  PermissionDenied,
  type PermissionError,
  PermissionNext,
  PermissionRejected,
  type PermissionReply,
  type PermissionRequest,
  type ReplySource,
  Rule,
  type Ruleset,
  rejected
} from "./contracts/permission-next.js"
export {
  type Decision,
  decide,
  type EvaluateOptions,
  evaluate,
  IMPLICIT_SOURCE,
  implicitAsk,
  isImplicit,
  type PatternVerdict
} from "./contracts/permission-rules.js"
export { assembleRuleset, runRuleset } from "./contracts/permission-ruleset.js"
export { PROTECTED_PATHS, type ProtectedPath, protectedPathOf } from "./contracts/protected-paths.js"
export { type FileDiff, Snapshot, SnapshotError, type SnapshotPatch } from "./contracts/snapshot.js"
export { compilePattern, expandHome, isLiteralPattern, type Matcher, wildcardMatch } from "./contracts/wildcard.js"

// loop/: the agent loop's services (SessionPrompt, Processor, Retry, SystemPrompt, Question, Subagents).
export { type CompactInput, Compaction } from "./loop/compaction.js"
export { DoomLoopDetected, doomLoopReport } from "./loop/doom-loop.js"
export { type LoopLayers, loopLayer } from "./loop/loop-layer.js"
export { Processor } from "./loop/processor.js"
export { Question, type QuestionAnswers, QuestionDismissed } from "./loop/question.js"
export { Retry } from "./loop/retry.js"
export { type PromptError, SessionPrompt } from "./loop/session-prompt.js"
export { Step, type StepInput } from "./loop/step.js"
export { stepLimitError } from "./loop/step-limit.js"
export { type SubagentResult, Subagents } from "./loop/subagents.js"
export { SystemPrompt } from "./loop/system-prompt.js"
export { Title } from "./loop/title.js"
export { type ToolCall, type ToolOutcome, ToolRunner, type ToolStep, type ToolStepInput } from "./loop/tool-runner.js"

// plugin-host/: the author kit (definePlugin, Tool.define, defineAgent) and the host that runs plugins.
export { AgentDefinition, type AgentInfo, type AgentMode, defineAgent, resolveAgents } from "./plugin-host/agent.js"
export {
  type CommandExpansion,
  type ListedCommand,
  type ListedResource,
  PluginRequestError,
  UnknownCommand,
  UnknownResource
} from "./plugin-host/contributions.js"
export {
  definePlugin,
  type HookInput,
  type HookName,
  type HookOutput,
  type Hooks,
  isPlugin,
  type Plugin,
  type PluginClient,
  type PluginCommand,
  type PluginCommandArgument,
  type PluginContext,
  type PluginHooks,
  type PluginLogger,
  type PluginResource,
  type PluginResources,
  type PluginSetup
} from "./plugin-host/plugin.js"
export { type PluginEntry, sharePluginModules } from "./plugin-host/plugin-loader.js"
export { DEFAULT_HOOK_TIMEOUT_MS, LOG_REPEATS_EVENT, Plugins } from "./plugin-host/plugins.js"
export {
  type AnyTool,
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
  type ToolRunContext,
  type ToolTraits
} from "./plugin-host/tool.js"
export { truncationDir } from "./plugin-host/truncate.js"

// process/: running programs and git safely, and keeping secrets out of what they see.
export {
  CommandRunError,
  CommandRunner,
  childEnv,
  type RunProgramOptions,
  type RunProgramResult,
  runUnsandboxed,
  spawnProgram
} from "./process/command-runner.js"
export {
  GIT_SAFE_OPTIONS,
  GIT_SAFE_TRANSPORT,
  gitEnv,
  prepareSafeGit,
  type SafeGit,
  type SafeGitTarget
} from "./process/git-safe.js"
export { LAUNCHER_KEY_PATTERN, launcherKeys, takeLauncherKeys } from "./process/launcher-keys.js"
export { runSafeGit, type SafeGitRunOptions } from "./process/run-git.js"
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_RUN_TIMEOUT_MS,
  killProcessGroup,
  type ProcessResult,
  type RunProcessOptions,
  runProcess
} from "./process/run-process.js"
export {
  type MaskOptions,
  maskConfig,
  maskDeep,
  maskOf,
  maskSecrets,
  SecretMask,
  secretMasker
} from "./process/secret-mask.js"
export {
  MIN_CONTAINED_SECRET,
  PROVIDER_KEY_NAMES,
  SECRET_NAME,
  type SecretSources,
  scrubEnv,
  secretValues
} from "./process/secret-values.js"

// provider/: provider descriptors and their registry, stored keys, and the LLM service.
export { authFile, readAuthFile, removeKey, storedKeys, storeKey } from "./provider/auth-store.js"
export { closeMatches } from "./provider/close-match.js"
export {
  type ConfiguredProvider,
  configuredProviders,
  defaultCandidates,
  defaultModelOf,
  referencedProvider
} from "./provider/configured.js"
export type { DiscoveredModel, ProviderDescriptor, ProviderSettings } from "./provider/descriptor.js"
export { LLM, type LLMRequest, providerSetupHelp, streamWithModel } from "./provider/llm.js"
export { ModelNotFound, ProviderError, ProviderNotConfigured } from "./provider/provider-error.js"
export { ReasoningLevel } from "./provider/reasoning.js"
export { descriptorFor, descriptorOf, PROVIDER_TYPES, PROVIDERS } from "./provider/registry.js"
export { tokensFromUsage } from "./provider/usage.js"

// schema/: the message model and the event protocol (alone, without the loop: @lathe/core/schema).
export { type EventOf, LatheEvent, type LatheEventType, QuestionItem, SessionStatus } from "./schema/events.js"
export { ascendingId } from "./schema/id.js"
export { AssistantMessage, Message, MessageError, MessageWithParts, Session, UserMessage } from "./schema/message.js"
export {
  FilePart,
  Part,
  type PartOf,
  type PartType,
  PatchPart,
  ReasoningPart,
  StepFinishPart,
  StepStartPart,
  SubtaskPart,
  TextPart,
  Tokens,
  ToolPart,
  ToolState
} from "./schema/part.js"
export type { PromptPart } from "./schema/prompt-part.js"

// store/: the SessionStore contract, its SQLite and memory stores, sessions, undo and redo.
export { createSession, discardIfEmpty, sessionTree } from "./store/session.js"
export { INTERRUPTED_MESSAGE_ERROR, INTERRUPTED_TOOL_ERROR, recoverSession } from "./store/session-recover.js"
export {
  OtherWorkTree,
  RevertConflict,
  type RevertError,
  type RevertResult,
  redoSession,
  revertSession,
  undoSession,
  unrevertSession
} from "./store/session-revert.js"
export {
  inTree,
  MessageNotFound,
  makeMemoryStore,
  messageNotFound,
  type SessionFilter,
  SessionNotFound,
  SessionStore,
  StoreError,
  sessionNotFound
} from "./store/session-store.js"
export { SqliteSessionStore } from "./store/session-store-sqlite.js"
export { listTurns, type SessionTurn } from "./store/session-turns.js"
export { type PutPartOptions, SessionWriter } from "./store/session-writer.js"
export {
  batchKey,
  makeWriteBehind,
  type WriteBatch,
  type WriteBehind,
  type WriteBehindOptions,
  type WriteOutcome
} from "./store/write-behind.js"
