import { lstatSync, readlinkSync, realpathSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import type { ToolContext } from "@lathe/plugin"
import { protectedPathOf } from "./protected-paths.js"

/** Most symlinks followed while resolving one path, as Linux's `MAXSYMLINKS`; past it the path is taken as is. */
const MAX_LINKS = 40

/**
 * A path argument made absolute: `~` and `~/…` are the user's home (as a shell reads them), other relative paths
 * are taken from the session's working directory, and `.`/`..` segments are folded. Nothing is resolved through
 * symlinks here; {@link realPathOf} does that.
 */
export const resolvePath = (ctx: Pick<ToolContext, "directory">, path: string, home: string = homedir()): string => {
  if (path === "~") return resolve(home)
  if (path.startsWith("~/")) return resolve(home, path.slice(2))
  return isAbsolute(path) ? resolve(path) : resolve(ctx.directory, path)
}

/** realpath(3) when the whole path exists (one syscall), else `undefined`. */
const existingRealPath = (path: string): string | undefined => {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}

/** `lstat` of a path, `undefined` when it does not exist (or cannot be reached). */
const lstatOrUndefined = (path: string) => {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/**
 * Walks `path` (absolute) one segment at a time the way the kernel does: a symlink met on the way, dangling ones
 * included, is replaced by its target (relative targets from the link's folder), `..` steps up from the real
 * folder reached so far, and segments past the first missing one are appended as they are.
 */
const walkReal = (path: string): string => {
  const pending = path.split(sep).filter(Boolean).reverse()
  let current: string = sep
  let links = 0
  let missing = false
  for (let segment = pending.pop(); segment !== undefined; segment = pending.pop()) {
    if (segment === ".") continue
    if (segment === "..") {
      current = dirname(current)
      continue
    }
    const next = join(current, segment)
    if (!missing && links < MAX_LINKS) {
      const info = lstatOrUndefined(next)
      if (info === undefined) missing = true
      else if (info.isSymbolicLink()) {
        links++
        const target = readlinkSync(next)
        if (isAbsolute(target)) current = sep
        pending.push(...target.split(sep).filter(Boolean).reverse())
        continue
      }
    }
    current = next
  }
  return current
}

/**
 * The real path of `path` (absolute) with every symlink resolved. When `path` (or part of it) does not exist yet,
 * the deepest existing ancestor is resolved and the missing rest appended, so a file about to be created is placed
 * where it will really land; a dangling symlink is followed to where its target would be created.
 */
export const realPathOf = async (path: string): Promise<string> => existingRealPath(path) ?? walkReal(resolve(path))
/** Whether `child` is `parent` or lies beneath it (both absolute). */
export const isWithin = (parent: string, child: string): boolean => {
  const rel = relative(parent, child)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

/** How a path is shown to the model and in permission patterns: relative to the root when inside it. */
export const displayPath = (root: string, path: string): string => {
  const rel = relative(root, path)
  return rel === "" ? "." : isWithin(root, path) ? rel : path
}

/**
 * Asks `external_directory` when the real location of `path` (symlinks resolved) is outside the project root.
 * The pattern is `<absolute real dir>/*`, where the dir is `path` itself when `kind` is "directory", else its
 * parent. Resolves with the real path; rejects with the permission error when refused.
 */
export const checkExternal = async (
  ctx: Pick<ToolContext, "root" | "ask">,
  path: string,
  kind: "file" | "directory"
): Promise<string> => (await locate(ctx, path, kind)).real

/** A file tool's path argument: as given and where it really is, with the permission patterns of both. */
export interface Located {
  /** The path as given, made absolute (see {@link resolvePath}); nothing resolved through symlinks. */
  readonly path: string
  /** `path` as shown to the model: relative to the root when inside it. */
  readonly label: string
  /** Where `path` really is, every symlink resolved as the kernel resolves it (see {@link realPathOf}). */
  readonly real: string
  /** `real` relative to the real root when inside it: the name bash's write checks use for the same file. */
  readonly realLabel: string
  /**
   * What a permission ask about this path matches rules against: `realLabel`, and `label` too when it differs. Each
   * pattern is its own check, so the strictest verdict wins (deny over ask over allow), and an "always" reply
   * remembers the patterns that asked (the real one whenever it asked).
   */
  readonly patterns: ReadonlyArray<string>
}

/**
 * Locates an already absolute `path` (see {@link resolvePath}) and asks `external_directory` when its real location
 * is outside the project root (see {@link checkExternal}). Rejects with the permission error when refused.
 */
export const locate = async (
  ctx: Pick<ToolContext, "root" | "ask">,
  path: string,
  kind: "file" | "directory"
): Promise<Located> => {
  const [realRoot, real] = await Promise.all([realPathOf(ctx.root), realPathOf(path)])
  const label = displayPath(resolve(ctx.root), path)
  const realLabel = displayPath(realRoot, real)
  const located = { path, label, real, realLabel, patterns: realLabel === label ? [label] : [realLabel, label] }
  if (isWithin(realRoot, real)) return located
  const dir = kind === "directory" ? real : dirname(real)
  const pattern = join(dir, "*")
  await ctx.ask({
    permission: "external_directory",
    patterns: [pattern],
    always: [pattern],
    metadata: { path, realPath: real, directory: dir }
  })
  return located
}

/**
 * Asks `protected_path` when a tool is about to change a protected path (`protectedPathOf`, `protected-paths.ts`: git's
 * control files, Lathe's and other agents' project config), judged on its real location (symlinks resolved, so a link
 * to `.git/config` is caught) and on the path as given (a link named `lathe.json` is what Lathe loads). The patterns
 * are those of the two that are protected, relative to the project; only a person may approve (`requiresPerson`).
 * Rejects when refused.
 */
export const checkProtected = async (
  ctx: Pick<ToolContext, "root" | "ask">,
  path: string,
  real: string,
  metadata: Readonly<Record<string, unknown>> = {}
): Promise<void> => {
  const realRoot = await realPathOf(ctx.root)
  const root = resolve(ctx.root)
  const found = [
    { entry: protectedPathOf(realRoot, real), pattern: displayPath(realRoot, real) },
    { entry: protectedPathOf(root, path), pattern: displayPath(root, path) }
  ].filter((hit) => hit.entry !== undefined)
  const first = found[0]
  if (!first?.entry) return
  const patterns = [...new Set(found.map((hit) => hit.pattern))]
  await ctx.ask({
    permission: "protected_path",
    patterns,
    always: patterns,
    requiresPerson: true,
    metadata: {
      ...metadata,
      path,
      realPath: real,
      protected: first.entry.path,
      what: first.entry.what,
      reason: `${first.pattern} is ${first.entry.what}. Only the user can approve changing it.`
    }
  })
}

/** The `code` of a failed fs call (e.g. `ENOENT`), if it has one. */
export const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined
