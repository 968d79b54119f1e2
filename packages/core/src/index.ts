/**
 * @lathe/core: Lathe's message model, service contracts, tool and plugin APIs.
 *
 * Plugin authors need only `definePlugin`, `Tool.define` and the types; test authors add `@lathe/core/testing`.
 */
export * from "./agent.js"
export * from "./bus.js"
export * from "./config.js"
export * from "./config-schema.js"
export * from "./events.js"
export * from "./llm.js"
export * from "./message.js"
export * from "./part.js"
export * from "./paths.js"
export * from "./permission-next.js"
export * from "./plugin.js"
export * from "./plugins.js"
export * from "./processor.js"
export * from "./retry.js"
export * from "./session-prompt.js"
export * from "./session-store.js"
export * from "./snapshot.js"
export * from "./system-prompt.js"
export * from "./tool.js"
export * from "./truncate.js"
