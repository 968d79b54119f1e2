/**
 * @lathe/core/testing: the scripted model, the loop's test layers and the scripted servers (see `testing/README.md`).
 * The entry stays at `dist/testing.js`, where published installs and bundles have always found it.
 */
export * from "./testing/index.js"
// The host side of @lathe/plugin/testing's runPluginTurn, which imports this entry when an author's test runs a turn.
export { runPluginTurn } from "./testing/plugin-turn.js"
