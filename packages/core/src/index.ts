/**
 * @lathe/core: Lathe's message model, service contracts, tool and plugin APIs.
 *
 * Plugin authors need only `definePlugin`, `Tool.define` and the types; test authors add `@lathe/core/testing`.
 */
export * from "./agent.js"
export * from "./bus.js"
export * from "./command-runner.js"
export * from "./compaction.js"
export * from "./config.js"
export { type ClaudePlaces, claudePathPatterns, type TranslatedPattern, translateClaudeRule } from "./config-claude.js"
export type { ForeignFormat } from "./config-foreign.js"
export { type OpencodeCommand, opencodeCommands, translateOpencode } from "./config-opencode.js"
export * from "./config-schema.js"
export * from "./doom-loop.js"
export * from "./events.js"
export * from "./git-safe.js"
export * from "./id.js"
export * from "./llm.js"
export * from "./message.js"
export * from "./model-catalog.js"
export * from "./model-messages.js"
export * from "./part.js"
export * from "./paths.js"
export * from "./permission-next.js"
export * from "./permission-rules.js"
export * from "./permission-ruleset.js"
export * from "./plugin.js"
export * from "./plugin-loader.js"
export * from "./plugins.js"
export * from "./processor.js"
export * from "./prompt-cache.js"
export * from "./prompts.js"
export * from "./protected-paths.js"
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
export * from "./provider/registry.js"
export * from "./provider-error.js"
export * from "./question.js"
export * from "./reasoning.js"
export * from "./retry.js"
export {
  escapingRealPath,
  ownRulesFiles,
  RULES_NAMES,
  type RulesLocations,
  startupRulesFiles
} from "./rules-files.js"
export * from "./secret-values.js"
export * from "./session.js"
export * from "./session-hooks.js"
export * from "./session-prompt.js"
export * from "./session-recover.js"
export * from "./session-revert.js"
export * from "./session-store.js"
export * from "./session-store-sqlite.js"
export * from "./session-turns.js"
export * from "./snapshot.js"
export * from "./step-limit.js"
export * from "./subagents.js"
export * from "./system-prompt.js"
export * from "./tool.js"
export * from "./truncate.js"
export * from "./usage.js"
export * from "./wildcard.js"
export * from "./zod-once.js"
