import type { CommandSpec } from "../command-kit.js"

/**
 * Each command's spec, by the name it has in main.ts's table, loaded from the command's module: for `lathe
 * completion`, which writes every command's options into the script once (pressing Tab then loads nothing). A command
 * missing here still completes by name, without options (completion.e2e.test.ts checks none is missing).
 * `lathe completion` itself is not here: its module is the one that reads this.
 */
export const commandSpecs: Readonly<Record<string, () => Promise<CommandSpec>>> = {
  run: async () => (await import("./run.js")).runSpec,
  undo: async () => (await import("./undo.js")).undoSpec,
  redo: async () => (await import("./undo.js")).redoSpec,
  session: async () => (await import("./session.js")).sessionSpec,
  export: async () => (await import("./export.js")).exportSpec,
  import: async () => (await import("./export.js")).importSpec,
  serve: async () => (await import("./serve.js")).serveSpec,
  web: async () => (await import("./web.js")).webSpec,
  acp: async () => (await import("./acp.js")).acpSpec,
  runner: async () => (await import("./runner.js")).runnerSpec,
  cluster: async () => (await import("./cluster.js")).clusterSpec,
  models: async () => (await import("./models.js")).modelsSpec,
  auth: async () => (await import("./auth.js")).authSpec,
  agents: async () => (await import("./agents.js")).agentsSpec,
  plugin: async () => (await import("./plugin.js")).pluginSpec,
  mcp: async () => (await import("./mcp.js")).mcpSpec,
  lsp: async () => (await import("./lsp.js")).lspSpec,
  config: async () => (await import("./config.js")).configSpec,
  permissions: async () => (await import("./permissions.js")).permissionsSpec,
  doctor: async () => (await import("./doctor.js")).doctorSpec,
  trust: async () => (await import("./trust.js")).trustSpec,
  untrust: async () => (await import("./trust.js")).untrustSpec,
  github: async () => (await import("./github.js")).githubSpec
}

/** `lathe` itself: the interactive session's options. */
export const rootSpec = async (): Promise<CommandSpec> => (await import("./interactive.js")).interactiveSpec
