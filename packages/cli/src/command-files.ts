import { definePlugin, type Plugin, type PluginCommand } from "@lathe/plugin"

/**
 * The built-in plugin that contributes the markdown command files (`.lathe/commands/*.md`, `.claude/commands`, the
 * OpenCode places, then the person's own; see `loadCustomCommands`) as commands. The files are read when commands are
 * first listed, never on a run that lists none (their parser loads then too); a broken file is warned about then. In
 * an untrusted project the project's commands run with the person's agent and model (their own are dropped, and said).
 */
export const commandFilesPlugin: Plugin = definePlugin({
  name: "command-files",
  setup: (ctx) => {
    let loaded: Promise<ReadonlyArray<PluginCommand>> | undefined
    const load = () => {
      loaded ??= import("./custom-commands.js").then(async ({ commandOfFile, loadCustomCommands }) => {
        const { commands, problems, ignored } = await loadCustomCommands(ctx.root, ctx.configDir, {
          trusted: ctx.trusted
        })
        for (const problem of problems) ctx.log.warn(problem)
        if (ignored !== undefined) ctx.log.warn(ignored)
        return commands.map(commandOfFile)
      })
      return loaded
    }
    return { commands: load }
  }
})
