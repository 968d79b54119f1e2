import { readdir } from "node:fs/promises"
import { join, relative } from "node:path"
import { Tool } from "@lathe/plugin"
import picomatch from "picomatch"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { searchRoot } from "./glob.js"
import { displayPath } from "./paths.js"
import { toolSchema } from "./tool-schemas.js"

/** Most entries `list` shows. */
export const LIST_LIMIT = 100
/** Beyond the shown entries, `list` counts at most this many more before saying "more than". */
const COUNT_LIMIT = 10_000

/** Folders `list` skips unless asked for directly. */
export const DEFAULT_IGNORES: ReadonlyArray<string> = [
  "node_modules",
  ".git",
  "dist",
  "build",
  "out",
  "target",
  "vendor",
  "coverage",
  ".next",
  ".nuxt",
  ".turbo",
  ".nx",
  ".cache",
  ".venv",
  "venv",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".idea",
  ".vscode",
  ".DS_Store"
]

/** `list` arguments. */
export const ListInput = z.object({
  path: z.string().optional().describe("The folder to list (default: the working directory)"),
  ignore: z.array(z.string()).optional().describe('Extra globs to leave out, e.g. ["*.log", "fixtures/**"]')
})
/** `list` arguments, parsed. */
export type ListInput = z.infer<typeof ListInput>

interface Entry {
  readonly path: string
  readonly directory: boolean
}

/** Builds the `list` tool: a breadth-first tree view, default ignores, at most 100 entries. */
export const createListTool = () =>
  Tool.define("list", {
    jsonSchema: toolSchema("list"),
    description: loadDescription("list"),
    parameters: ListInput,
    mutates: false,
    execute: async (args, ctx) => {
      const root = await searchRoot(ctx, args.path)
      const label = displayPath(ctx.root, root.dir)
      if (root.isFile) throw new Error(`${label} is a file, not a folder. Use the read tool to see its content.`)
      await ctx.ask({ permission: "list", patterns: root.patterns, metadata: { path: root.dir, realPath: root.real } })
      const extra = (args.ignore ?? []).map((glob) => picomatch(glob, { dot: true, basename: !glob.includes("/") }))
      const skip = (rel: string, name: string) => DEFAULT_IGNORES.includes(name) || extra.some((m) => m(rel))
      const shown: Array<Entry> = []
      let hidden = 0
      const queue = [root.real]
      while (queue.length > 0 && hidden < COUNT_LIMIT && !ctx.abort.aborted) {
        const dir = queue.shift() ?? root.real
        const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
        entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name))
        for (const entry of entries) {
          const rel = relative(root.real, join(dir, entry.name)).split("\\").join("/")
          if (skip(rel, entry.name)) continue
          const directory = entry.isDirectory()
          if (directory) queue.push(join(dir, entry.name))
          if (shown.length < LIST_LIMIT) shown.push({ path: rel, directory })
          else hidden++
        }
      }
      shown.sort((a, b) => a.path.localeCompare(b.path))
      const lines = shown.map((entry) => {
        const parts = entry.path.split("/")
        return `${"  ".repeat(parts.length)}${parts[parts.length - 1]}${entry.directory ? "/" : ""}`
      })
      const more =
        hidden === 0
          ? ""
          : `\n\n(${hidden >= COUNT_LIMIT ? `More than ${COUNT_LIMIT}` : hidden} more entries not shown. ` +
            "List a subfolder, or use glob to find specific files.)"
      return {
        title: label,
        output: `${root.dir}/\n${lines.join("\n")}${shown.length === 0 ? "  (empty)" : ""}${more}`,
        metadata: { count: shown.length, hidden, truncated: hidden > 0 }
      }
    }
  })
