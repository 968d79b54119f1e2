import { statSync } from "node:fs"
import { stat } from "node:fs/promises"
import { join, sep } from "node:path"
import { Tool, type ToolContext } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { displayPath, errorCode, locate, resolvePath } from "./paths.js"
import { COMMON_FLAGS, listingThreads, locateRipgrep, type RipgrepOption, runRipgrep } from "./ripgrep.js"
import { toolSchema } from "./tool-schemas.js"
import { globMatcher, walkFiles } from "./walker.js"

/** Most files `glob` lists. */
export const GLOB_LIMIT = 100

/** `glob` arguments. */
export const GlobInput = z.object({
  pattern: z.string().min(1).describe('The glob, e.g. "**/*.ts", "*.md" (any depth) or "src/**/test_*.py"'),
  path: z.string().optional().describe("The folder to search (default: the working directory)")
})
/** `glob` arguments, parsed. */
export type GlobInput = z.infer<typeof GlobInput>

/**
 * Resolves a search folder (or file), asks `external_directory` if its real location is outside, and checks it
 * exists. `patterns` name it as given and as it really is (see `Located`).
 */
export const searchRoot = async (ctx: ToolContext, path: string | undefined) => {
  const located = await locate(ctx, resolvePath(ctx, path ?? "."), "directory")
  const { path: dir, real } = located
  const info = await stat(real).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") throw new Error(`Path not found: ${dir}. Give an existing folder to search.`)
    throw error
  })
  return { ...located, dir, isFile: info.isFile() }
}

/** Sorts paths (absolute) newest first by mtime; files that vanished go last. */
export const byMtime = async (paths: ReadonlyArray<string>): Promise<Array<string>> => {
  const stamped = await Promise.all(
    paths.map(async (path) => ({
      path,
      mtime: await stat(path).then(
        (s) => s.mtimeMs,
        () => 0
      )
    }))
  )
  return stamped.sort((a, b) => b.mtime - a.mtime).map((s) => s.path)
}

/** A listed file and its mtime in nanoseconds; `undefined` when it could not be stat'ed (it vanished meanwhile). */
interface Stamped {
  readonly path: string
  readonly mtime: bigint | undefined
}

/** Whether a file (`path`, `mtime`) comes before `b`: newer first, unreadable files last, ties by path in code-unit order. */
const before = (path: string, mtime: bigint | undefined, b: Stamped): boolean => {
  if (mtime !== b.mtime) {
    if (mtime === undefined) return false
    if (b.mtime === undefined) return true
    return mtime > b.mtime
  }
  return path < b.path
}

/**
 * The `limit` newest of the files offered to `add`, and how many were offered. The order is total (mtime to
 * the nanosecond, newest first; files that vanished before their stat last; equal mtimes by path), so the
 * result does not depend on the order files arrive in — nor on how many threads rg walked with.
 * Each `add` is one synchronous stat (a few microseconds: cheaper than a promise per file) and, for the few
 * files that make the cut, a binary insertion into at most `limit` entries; nothing else is kept.
 */
export class NewestFiles {
  readonly #kept: Array<Stamped> = []
  readonly #prefix: string
  #total = 0

  /** @param base the folder the offered relative paths start from; `limit` a whole number, at least 1. */
  constructor(
    readonly base: string,
    readonly limit: number = GLOB_LIMIT
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`NewestFiles keeps at least 1 file, not ${limit}.`)
    this.#prefix = base.endsWith(sep) ? base : base + sep
  }

  /** Offers a file by its path relative to `base` (native separators, or `/` on POSIX). */
  add(path: string): void {
    this.#total++
    let mtime: bigint | undefined
    try {
      // Concatenation, not path.join: this runs once per listed file and the parts are already normal.
      mtime = statSync(this.#prefix + path, { bigint: true, throwIfNoEntry: false })?.mtimeNs
    } catch {
      mtime = undefined // EACCES, ELOOP, …: unreadable like a vanished file.
    }
    const kept = this.#kept
    if (kept.length === this.limit) {
      const last = kept[kept.length - 1] as Stamped
      if (!before(path, mtime, last)) return
      kept.pop()
    }
    let low = 0
    let high = kept.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (before(path, mtime, kept[mid] as Stamped)) high = mid
      else low = mid + 1
    }
    kept.splice(low, 0, { path, mtime })
  }

  /** How many files were offered. */
  get total(): number {
    return this.#total
  }

  /** The kept paths (as offered), newest first. */
  get paths(): Array<string> {
    return this.#kept.map((f) => f.path)
  }
}

/** Builds the `glob` tool: ripgrep's file listing (`.gitignore` honoured), newest first, capped at 100. */
export const createGlobTool = (options: { readonly ripgrep: RipgrepOption }) =>
  Tool.define("glob", {
    jsonSchema: toolSchema("glob"),
    description: loadDescription("glob"),
    parameters: GlobInput,
    mutates: false,
    execute: async (args, ctx) => {
      const root = await searchRoot(ctx, args.path)
      if (root.isFile) throw new Error(`${displayPath(ctx.root, root.dir)} is a file; glob searches a folder.`)
      await ctx.ask({ permission: "glob", patterns: [args.pattern], metadata: { path: root.dir } })
      const rg = await locateRipgrep(options.ripgrep)
      const newest = new NewestFiles(root.real)
      if (rg) {
        // No --sort: it would make rg walk and stat on one thread, one after the other. Instead rg walks (leaving
        // a core free) while each path is stat'ed here as it streams in; NewestFiles orders them exactly.
        const flags = ["--files", "--null", "--threads", String(listingThreads()), ...COMMON_FLAGS]
        const exit = await runRipgrep(
          rg,
          // `!.git` again after the pattern: a later --glob overrides an earlier one, so `*` would list .git/**.
          [...flags, "--glob", args.pattern, "--glob", "!.git"],
          root.real,
          ctx.abort,
          (path) => newest.add(path),
          "\0"
        )
        if (exit.code === 2 && exit.lines === 0)
          throw new Error(`Invalid glob "${args.pattern}": ${exit.stderr.trim()}`)
      } else {
        const match = globMatcher(args.pattern)
        for await (const file of walkFiles(root.real, ctx.abort)) if (match(file)) newest.add(file)
      }
      const total = newest.total
      const kept = newest.paths
      const shown = kept.map((path) => displayPath(ctx.directory, join(root.dir, path)))
      const note =
        total > kept.length
          ? `\n\n(Showing the ${kept.length} newest of ${total} files. Use a more specific pattern or path to see the rest.)`
          : ""
      return {
        title: args.pattern,
        output: total === 0 ? "No files found." : `${shown.join("\n")}${note}`,
        metadata: { count: total, truncated: total > kept.length, backend: rg ? "ripgrep" : "node" }
      }
    }
  })
