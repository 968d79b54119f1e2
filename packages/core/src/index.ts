/**
 * @lathe/core: Lathe's host: service contracts, the loop, the plugin host, the stores.
 *
 * Plugin authors import the author kit, `@lathe/plugin` (its `/schema` and `/host` entries), not this package; the
 * kit's names are not repeated here. Lathe's tests add `@lathe/core/testing`; the provider table and stored keys
 * (`lathe models`, `lathe auth`, `/connect`) are `@lathe/core/providers`.
 *
 * The list is deliberate, grouped by room (each `src/<room>/README.md` says what the room holds): a name is here
 * because another Lathe package or a documented API uses it; keep the entry under 150 names. Add a name with its
 * room's group; no `export *`.
 */

// catalog/: the models.dev catalogue: limits, prices and abilities per model (ModelCatalog).
export type { CatalogModel, CatalogProvider } from "./catalog/catalog-index.js"
export { groupDigits } from "./catalog/group-digits.js"
export {
  catalogModelsOf,
  catalogReady,
  lookupModel,
  ModelCatalog,
  newestCatalogModel
} from "./catalog/model-catalog.js"
export type { ModelInfo } from "./catalog/model-info.js"
// config/: merged config and trust, paths, rules files, and what in them is secret (Config, Paths, SecretMask).
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
export { configAdvice, renderSnippet } from "./config/config-advice.js"
export type { ForeignFormat } from "./config/config-foreign.js"
export { CONFIG_SCHEMA_URL, configJsonSchema } from "./config/config-json-schema.js"
export { ConfigError } from "./config/config-load.js"
export { opencodeCommands } from "./config/config-opencode.js"
export { McpServerConfig, ProviderConfig, ProviderType } from "./config/config-schema.js"
export type { DroppedRule, UntrustedItem } from "./config/config-untrusted.js"
export { configDir, dataDir, type PathEnv, Paths, type PathsShape, resolvePaths } from "./config/paths.js"
export { escapingRealPath, startupRulesFiles } from "./config/rules-files.js"
export { maskConfig, SecretMask, secretMasker } from "./config/secret-mask.js"
export { PROVIDER_KEY_NAMES, type SecretSources, scrubEnv, secretValues } from "./config/secret-values.js"
export { sha1Hex } from "./config/sha1.js"
// contracts/: the event Bus, the permission and snapshot contracts, protected paths.
export { Bus } from "./contracts/bus.js"
export {
  type PendingAsk,
  type PermissionAsk,
  PermissionDefaults,
  PermissionNext,
  type PermissionReply,
  type ReplySource
} from "./contracts/permission-next.js"
export { type FileDiff, Snapshot, SnapshotError, type SnapshotPatch } from "./contracts/snapshot.js"
// llm/: the LLM service, the providers a run has set up, usage and provider errors.
export {
  type ConfiguredProvider,
  configuredProviders,
  descriptorDefaultModel,
  referencedProvider
} from "./llm/configured.js"
export { LLM, type LLMRequest, providerSetupHelp, streamWithModel } from "./llm/llm.js"
export { ProviderNotConfigured } from "./llm/provider-error.js"
export { addTokens, tokensFromUsage } from "./llm/usage.js"
// loop/: the agent loop's services under one front door (TurnRunner), and the ruleset a run is asked under.
export { AgentSwitch, AgentSwitchRefused } from "./loop/agent-switch.js"
export { doomLoopReport } from "./loop/doom-loop.js"
export {
  jsonLogger,
  KEEP_LOG_FILES,
  type LogLevelName,
  type LogSettings,
  logSettingsFromEnv,
  MAX_LOG_FILE_BYTES
} from "./loop/log-file.js"
export { loggingBus } from "./loop/loop-log.js"
export { assembleRuleset, runRuleset } from "./loop/permission-ruleset.js"
export { Question } from "./loop/question.js"
export { Retry } from "./loop/retry.js"
export { SessionPrompt } from "./loop/session-prompt.js"
export { stepLimitError } from "./loop/step-limit.js"
export { compileOutputSchema, type OutputSchema } from "./loop/structured-output.js"
export { Subagents } from "./loop/subagents.js"
export {
  type ExpandedCommand,
  expandedCommand,
  mentionedResources,
  messageCommand,
  type SlashLine,
  slashLine,
  splitCommandWords
} from "./loop/turn-input.js"
export { TurnRunner } from "./loop/turn-runner.js"
// plugin-host/: the host that runs plugins: loader, Plugins, commands and resources, ctx.run, truncation, agents.
export { resolveAgents } from "./plugin-host/agent.js"
export { CommandRunError, CommandRunner, childEnv, spawnProgram } from "./plugin-host/command-runner.js"
export type { ListedCommand, ListedResource } from "./plugin-host/contributions.js"
export { HostSide } from "./plugin-host/host-side.js"
export { logText } from "./plugin-host/log-text.js"
export { type PluginEntry, sharePluginModules } from "./plugin-host/plugin-loader.js"
export { LOG_REPEATS_EVENT, Plugins } from "./plugin-host/plugins.js"
export { truncationDir } from "./plugin-host/truncate.js"
// process/: running programs and git safely (plain Node, no Effect).
export { GIT_SAFE_OPTIONS, GIT_SAFE_TRANSPORT, gitEnv, prepareSafeGit, type SafeGit } from "./process/git-safe.js"
export { launcherKeys } from "./process/launcher-keys.js"
export { type ProcessHelper, startProcessHelper } from "./process/process-helper.js"
export { afterNextRequestSent } from "./process/request-sent.js"
export { DEFAULT_RUN_TIMEOUT_MS, runProcess } from "./process/run-process.js"
// store/: the SessionStore contract, its SQLite and memory stores, the one write path, sessions, undo and redo.
export { createSession, discardIfEmpty, sessionTree } from "./store/session.js"
export { INTERRUPTED_MESSAGE_ERROR, INTERRUPTED_TOOL_ERROR, recoverSession } from "./store/session-recover.js"
export {
  OtherWorkTree,
  RevertConflict,
  type RevertError,
  type RevertResult,
  redoSession,
  undoSession
} from "./store/session-revert.js"
export {
  inTree,
  makeMemoryStore,
  messageNotFound,
  type SessionFilter,
  SessionNotFound,
  SessionStore,
  type SessionSummary,
  StoreError,
  sessionNotFound
} from "./store/session-store.js"
export { SqliteSessionStore } from "./store/session-store-sqlite.js"
export { sessionSummaries, summarizeMessages } from "./store/session-summary.js"
export { listTurns, type SessionTurn } from "./store/session-turns.js"
export { SessionWriter } from "./store/session-writer.js"
export { batchKey, makeWriteBehind, type WriteBatch, type WriteOutcome } from "./store/write-behind.js"
