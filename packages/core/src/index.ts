/**
 * @lathe/core: Lathe's message model, service contracts, tool and plugin APIs.
 *
 * Plugin authors need only `definePlugin`, `Tool.define` and the types; test authors add `@lathe/core/testing`.
 */

export * from "./catalog/model-catalog.js"
export * from "./config/config.js"
export {
  type ClaudePlaces,
  claudePathPatterns,
  type TranslatedPattern,
  translateClaudeRule
} from "./config/config-claude.js"
export type { ForeignFormat } from "./config/config-foreign.js"
export { type OpencodeCommand, opencodeCommands, translateOpencode } from "./config/config-opencode.js"
export * from "./config/config-schema.js"
export * from "./config/paths.js"
export {
  escapingRealPath,
  ownRulesFiles,
  RULES_NAMES,
  type RulesLocations,
  startupRulesFiles
} from "./config/rules-files.js"
export * from "./config/zod-once.js"
export * from "./contracts/bus.js"
export * from "./contracts/permission-next.js"
export * from "./contracts/permission-rules.js"
export * from "./contracts/permission-ruleset.js"
export * from "./contracts/protected-paths.js"
export * from "./contracts/snapshot.js"
export * from "./contracts/wildcard.js"
export * from "./loop/compaction.js"
export * from "./loop/doom-loop.js"
export * from "./loop/processor.js"
export * from "./loop/prompts.js"
export * from "./loop/question.js"
export * from "./loop/retry.js"
export * from "./loop/session-hooks.js"
export * from "./loop/session-prompt.js"
export * from "./loop/step-limit.js"
export * from "./loop/subagents.js"
export * from "./loop/system-prompt.js"
export * from "./plugin-host/agent.js"
export * from "./plugin-host/plugin.js"
export * from "./plugin-host/plugin-loader.js"
export * from "./plugin-host/plugins.js"
export * from "./plugin-host/tool.js"
export * from "./plugin-host/truncate.js"
export * from "./process/command-runner.js"
export * from "./process/git-safe.js"
export * from "./process/secret-values.js"
export * from "./provider/auth-store.js"
export * from "./provider/close-match.js"
export * from "./provider/configured.js"
export type {
  CacheStrategy,
  DiscoveredModel,
  PromptFamily,
  ProviderDescriptor,
  ProviderOptions,
  ProviderSettings,
  ReasoningSetting,
  ReasoningTarget
} from "./provider/descriptor.js"
export { keyVariables } from "./provider/key-hint.js"
export * from "./provider/llm.js"
export * from "./provider/model-messages.js"
export * from "./provider/prompt-cache.js"
export * from "./provider/provider-error.js"
export * from "./provider/reasoning.js"
export * from "./provider/registry.js"
export * from "./provider/usage.js"
export * from "./schema/events.js"
export * from "./schema/id.js"
export * from "./schema/message.js"
export * from "./schema/part.js"
export * from "./store/session.js"
export * from "./store/session-recover.js"
export * from "./store/session-revert.js"
export * from "./store/session-store.js"
export * from "./store/session-store-sqlite.js"
export * from "./store/session-turns.js"
