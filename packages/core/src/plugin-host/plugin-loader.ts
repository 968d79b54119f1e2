import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import module from "node:module"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Plugin, PluginSetup } from "@lathe/plugin"
import { isPlugin } from "@lathe/plugin/host"
import { parse } from "jsonc-parser"
import type { ConfigSource } from "../config/config.js"
import type { PluginSpec } from "../config/config-schema.js"

/** One plugin to load: the plugin, and where it came from. */
export interface PluginEntry {
  readonly plugin: Plugin | PluginSetup
  /** Overrides the plugin's own name. */
  readonly name?: string
  /** Where it came from (a package name or file path), for messages. */
  readonly source?: string
  /** Options from config (`["name", { … }]`). */
  readonly options?: Readonly<Record<string, unknown>>
}

/** A plugin to load, before it is imported: what to import and where it was declared. */
export interface PluginReference {
  /** What the person wrote: a package name, a path, a `file://` URL. */
  readonly spec: string
  readonly options: Readonly<Record<string, unknown>>
  /** Where it was declared: the config file (or "config" when unknown), or the plugins folder it was found in. */
  readonly origin: string
  /** The folder relative paths are resolved against: the declaring file's folder (the project root for a project file). */
  readonly base: string
  /**
   * Whose it is. A "user" reference (the person's own config, `$LATHE_CONFIG`, their plugins folder) loads packages
   * only from `base`'s `node_modules` and Lathe's own install, never from inside the project; a "project" one (a
   * trusted project's config or `.lathe/plugins`) also from the project's `node_modules`. Default "user".
   */
  readonly scope?: "user" | "project"
}

/** A plugin that could not be loaded, with a hint for the person. */
export interface PluginLoadFailure {
  readonly name: string
  readonly source: string
  readonly message: string
}

const PLUGIN_FILE = /\.(ts|mts|js|mjs)$/

/** The `plugin` names a config file declares (read again here: the merged config no longer says which file). */
const declaredIn = (file: string): ReadonlyArray<string> => {
  try {
    const value: unknown = parse(readFileSync(file, "utf8"), [], { allowTrailingComma: true })
    const list = typeof value === "object" && value !== null ? (value as { plugin?: unknown }).plugin : undefined
    if (!Array.isArray(list)) return []
    return list.flatMap((spec: unknown) =>
      typeof spec === "string" ? [spec] : Array.isArray(spec) && typeof spec[0] === "string" ? [spec[0]] : []
    )
  } catch {
    return []
  }
}

/**
 * Where a config `plugin` entry comes from: the last trusted source that declares its name (a later entry replaces
 * an earlier one when configs merge). Untrusted sources never count (their `plugin` list was dropped). Unknown (no
 * sources, a name built by substitution) is the person's own config folder: never the project.
 */
const declaringSource = (
  name: string,
  sources: ReadonlyArray<ConfigSource>,
  dirs: { readonly root: string; readonly config: string }
): Pick<PluginReference, "origin" | "base" | "scope"> => {
  const found = [...sources]
    .reverse()
    .find((source) => source.trusted && source.scope !== "env" && declaredIn(source.file).includes(name))
  if (found === undefined) return { origin: "config", base: dirs.config, scope: "user" }
  if (found.scope === "project") return { origin: found.file, base: dirs.root, scope: "project" }
  return { origin: found.file, base: dirname(found.file), scope: "user" }
}

/**
 * The plugins to load after the built-ins, in order: the config `plugin` list, then every `.ts/.mts/.js/.mjs` file
 * of `<project>/.lathe/plugins/` (unless `projectFolder` is false: an untrusted project) and `<config dir>/plugins/`,
 * by name. Each config entry resolves where the file that declared it lives (`sources`, as `Config` loaded them):
 * relative paths against that file's folder (the project root for a project file), packages from that folder's
 * `node_modules` — the project's only for a project file, which exists only in a trusted project.
 */
export const pluginReferences = (
  specs: ReadonlyArray<PluginSpec>,
  dirs: {
    readonly root: string
    readonly config: string
    readonly projectFolder?: boolean
    readonly sources?: ReadonlyArray<ConfigSource>
  }
): Array<PluginReference> => {
  const fromConfig = specs.map((spec): PluginReference => {
    const [name, options] = typeof spec === "string" ? [spec, {}] : spec
    return { spec: name, options, ...declaringSource(name, dirs.sources ?? [], dirs) }
  })
  const folders: Array<readonly [string, "user" | "project"]> = [
    ...(dirs.projectFolder === false ? [] : [[join(dirs.root, ".lathe", "plugins"), "project"] as const]),
    [join(dirs.config, "plugins"), "user"]
  ]
  const fromFolders = folders.flatMap(([folder, scope]) => {
    if (!existsSync(folder)) return []
    return readdirSync(folder)
      .filter((file) => PLUGIN_FILE.test(file) && !file.endsWith(".d.ts"))
      .sort()
      .map((file): PluginReference => ({ spec: join(folder, file), options: {}, origin: folder, base: folder, scope }))
  })
  return [...fromConfig, ...fromFolders]
}

const isPath = (spec: string) => spec.startsWith(".") || isAbsolute(spec) || spec.startsWith("file:")

/** The entry file of an installed package: `exports` ("import", "default", "node"), else `module`/`main`. */
const packageEntry = (dir: string): string | undefined => {
  const manifest: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  if (typeof manifest !== "object" || manifest === null) return undefined
  const pick = (value: unknown): string | undefined => {
    if (typeof value === "string") return value
    if (typeof value !== "object" || value === null) return undefined
    const record = value as Record<string, unknown>
    for (const key of ["import", "node", "default"]) {
      const found = pick(record[key])
      if (found) return found
    }
    return undefined
  }
  const record = manifest as Record<string, unknown>
  const exports = record.exports
  const main =
    pick(
      typeof exports === "object" && exports !== null && "." in exports
        ? (exports as Record<string, unknown>)["."]
        : exports
    ) ??
    (typeof record.module === "string" ? record.module : undefined) ??
    (typeof record.main === "string" ? record.main : undefined) ??
    "index.js"
  const file = join(dir, main)
  return existsSync(file) ? file : undefined
}

/** True when `path` is `dir` or inside it. */
const within = (dir: string, path: string): boolean => {
  const rel = relative(dir, path)
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
}

/** The `node_modules` folders from `start` up to the filesystem root, nearest first. */
const upward = (start: string): Array<string> => {
  const out: Array<string> = []
  for (let dir = start; ; dir = dirname(dir)) {
    out.push(join(dir, "node_modules"))
    if (dirname(dir) === dir) return out
  }
}

/**
 * The `node_modules` folders of Lathe's own install, as Node resolves its own imports: upward from this module's
 * folder (the source tree, the CLI bundle's `dist/bundle`, or a global install's package folder).
 */
export const latheInstallFolders = (): ReadonlyArray<string> => {
  try {
    return upward(dirname(fileURLToPath(import.meta.url)))
  } catch {
    return []
  }
}

/** The entry of package `name` in the first of `folders` that has it. */
const findPackage = (name: string, folders: ReadonlyArray<string>): string | undefined => {
  for (const folder of folders) {
    const candidate = join(folder, name)
    if (existsSync(join(candidate, "package.json"))) return packageEntry(candidate)
  }
  return undefined
}

/**
 * The URL to import for a reference: a path or `file://` URL as is (relative to its base); a package from where the
 * reference's scope allows (see {@link PluginReference.scope}): a project reference from the project's `node_modules`
 * upward, then the config dir's and Lathe's install; a user reference from its base folder's `node_modules` (the
 * config dir's for the global config) and Lathe's install, skipping any folder inside the project `root`. Throws an
 * Error that says where it looked and how to install the package there.
 */
export const resolvePlugin = (reference: PluginReference, configDir: string, root?: string): string => {
  const { spec } = reference
  if (isPath(spec)) {
    const file = spec.startsWith("file:") ? fileURLToPath(spec) : resolve(reference.base, spec)
    if (!existsSync(file) || !statSync(file).isFile())
      throw new Error(
        `${file} does not exist. Fix the path in ${reference.origin === "config" ? "lathe.json" : reference.origin}.`
      )
    return pathToFileURL(file).href
  }
  const install = latheInstallFolders()
  const user = [join(reference.base, "node_modules"), join(configDir, "node_modules")]
  const folders =
    reference.scope === "project"
      ? [...upward(reference.base), ...user, ...install]
      : [...user, ...install].filter((folder) => root === undefined || !within(root, folder))
  const found = findPackage(spec, [...new Set(folders)])
  if (found) return pathToFileURL(found).href
  const home = reference.scope === "project" ? configDir : reference.base
  const where =
    reference.scope === "project"
      ? `the project (npm i -D ${spec}) or in ${configDir} (cd ${configDir} && npm i ${spec})`
      : `${home} (cd ${home} && npm i ${spec})`
  throw new Error(
    `the package ${spec} is not installed where ${reference.origin === "config" ? "your config" : reference.origin} ` +
      `can load it from: looked in ${[...new Set(folders)].slice(0, 3).join(", ")} and Lathe's own install. ` +
      `Install it in ${where}.` +
      (reference.scope === "project"
        ? ""
        : " A package in the project's node_modules is never loaded for your own config.")
  )
}

const SHARED = Symbol.for("@lathe/core/shared-modules")
let sharedInstalled = false
let sharedLoader: (() => Promise<SharedModules>) | undefined

/** Module namespaces by the specifier plugins import them as. */
export type SharedModules = Readonly<Record<string, Readonly<Record<string, unknown>>>>

/**
 * Makes plugins import the host's own copies of shared modules (`@lathe/core`, `zod`, …) whatever their location, so
 * a plugin file with no `node_modules` of its own works, and its tools and hooks use the same classes as the host.
 * Call once, before importing plugins, with the module namespaces to share, or with a function that loads them:
 * `importPlugins` calls it before the first plugin file it imports, so a run with no plugin file never builds them
 * (a namespace like `@lathe/core`'s initialises every module behind it).
 */
export const sharePluginModules = (modules: SharedModules | (() => Promise<SharedModules>)): void => {
  if (typeof modules === "function") {
    sharedLoader = modules
    return
  }
  sharedLoader = undefined
  ;(globalThis as Record<symbol, unknown>)[SHARED] = modules
  if (sharedInstalled || typeof module.registerHooks !== "function") return
  sharedInstalled = true
  module.registerHooks({
    resolve: (specifier, context, nextResolve) => {
      const shared = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[SHARED]
      if (shared && Object.hasOwn(shared, specifier))
        return { url: `lathe-shared:${encodeURIComponent(specifier)}`, shortCircuit: true, format: "module" }
      return nextResolve(specifier, context)
    },
    load: (url, context, nextLoad) => {
      if (!url.startsWith("lathe-shared:")) return nextLoad(url, context)
      const specifier = decodeURIComponent(url.slice("lathe-shared:".length))
      const namespace =
        (globalThis as Record<symbol, Record<string, Record<string, unknown>> | undefined>)[SHARED]?.[specifier] ?? {}
      // Bindings under string export names, so names that are reserved words (zod's `catch`) work too.
      const names = Object.keys(namespace).filter((name) => name !== "default")
      const source =
        `const m = globalThis[Symbol.for("@lathe/core/shared-modules")][${JSON.stringify(specifier)}];\n` +
        names.map((name, i) => `const e${i} = m[${JSON.stringify(name)}];`).join("\n") +
        `\nexport { ${names.map((name, i) => `e${i} as ${JSON.stringify(name)}`).join(", ")} };` +
        `\nexport default ("default" in m ? m.default : m);\n`
      return { format: "module", source, shortCircuit: true }
    }
  })
}

/**
 * What went wrong, for the person. For a syntax error, Node's `--check` of the file names the line (ESM import errors
 * do not), e.g. "Unexpected token ')' at /p/.lathe/plugins/x.mjs:2".
 */
const describeLoadError = (error: unknown, url: string | undefined): string => {
  if (!(error instanceof Error)) return String(error)
  if ((error.name === "SyntaxError" || /syntax/i.test(error.message)) && url?.startsWith("file:")) {
    const file = fileURLToPath(url)
    const check = spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: 5_000 })
    const where = check.stderr?.split("\n").find((line) => line.startsWith(file))
    if (where) return `${error.message} at ${where}`
  }
  return error.message
}

/** The shared modules of a `sharePluginModules` given a loader, loaded (once) and shared now. */
const sharedModulesReady = async (): Promise<void> => {
  const load = sharedLoader
  if (load === undefined) return
  const modules = await load()
  if (sharedLoader === load) sharePluginModules(modules)
}

/** A readable plugin name for a reference: the package name, or the file name. */
export const referenceName = (reference: PluginReference): string =>
  isPath(reference.spec) ? reference.spec.replace(/^.*[\\/]/, "").replace(PLUGIN_FILE, "") : reference.spec

/**
 * Imports the plugins of `references`, in order. A default export made with `definePlugin` is used as is; a plain
 * setup function, or an object with a `setup` function, is accepted too. What cannot be loaded is returned as a
 * failure (never thrown), so the session goes on without it.
 */
export const importPlugins = async (
  references: ReadonlyArray<PluginReference>,
  configDir: string,
  root?: string
): Promise<{ readonly entries: Array<PluginEntry>; readonly failures: Array<PluginLoadFailure> }> => {
  const entries: Array<PluginEntry> = []
  const failures: Array<PluginLoadFailure> = []
  for (const reference of references) {
    const name = referenceName(reference)
    const source = isPath(reference.spec) ? reference.spec : `${reference.spec} (package)`
    let url: string | undefined
    try {
      url = resolvePlugin(reference, configDir, root)
      await sharedModulesReady()
      const loaded: unknown = await import(url)
      const candidate =
        typeof loaded === "object" && loaded !== null && "default" in loaded ? loaded.default : undefined
      const plugin: Plugin | PluginSetup | undefined = isPlugin(candidate)
        ? candidate
        : typeof candidate === "function"
          ? (candidate as PluginSetup)
          : typeof candidate === "object" &&
              candidate !== null &&
              "setup" in candidate &&
              typeof candidate.setup === "function"
            ? (candidate.setup as PluginSetup)
            : undefined
      if (!plugin)
        throw new Error(
          "its default export is not a plugin: export default definePlugin(async (ctx) => ({ … })) from @lathe/plugin (or @lathe/core)."
        )
      entries.push({
        plugin,
        source,
        options: reference.options,
        ...(isPlugin(plugin) && plugin.name ? {} : { name })
      })
    } catch (error) {
      failures.push({
        name,
        source,
        message: `Plugin "${name}" (${source}) was not loaded: ${describeLoadError(error, url)}`
      })
    }
  }
  return { entries, failures }
}
