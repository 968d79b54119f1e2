import { realpathSync } from "node:fs"
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import type { ToolContext } from "@lathe/core"

/**
 * The OS's realpath(3): one syscall of a few microseconds, so it runs synchronously (the promise and callback forms
 * cost a thread-pool round trip, and `fs.promises.realpath` lstats every component).
 */
const realpath = async (path: string): Promise<string> => realpathSync.native(path)

/** A path argument made absolute: relative paths are taken from the session's working directory. */
export const resolvePath = (ctx: Pick<ToolContext, "directory">, path: string): string =>
  isAbsolute(path) ? resolve(path) : resolve(ctx.directory, path)

/**
 * The real path of `path` with symlinks resolved. When `path` (or part of it) does not exist yet, the deepest
 * existing ancestor is resolved and the missing rest appended, so a file about to be created is placed where
 * it will really land.
 */
export const realPathOf = async (path: string): Promise<string> => {
  const missing: Array<string> = []
  let current = path
  for (;;) {
    try {
      const real = await realpath(current)
      return missing.length === 0 ? real : join(real, ...missing.reverse())
    } catch {
      const parent = dirname(current)
      if (parent === current) return path
      missing.push(basename(current))
      current = parent
    }
  }
}

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
): Promise<string> => {
  const [realRoot, real] = await Promise.all([realPathOf(ctx.root), realPathOf(path)])
  if (isWithin(realRoot, real)) return real
  const dir = kind === "directory" ? real : dirname(real)
  const pattern = join(dir, "*")
  await ctx.ask({
    permission: "external_directory",
    patterns: [pattern],
    always: [pattern],
    metadata: { path, realPath: real, directory: dir }
  })
  return real
}

/** The `code` of a failed fs call (e.g. `ENOENT`), if it has one. */
export const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined
