import { isAscii } from "node:buffer"
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { homedir } from "node:os"
import { basename, dirname, isAbsolute, join } from "node:path"
import vm from "node:vm"
import { startupMark } from "@lathe/core/startup-marks"
import { holdYoungHeap, withCacheFlags } from "./young-heap.js"

/**
 * Loads a CommonJS bundle through `vm.Script` with a V8 code cache taken after the run, so the cache holds every
 * function the run compiled. Node's own compile cache (`module.enableCompileCache`) is taken when a module is
 * compiled, before it runs: it holds the top-level code only, and every start compiles again each function start-up
 * and the loop call. With this one, `lathe run` reached its first request in ×0.79–0.82 of the time, with a median
 * step gap of ×0.73–0.85 (bench/loop.ts, same run).
 *
 * `keepCache()` asks for the cache to be written (atomically, at exit) when there was none or V8 rejected it (another
 * Node, another bundle: V8 checks the source and its flags); the caller calls it after a run worth remembering (a
 * turn that ran, not `--help`). It lives in a directory only this user can write, not in a shared temp dir: V8 runs
 * the bytecode it finds there. A cache that cannot be read or written is skipped; the bundle then runs as it would
 * without one. Until this user has one, the cache the install wrote beside the build is read (`INSTALLED_CACHE_DIR`:
 * as writable as the build itself, so it trusts nobody the build does not); one V8 accepts is not copied.
 *
 * The bundle's side packages (`./side-<name>.cjs` beside it: the OpenAI, Anthropic and MCP SDKs, see
 * `RUN_SIDE_PACKAGES` in scripts/bundle.mjs) are loaded the same way, each with a cache of its own, when the bundle
 * first requires one; `keepCache()` keeps theirs too. Through Node's `require` (whose compile cache holds top-level
 * code only) a warm run on Anthropic compiled the SDK's functions again every time: ~55 M instructions (+7 %) more than with
 * the SDK inside the bundle.
 */
export const loadWithCodeCache = (
  file: string,
  cacheDir: string | undefined
): { readonly exports: Record<string, unknown>; readonly keepCache: () => void } => {
  const sides = new Map<string, { readonly exports: Record<string, unknown>; readonly keepCache: () => void }>()
  const nodeRequire = createRequire(file)
  const require = Object.assign((id: string): unknown => {
    if (cacheDir === undefined || !SIDE_PACKAGE.test(id)) return nodeRequire(id)
    const path = join(dirname(file), id)
    let side = sides.get(path)
    if (side === undefined) {
      side = loadWithCodeCache(path, cacheDir)
      sides.set(path, side)
    }
    return side.exports
  }, nodeRequire) as NodeJS.Require
  const name = cacheDir === undefined ? undefined : cacheName(file)
  const cacheFile = cacheDir === undefined || name === undefined ? undefined : join(cacheDir, name)
  // This user's cache, else the one the install wrote beside the build (`bin/warm-cache.js`, npm's postinstall): the
  // first run after installing starts warm. That one is as trusted as the build beside it, and only read here.
  const installedFile = name === undefined ? undefined : join(dirname(file), INSTALLED_CACHE_DIR, name)
  const { source, cachedData } = readSourceAndCache(file, [
    cacheFile,
    installedFile === cacheFile ? undefined : installedFile
  ])
  startupMark(`${basename(file)} read`)
  silenceLoaderWarning()
  const wrapped = source.startsWith(COMMONJS_WRAPPER_OPEN) ? source : `${COMMONJS_WRAPPER_OPEN}${source}\n})`
  // With V8's flags as the cache was written (the young generation's hold changes one of them while Lathe runs).
  const script = withCacheFlags(
    () =>
      new vm.Script(wrapped, {
        filename: file,
        ...(cachedData === undefined ? {} : { cachedData }),
        // `import()` inside the bundle (plugin files, external packages) goes to Node's own ES module loader.
        importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
      })
  )
  startupMark(`${basename(file)} compiled`)
  // Deserialising the cache and running the build are where start-up grows the young generation: checked after each.
  holdYoungHeap()
  let keep = cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true)
  const keepCache = () => {
    for (const side of sides.values()) side.keepCache()
    if (!keep || cacheFile === undefined) return
    keep = false
    process.once("exit", () => writeCache(cacheFile, script))
  }
  const module = { exports: {} as Record<string, unknown> }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string
  ) => void
  withoutPositionsInProbes(() => wrapper(module.exports, require, module, file, dirname(file)))
  holdYoungHeap()
  return { exports: module.exports, keepCache }
}

/**
 * The start of the function Node's CommonJS loader puts around a file. The run build is written inside it
 * (`RUN_WRAPPER_OPEN` in scripts/bundle.mjs) and compiled as read; any other file is wrapped here. Wrapping run.cjs
 * here, as before, made V8 flatten the template into a second copy of its 2.2 MB source at every start, kept in the
 * old generation until a mark-compact.
 */
export const COMMONJS_WRAPPER_OPEN = "(function (exports, require, module, __filename, __dirname) {"

/**
 * The folder beside a build where the install's warm-up (`bin/warm-cache.js`) writes its cache: read when this user's
 * cache folder has none for the build.
 */
export const INSTALLED_CACHE_DIR = "code-cache"

/**
 * A bundle's source (as text) and the first of `caches` that can be read (its bytes), read through one buffer: the
 * cache goes into the pages the source was read into. Each first touch of a page costs start-up a page fault (~16 µs
 * on the 2-core machines CI runs on: more than copying it); read apart, the run build's source and its cache took
 * ~1,000 fresh pages more. An ASCII source (esbuild's output) becomes a string with one copy, outside the JavaScript
 * heap (Node makes large Latin-1 strings external); any other is decoded as UTF-8.
 */
const readSourceAndCache = (
  file: string,
  caches: ReadonlyArray<string | undefined>
): { readonly source: string; readonly cachedData: Buffer | undefined } => {
  const sourceFd = openSync(file, "r")
  let cacheFd: number | undefined
  try {
    for (const cache of caches) {
      if (cache === undefined || cacheFd !== undefined) continue
      try {
        cacheFd = openSync(cache, "r")
      } catch {
        // none yet
      }
    }
    const sourceSize = fstatSync(sourceFd).size
    const cacheSize = cacheFd === undefined ? 0 : fstatSync(cacheFd).size
    const buffer = Buffer.allocUnsafeSlow(Math.max(sourceSize, cacheSize))
    const sourceBytes = buffer.subarray(0, readFully(sourceFd, buffer, sourceSize))
    const source = isAscii(sourceBytes) ? sourceBytes.toString("latin1") : sourceBytes.toString("utf8")
    if (cacheFd === undefined || cacheSize === 0) return { source, cachedData: undefined }
    try {
      return { source, cachedData: buffer.subarray(0, readFully(cacheFd, buffer, cacheSize)) }
    } catch {
      return { source, cachedData: undefined } // unreadable: compiled without it
    }
  } finally {
    closeSync(sourceFd)
    if (cacheFd !== undefined) closeSync(cacheFd)
  }
}

/** Reads up to `size` bytes of `fd` into the start of `buffer`: how many it read (fewer at the file's end). */
const readFully = (fd: number, buffer: Buffer, size: number): number => {
  let read = 0
  for (;;) {
    const got = readSync(fd, buffer, read, size - read, read)
    if (got === 0) return read
    read += got
    if (read === size) return read
  }
}

/** A side package of the run build, as its stand-in in run.cjs requires it. */
const SIDE_PACKAGE = /^\.\/side-[\w-]+\.cjs$/

let loaderWarningSilenced = false

/**
 * Keeps Node's one-time `ExperimentalWarning: vm.USE_MAIN_CONTEXT_DEFAULT_LOADER is an experimental feature` off the
 * person's terminal. It fires at the bundle's first `import()` (a plugin file, ripgrep) because of the loader chosen
 * above, the only one that works without `--experimental-vm-modules`; it says nothing a user can act on. Every other
 * warning, experimental or not, passes through as before.
 */
const silenceLoaderWarning = (): void => {
  if (loaderWarningSilenced) return
  loaderWarningSilenced = true
  const emit = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: Array<never>) => {
    const text = typeof warning === "string" ? warning : warning.message
    if (text.startsWith("vm.USE_MAIN_CONTEXT_DEFAULT_LOADER")) return
    return emit.call(process, warning, ...rest)
  }) as typeof process.emitWarning
}

/**
 * Runs `evaluate` (a bundle's top level) with stack probes printed without file positions. `effect` probes at load
 * how V8 prints a frame: two `new Error()`s, with no message and a stack of one or two frames, whose text it checks
 * for a function's or a property's name. V8's own printing puts each frame's position in that text, and the first
 * position asked for in a script makes V8 find every line end of the script: ~3.5 ms of every start for the 3 MB run
 * build. Here such an error prints the same frames minus their positions; every other error prints as it would.
 */
export const withoutPositionsInProbes = <A>(evaluate: () => A): A => {
  const previous = Error.prepareStackTrace
  Error.prepareStackTrace = (error: Error, frames: Array<NodeJS.CallSite>) => {
    if (frames.length <= 2 && error instanceof Error && error.message === "")
      return `${error}${frames.map((frame) => `\n    at ${frameWithoutPosition(frame)}`).join("")}`
    return previous ? previous(error, frames) : `${error}${frames.map((frame) => `\n    at ${frame}`).join("")}`
  }
  try {
    return evaluate()
  } finally {
    Error.prepareStackTrace = previous
  }
}

/**
 * A stack frame as V8 prints it (`Type.name [as property]`, `new Name`, `name`) without ` (file:line:column)`; a frame
 * with no name, which V8 prints as its position alone, is `<anonymous>`.
 */
export const frameWithoutPosition = (frame: NodeJS.CallSite): string => {
  const prefix = frame.isAsync() ? "async " : ""
  if (frame.isPromiseAll()) return `${prefix}Promise.all (index ${frame.getPromiseIndex()})`
  const name = frame.getFunctionName()
  if (frame.isConstructor()) return `${prefix}new ${name || "<anonymous>"}`
  if (frame.isToplevel()) return `${prefix}${name || "<anonymous>"}`
  const type = frame.getTypeName()
  const method = frame.getMethodName()
  if (!name) return `${prefix}${type ? `${type}.` : ""}${method ?? "<anonymous>"}`
  const typed = type && !name.startsWith(type) ? `${type}.` : ""
  const alias = method && !name.endsWith(`.${method}`) && name !== method ? ` [as ${method}]` : ""
  return `${prefix}${typed}${name}${alias}`
}

/**
 * Where the code caches go: `$LATHE_CODE_CACHE` (`off` turns them off), else next to Node's compile cache when
 * `NODE_COMPILE_CACHE` names one, else `$XDG_CACHE_HOME/lathe` or `~/.cache/lathe`.
 */
export const codeCacheDir = (env: NodeJS.ProcessEnv): string | undefined => {
  const explicit = env.LATHE_CODE_CACHE
  if (explicit === "off" || explicit === "0") return undefined
  if (explicit !== undefined && isAbsolute(explicit)) return explicit
  if (env.NODE_COMPILE_CACHE !== undefined && isAbsolute(env.NODE_COMPILE_CACHE))
    return join(env.NODE_COMPILE_CACHE, "lathe")
  const base =
    env.XDG_CACHE_HOME !== undefined && isAbsolute(env.XDG_CACHE_HOME)
      ? env.XDG_CACHE_HOME
      : join(env.HOME ?? homedir(), ".cache")
  return join(base, "lathe", "code-cache")
}

/**
 * One cache per bundle file: `<name>-<where>-<which>.v8cache`, where `<where>` stands for the file's path and
 * `<which>` for its size, mtime, the Node version and architecture. A new cache replaces only the caches of the same
 * path (earlier builds there), so two installed copies (a global one and a project's) keep a cache each.
 */
const cacheName = (file: string): string => {
  const info = statSync(file)
  const identity = [file, info.size, info.mtimeMs, process.version, process.arch].join("\0")
  return `${basename(file)}-${fnv1a64(file).slice(0, 8)}-${fnv1a64(identity)}.v8cache`
}

/**
 * The 64-bit FNV-1a hash of a string's UTF-16 code units, as 16 hex digits: enough to tell builds apart, and no
 * `node:crypto` (~5 ms to load) before the run build starts.
 */
export const fnv1a64 = (text: string): string => {
  let hash = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++)
    hash = ((hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn
  return hash.toString(16).padStart(16, "0")
}

const writeCache = (cacheFile: string, script: vm.Script): void => {
  const temporary = `${cacheFile}.${process.pid}.tmp`
  try {
    mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 })
    writeFileSync(
      temporary,
      withCacheFlags(() => script.createCachedData()),
      { mode: 0o600 }
    )
    renameSync(temporary, cacheFile)
    // The caches of earlier builds at the same path (an upgrade, a rebuild) will not be accepted again.
    const prefix = cacheFile.slice(0, cacheFile.lastIndexOf("-") + 1)
    for (const name of readdirSync(dirname(cacheFile))) {
      const other = join(dirname(cacheFile), name)
      if (other !== cacheFile && other.startsWith(prefix) && name.endsWith(".v8cache")) rmSync(other, { force: true })
    }
  } catch {
    // A read-only or full disk: the next run compiles as this one did.
  }
}
