/**
 * @lathe/lsp: language servers for the agent. After a successful `write`, `edit`, `multiedit` or `apply_patch` call
 * the touched files are synced to their language server (TypeScript/JavaScript, Python, Go, Rust, or one config
 * declares) and its errors are appended to the tool's result, so the model fixes its own mistakes in its next step;
 * `lsp_diagnostics`, `lsp_hover`, `lsp_definition`, `lsp_references` and `lsp_symbols` ask the servers directly.
 *
 * This module is light on purpose: the servers, the client and the rendering load on the first edit of a file a
 * server serves (or the first `lsp_*` call), so a run that edits nothing pays for none of it.
 *
 * ```json
 * { "lsp": { "warnings": true, "wait_ms": 3000, "deno": { "command": ["deno", "lsp"], "extensions": [".ts"] } } }
 * ```
 */
import { dirname, join } from "node:path"
import { definePlugin, defineTool, type Plugin, type PluginContext } from "@lathe/plugin"
import { z } from "zod"
import type { Engine } from "./engine.js"
import { LspOptions, type ServerDefinition, serverDefinitions, serverFor } from "./servers.js"
import { toolSchema } from "./tool-schemas.js"
import { EDIT_TOOLS, editedPaths } from "./touched.js"

export {
  BUILTIN_SERVERS,
  findServer,
  installDir,
  LspOptions,
  LspServerOptions,
  type ServerDefinition,
  serverDefinitions,
  serverFor
} from "./servers.js"
export { EDIT_TOOLS, editedPaths } from "./touched.js"

/** What a host gives {@link createLspPlugin} beyond the plugin context. */
export interface LspPluginOptions {
  /** Lathe's data folder: servers are installed under `<dataDir>/lsp` (default: the folder of `ctx.truncationDir`). */
  readonly dataDir?: string
  /** The environment servers start from, credentials removed (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The file `lathe lsp status` reads for the servers of one Lathe process and project. */
export const statusFile = (dataDir: string, projectID: string, pid: number = process.pid): string =>
  join(dataDir, "lsp", "status", `${projectID}-${pid}.json`)

/** Default settle wait after an edit, and the longer one for a server the edit starts. */
export const DEFAULT_WAIT_MS = 2000
const COLD_WAIT_MS = 10_000

/**
 * The servers as an untrusted project may run them: rust-analyzer without build scripts and proc macros, which are
 * the project's code.
 */
const narrowedForUntrusted = (server: ServerDefinition): ServerDefinition =>
  server.name === "rust-analyzer" && !server.configured
    ? {
        ...server,
        initialization: {
          ...server.initialization,
          cargo: { buildScripts: { enable: false } },
          procMacro: { enable: false }
        }
      }
    : server

const location = {
  filePath: z.string().min(1).describe("The file, absolute or relative to the working directory."),
  line: z.number().int().positive().describe("One-based line."),
  column: z.number().int().positive().describe("One-based column (character) on that line.")
}

/**
 * Builds the plugin; the default export is `createLspPlugin()`. An invalid `lsp` section makes setup fail with a
 * message naming the problem (the host reports it and goes on without the plugin).
 */
export const createLspPlugin = (dependencies: LspPluginOptions = {}): Plugin =>
  definePlugin({
    name: "@lathe/lsp",
    setup: (ctx: PluginContext) => {
      const parsed = LspOptions.safeParse(ctx.config.lsp ?? {})
      if (!parsed.success) throw new Error(`@lathe/lsp: invalid "lsp" config: ${z.prettifyError(parsed.error)}`)
      const settings = parsed.data
      const { servers: defined, problems } = serverDefinitions(settings)
      for (const problem of problems) ctx.log.warn(problem)
      const servers = ctx.trusted ? defined : defined.map(narrowedForUntrusted)
      const dataDir = dependencies.dataDir ?? dirname(ctx.truncationDir)
      const waitMs = settings.wait_ms ?? DEFAULT_WAIT_MS
      // Each hook has its own time limit; the edit's wait stays well inside it.
      const budget = Math.max(1000, ctx.hookTimeoutMs - 3000)
      // The edit that starts a server waits for its start, then for the project load: both inside the budget.
      const coldWaitMs = Math.min(Math.max(waitMs, COLD_WAIT_MS), Math.floor(budget / 2))

      let engine: Promise<Engine> | undefined
      const load = (): Promise<Engine> => {
        engine ??= import("./engine.js").then(({ createEngine }) =>
          createEngine({
            root: ctx.root,
            trusted: ctx.trusted,
            dataDir,
            env: dependencies.env ?? process.env,
            servers,
            // LATHE_LSP_INSTALL=0 turns installing off for a whole environment (CI, tests that must not reach npm).
            install:
              ctx.trusted && settings.install !== false && (dependencies.env ?? process.env).LATHE_LSP_INSTALL !== "0",
            secrets: ctx.secrets,
            secretNames: ctx.secretNames,
            inherit: ctx.config.shell?.env?.inherit ?? [],
            startTimeoutMs: Math.max(1000, Math.min(15_000, budget - coldWaitMs)),
            statusFile: statusFile(dataDir, ctx.projectID),
            log: (message) => ctx.log.warn(message),
            warnings: settings.warnings === true,
            waitMs: Math.min(waitMs, budget),
            coldWaitMs,
            maxDiagnostics: settings.max_diagnostics ?? 20
          })
        )
        return engine
      }

      const readOnly = { mutates: false } as const
      const tools = [
        defineTool("lsp_diagnostics", {
          jsonSchema: toolSchema("lsp_diagnostics"),
          ...readOnly,
          description:
            "Errors and warnings from the project's language servers (TypeScript, Python, Go, Rust…). With " +
            "filePath: that file's, fresh (the file is synced first). Without: every file the servers have open.",
          parameters: z.object({
            filePath: z.string().min(1).optional().describe("The file, absolute or relative to the working directory.")
          }),
          execute: async (args, tool) => {
            const output = await (await load()).diagnostics(args.filePath, tool.directory)
            return { title: args.filePath ?? "project", output }
          }
        }),
        defineTool("lsp_hover", {
          jsonSchema: toolSchema("lsp_hover"),
          ...readOnly,
          description: "The type and documentation of the symbol at a position, from the file's language server.",
          parameters: z.object(location),
          execute: async (args, tool) => ({
            title: `${args.filePath}:${args.line}:${args.column}`,
            output: await (await load()).hover(args.filePath, args.line, args.column, tool.directory)
          })
        }),
        defineTool("lsp_definition", {
          jsonSchema: toolSchema("lsp_definition"),
          ...readOnly,
          description: "Where the symbol at a position is defined (file:line:col and the line's text).",
          parameters: z.object(location),
          execute: async (args, tool) => ({
            title: `${args.filePath}:${args.line}:${args.column}`,
            output: await (await load()).definition(args.filePath, args.line, args.column, tool.directory)
          })
        }),
        defineTool("lsp_references", {
          jsonSchema: toolSchema("lsp_references"),
          ...readOnly,
          description: "Every use of the symbol at a position across the project (file:line:col and the line's text).",
          parameters: z.object(location),
          execute: async (args, tool) => ({
            title: `${args.filePath}:${args.line}:${args.column}`,
            output: await (await load()).references(args.filePath, args.line, args.column, tool.directory)
          })
        }),
        defineTool("lsp_symbols", {
          jsonSchema: toolSchema("lsp_symbols"),
          ...readOnly,
          description:
            "The symbols (classes, functions, variables…) of a file as an outline with lines, or with `query` and " +
            "no filePath, the project's symbols whose names match, from the running language servers.",
          parameters: z.object({
            filePath: z.string().min(1).optional().describe("The file to outline."),
            query: z
              .string()
              .optional()
              .describe("Without filePath: a name (or part of one) to search the project for.")
          }),
          execute: async (args, tool) => ({
            title: args.filePath ?? args.query ?? "symbols",
            output: await (await load()).symbols(args.filePath, args.query, tool.directory)
          })
        })
      ]

      return {
        tools,
        "tool.after": async (input, output) => {
          if (!EDIT_TOOLS.has(input.tool)) return
          // Only files some server serves load the engine: editing a README starts nothing.
          const paths = editedPaths(input.tool, input.args).filter((path) => serverFor(servers, path) !== undefined)
          if (paths.length === 0) return
          try {
            const text = await (await load()).afterEdit(paths, ctx.directory)
            if (text !== "") output.output = `${output.output}\n\n${text}`
          } catch (error) {
            // Diagnostics are a help, never a reason for an edit to fail.
            ctx.log.warn(`diagnostics skipped: ${error instanceof Error ? error.message : String(error)}`)
          }
        },
        dispose: async () => {
          if (engine) await (await engine).stop()
        }
      }
    }
  })

/** The plugin, with servers starting from `process.env`. */
export default createLspPlugin()
