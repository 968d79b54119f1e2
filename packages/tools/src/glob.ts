import { stat } from "node:fs/promises"
import { join } from "node:path"
import { Tool, type ToolContext } from "@lathe/core"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { checkExternal, displayPath, errorCode, resolvePath } from "./paths.js"
import { COMMON_FLAGS, locateRipgrep, type RipgrepOption, runRipgrep } from "./ripgrep.js"
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

/** Resolves a search folder, asks `external_directory` if it is outside, and checks it exists. */
export const searchRoot = async (ctx: ToolContext, path: string | undefined) => {
  const dir = resolvePath(ctx, path ?? ".")
  const real = await checkExternal(ctx, dir, "directory")
  const info = await stat(real).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") throw new Error(`Path not found: ${dir}. Give an existing folder to search.`)
    throw error
  })
  return { dir, real, isFile: info.isFile() }
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

/** Builds the `glob` tool: ripgrep's file listing (`.gitignore` honoured), newest first, capped at 100. */
export const createGlobTool = (options: { readonly ripgrep: RipgrepOption }) =>
  Tool.define("glob", {
    description: loadDescription("glob"),
    parameters: GlobInput,
    mutates: false,
    execute: async (args, ctx) => {
      const root = await searchRoot(ctx, args.path)
      if (root.isFile) throw new Error(`${displayPath(ctx.root, root.dir)} is a file; glob searches a folder.`)
      await ctx.ask({ permission: "glob", patterns: [args.pattern], metadata: { path: root.dir } })
      const rg = await locateRipgrep(options.ripgrep)
      const kept: Array<string> = []
      let total = 0
      if (rg) {
        const flags = ["--files", ...COMMON_FLAGS, "--glob", args.pattern, "--sortr", "modified"]
        const exit = await runRipgrep(rg, flags, root.real, ctx.abort, (line) => {
          if (kept.length < GLOB_LIMIT) kept.push(join(root.dir, line))
        })
        if (exit.code === 2 && exit.lines === 0)
          throw new Error(`Invalid glob "${args.pattern}": ${exit.stderr.trim()}`)
        total = exit.lines
      } else {
        const match = globMatcher(args.pattern)
        const found: Array<string> = []
        for await (const file of walkFiles(root.real, ctx.abort)) if (match(file)) found.push(join(root.dir, file))
        total = found.length
        kept.push(...(await byMtime(found)).slice(0, GLOB_LIMIT))
      }
      const shown = kept.map((path) => displayPath(ctx.directory, path))
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
