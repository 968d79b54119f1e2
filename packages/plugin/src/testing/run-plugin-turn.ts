import type { PluginTurn, PluginTurnHost, PluginTurnOptions } from "./turn-types.js"

/**
 * Where the host's turn runner lives. Held in a variable so that neither the compiler nor the build graph follows it:
 * the kit stays below the host (nothing of the kit's own needs it), and an author's project resolves it at test time.
 */
const HOST_MODULE = "@lathe/core/testing"

/** Raised when `runPluginTurn` cannot find Lathe's host; the message says what to install. */
export class PluginTurnHostMissing extends Error {
  override readonly name = "PluginTurnHostMissing"
}

const isHost = (value: unknown): value is PluginTurnHost =>
  typeof value === "object" && value !== null && typeof (value as PluginTurnHost).runPluginTurn === "function"

const loadHost = async (): Promise<PluginTurnHost> => {
  let loaded: unknown
  try {
    loaded = await import(HOST_MODULE)
  } catch (error) {
    const missing = error instanceof Error && /Cannot find (package|module)|ERR_MODULE_NOT_FOUND/.test(error.message)
    if (!missing) throw error
    throw new PluginTurnHostMissing(
      "runPluginTurn runs a real turn of Lathe's loop, which needs Lathe's host: add `@lathe/core` to your " +
        "devDependencies (npm install -D @lathe/core). pluginContext, runTool, runCommand and readResource need only " +
        "@lathe/plugin."
    )
  }
  if (!isHost(loaded))
    throw new PluginTurnHostMissing(
      "The installed @lathe/core has no runPluginTurn: install a version of @lathe/core that matches @lathe/plugin."
    )
  return loaded
}

/**
 * Runs one real turn of Lathe's loop with `plugins` loaded and a scripted model: the prompt (or a plugin command's
 * prompt) is stored, the model's replies are played, tools run, hooks fire, and what happened comes back as plain
 * data: events, tool results, what the model was offered, the stored messages. Everything but the model is real (in
 * memory); permission asks are answered by `permission`; nothing needs Effect. Rejects when the turn fails (the script
 * ran out: "The scripted model has no step for call 3"); a hook that throws does not fail it (the host reports it as a
 * `plugin.error` event and goes on). Needs `@lathe/core` installed beside the kit (a dev dependency).
 * ```ts
 * const turn = await runPluginTurn({ plugins: [myPlugin], steps: [
 *   { steps: [{ tool: "shout", input: { text: "hi" } }] },
 *   { steps: [{ text: "Done." }] }
 * ] })
 * expect(turn.toolResults[0]?.output).toBe("HI")
 * ```
 */
export const runPluginTurn = async (options: PluginTurnOptions): Promise<PluginTurn> =>
  (await loadHost()).runPluginTurn(options)
