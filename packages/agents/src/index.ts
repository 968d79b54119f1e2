/**
 * @lathe/agents: Lathe's built-in agents (`build`, `plan`, `explore`, `general`, hidden `summary`) and the agents
 * people define in markdown files, contributed as a plugin (the default export; `@lathe/agents/plugin` is the same
 * plugin without this entry's markdown parser loaded up front).
 */
export * from "./builtin.js"
export * from "./compat.js"
export * from "./discover.js"
export * from "./markdown.js"
export * from "./plan-tools.js"
export { default } from "./plugin.js"
export * from "./prompts.js"
export * from "./task.js"
