/**
 * Which language servers exist, for which files, and where each one's program is: the built-in four, the servers
 * config declares (`lsp.<name>`), and the search (the project's `node_modules/.bin` when trusted, PATH, Lathe's own
 * install folder). Light: plain data and file checks, loaded by `lathe lsp status` as well as by the plugin.
 */
import { accessSync, constants } from "node:fs"
import { delimiter, extname, isAbsolute, join, resolve } from "node:path"
import { z } from "zod"

/** A server as config declares it (`lsp.<name>`); a built-in's name changes that server. */
export const LspServerOptions = z
  .object({
    /** The program and its arguments (default for a built-in: its own). */
    command: z.array(z.string().min(1)).min(1).optional(),
    /** The file extensions it serves (`.ts` or `ts`). */
    extensions: z.array(z.string().min(1)).optional(),
    /** Variables set for it (on top of Lathe's environment without credentials). */
    env: z.record(z.string(), z.string()).optional(),
    /** `initializationOptions`, and the settings answered to `workspace/configuration`. */
    initialization: z.record(z.string(), z.unknown()).optional(),
    /** `true`: never start it. */
    disabled: z.boolean().optional()
  })
  .strict()
export type LspServerOptions = z.infer<typeof LspServerOptions>

/** The `lsp` section of config, as the plugin reads it. */
export const LspOptions = z
  .object({
    /** Install TypeScript's and Python's servers into Lathe's data folder when missing (default: trusted projects). */
    install: z.boolean().optional(),
    /** Append warnings too, not only errors (default false). */
    warnings: z.boolean().optional(),
    /** How long an edit waits for diagnostics to settle, in ms (default 2000). */
    wait_ms: z.number().int().positive().max(60_000).optional(),
    /** The most diagnostics appended per file (default 20). */
    max_diagnostics: z.number().int().positive().max(500).optional()
  })
  .catchall(z.union([LspServerOptions, z.literal(false)]))
export type LspOptions = z.infer<typeof LspOptions>

/** The keys of the `lsp` section that are settings, not servers. */
export const SETTING_KEYS: ReadonlySet<string> = new Set(["install", "warnings", "wait_ms", "max_diagnostics"])

/** A server Lathe knows how to start. */
export interface ServerDefinition {
  readonly name: string
  /** The program's name, searched for, and its arguments. */
  readonly command: ReadonlyArray<string>
  /** With leading dots, lower case. */
  readonly extensions: ReadonlyArray<string>
  /** npm packages that provide `command[0]` (`typescript-language-server` and `typescript`), when npm has it. */
  readonly npm?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly initialization?: Readonly<Record<string, unknown>>
  /** Declared in config (not a built-in). */
  readonly configured: boolean
}

/** The built-in servers. Versions pinned to a major: TypeScript 7 has no tsserver, which the TS server drives. */
export const BUILTIN_SERVERS: ReadonlyArray<ServerDefinition> = [
  {
    name: "typescript",
    command: ["typescript-language-server", "--stdio"],
    extensions: [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"],
    npm: ["typescript-language-server@6", "typescript@6"],
    configured: false
  },
  {
    name: "pyright",
    command: ["pyright-langserver", "--stdio"],
    extensions: [".py", ".pyi"],
    npm: ["pyright@1"],
    configured: false
  },
  { name: "gopls", command: ["gopls"], extensions: [".go"], configured: false },
  { name: "rust-analyzer", command: ["rust-analyzer"], extensions: [".rs"], configured: false }
]

const dotted = (ext: string): string => (ext.startsWith(".") ? ext : `.${ext}`).toLowerCase()

/**
 * The servers for this config: the built-ins changed by their `lsp.<name>` entries (`false` or `disabled` removes
 * one), then the servers config declares, in order. A declared server without `command` or `extensions` is left out
 * and named in `problems`.
 */
export const serverDefinitions = (
  options: LspOptions
): { readonly servers: ReadonlyArray<ServerDefinition>; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const entry = (name: string): LspServerOptions | false | undefined => {
    const value = (options as Record<string, unknown>)[name]
    return value === false ? false : (value as LspServerOptions | undefined)
  }
  const servers: Array<ServerDefinition> = []
  for (const builtin of BUILTIN_SERVERS) {
    const own = entry(builtin.name)
    if (own === false || own?.disabled) continue
    servers.push({
      ...builtin,
      ...(own?.command ? { command: own.command, npm: undefined } : {}),
      ...(own?.extensions ? { extensions: own.extensions.map(dotted) } : {}),
      ...(own?.env ? { env: own.env } : {}),
      ...(own?.initialization ? { initialization: own.initialization } : {})
    } as ServerDefinition)
  }
  for (const name of Object.keys(options)) {
    if (SETTING_KEYS.has(name) || BUILTIN_SERVERS.some((server) => server.name === name)) continue
    const own = entry(name)
    if (own === false || own === undefined || own.disabled) continue
    if (!own.command || !own.extensions || own.extensions.length === 0) {
      problems.push(`lsp.${name} needs "command" and "extensions"`)
      continue
    }
    servers.push({
      name,
      command: own.command,
      extensions: own.extensions.map(dotted),
      ...(own.env ? { env: own.env } : {}),
      ...(own.initialization ? { initialization: own.initialization } : {}),
      configured: true
    })
  }
  return { servers, problems }
}

/** The server for a file, by its extension (the first that serves it). */
export const serverFor = (servers: ReadonlyArray<ServerDefinition>, path: string): ServerDefinition | undefined => {
  const ext = extname(path).toLowerCase()
  return ext === "" ? undefined : servers.find((server) => server.extensions.includes(ext))
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Where a server's program was found. */
export type FoundIn = "path" | "project" | "installed" | "config"

/** Where Lathe installs a server it downloads: `<data dir>/lsp/<name>`. */
export const installDir = (dataDir: string, name: string): string => join(dataDir, "lsp", name)

/** Where to look, and what may be used. */
export interface SearchOptions {
  readonly root: string
  /** The project's `node_modules/.bin` is searched only then. */
  readonly trusted: boolean
  readonly dataDir: string
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * The program of a server: a path in `command[0]` as it is (relative to the project root); else a name searched in
 * the project's `node_modules/.bin` (trusted projects only), then PATH, then Lathe's install folder for it.
 */
export const findServer = (
  server: ServerDefinition,
  options: SearchOptions
): { readonly path: string; readonly foundIn: FoundIn } | undefined => {
  const program = server.command[0] ?? ""
  if (program.includes("/") || program.includes("\\")) {
    const path = isAbsolute(program) ? program : resolve(options.root, program)
    return executable(path) ? { path, foundIn: "config" } : undefined
  }
  const candidates: Array<readonly [string, FoundIn]> = [
    ...(options.trusted ? [[join(options.root, "node_modules", ".bin"), "project"] as const] : []),
    ...(options.env.PATH ?? "")
      .split(delimiter)
      .filter((dir) => dir !== "")
      .map((dir) => [dir, "path"] as const),
    [join(installDir(options.dataDir, server.name), "node_modules", ".bin"), "installed"]
  ]
  for (const [dir, foundIn] of candidates) {
    const path = join(dir, program)
    if (executable(path)) return { path, foundIn }
  }
  return undefined
}
