import { readFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { byMtime, searchRoot } from "./glob.js"
import { displayPath } from "./paths.js"
import { COMMON_FLAGS, locateRipgrep, type RipgrepOption, runRipgrep } from "./ripgrep.js"
import { toolSchema } from "./tool-schemas.js"
import { globMatcher, walkFiles } from "./walker.js"

/** Most matching lines `grep` returns. */
export const GREP_LIMIT = 100
/** Matching lines are cut to this many characters. */
export const GREP_LINE_LENGTH = 2000
const WALKER_MAX_FILE = 10 * 1024 * 1024

/** `grep` arguments. */
export const GrepInput = z.object({
  pattern: z.string().min(1).describe('A regular expression (Rust/PCRE-like syntax), e.g. "function\\s+\\w+"'),
  path: z.string().optional().describe("The folder or file to search (default: the working directory)"),
  include: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "*.{ts,tsx}"')
})
/** `grep` arguments, parsed. */
export type GrepInput = z.infer<typeof GrepInput>

interface Hit {
  readonly path: string
  readonly line: number
  readonly text: string
}

const cut = (text: string): string =>
  text.length > GREP_LINE_LENGTH ? `${text.slice(0, GREP_LINE_LENGTH)}... (line cut)` : text

const regexError = (pattern: string, detail: string): Error =>
  new Error(
    `Invalid regex pattern "${pattern}": ${detail}\nEscape characters that have a meaning in regular expressions ` +
      `(such as ( ) [ ] { } . * + ? | \\) with a backslash to search for them literally.`
  )

/** The Node fallback: a JavaScript regex over every non-binary file the walker lists. */
const walkGrep = async (
  dir: string,
  only: string | undefined,
  pattern: string,
  include: string | undefined,
  signal: AbortSignal
) => {
  let regex: RegExp
  try {
    // ripgrep's leading inline flags, e.g. (?i), become JavaScript flags.
    const inline = /^\(\?([ims]+)\)/.exec(pattern)
    regex = inline ? new RegExp(pattern.slice(inline[0].length), inline[1]) : new RegExp(pattern)
  } catch (error) {
    throw regexError(pattern, error instanceof Error ? error.message : String(error))
  }
  const match = include ? globMatcher(include) : () => true
  const hits = new Map<string, Array<Hit>>()
  const files = only ? [only] : []
  if (!only) for await (const file of walkFiles(dir, signal)) if (match(file)) files.push(file)
  for (const file of files) {
    const path = join(dir, file)
    const content = await readFile(path).catch(() => undefined)
    if (!content || content.length > WALKER_MAX_FILE || content.subarray(0, 8192).includes(0)) continue
    const found: Array<Hit> = []
    content
      .toString("utf8")
      .split(/\r?\n/)
      .forEach((text, i) => {
        if (regex.test(text)) found.push({ path, line: i + 1, text })
      })
    if (found.length > 0) hits.set(path, found)
  }
  return (await byMtime([...hits.keys()])).flatMap((path) => hits.get(path) ?? [])
}

/** Builds the `grep` tool: ripgrep content search, `.gitignore` honoured, files newest first, 100 matches. */
export const createGrepTool = (options: { readonly ripgrep: RipgrepOption }) =>
  Tool.define("grep", {
    jsonSchema: toolSchema("grep"),
    description: loadDescription("grep"),
    parameters: GrepInput,
    mutates: false,
    execute: async (args, ctx) => {
      const root = await searchRoot(ctx, args.path)
      // Searching one file shows its lines, so the read rules judge it too: by its path as given and its real path.
      if (root.isFile)
        await ctx.ask({
          permission: "read",
          patterns: root.patterns,
          metadata: { filepath: root.dir, realPath: root.real }
        })
      await ctx.ask({
        permission: "grep",
        patterns: [args.pattern],
        metadata: { path: root.dir, include: args.include }
      })
      const cwd = root.isFile ? dirname(root.real) : root.real
      const shownDir = root.isFile ? dirname(root.dir) : root.dir
      const only = root.isFile ? basename(root.real) : undefined
      const rg = await locateRipgrep(options.ripgrep)
      const kept: Array<Hit> = []
      let total = 0
      if (rg) {
        // No --sortr: rg stays parallel, and only files with matches are stat'ed for the newest-first order.
        const flags = ["-nH", "--no-heading", "--null", ...COMMON_FLAGS, "--regexp", args.pattern]
        if (args.include) flags.push("--glob", args.include)
        if (only) flags.push("--", only)
        const byFile = new Map<string, Array<Hit>>()
        const exit = await runRipgrep(rg, flags, cwd, ctx.abort, (line) => {
          const nul = line.indexOf("\0")
          const colon = line.indexOf(":", nul + 1)
          if (nul < 0 || colon < 0) return
          const path = join(shownDir, line.slice(0, nul))
          let hits = byFile.get(path)
          if (!hits) {
            hits = []
            byFile.set(path, hits)
          }
          // No file contributes more lines than are shown in total, so memory stays bounded per file.
          if (hits.length < GREP_LIMIT)
            hits.push({ path, line: Number(line.slice(nul + 1, colon)), text: line.slice(colon + 1) })
        })
        if (exit.code === 2 && exit.lines === 0) {
          const detail = exit.stderr.trim()
          if (/regex parse error|error parsing regex/i.test(detail)) throw regexError(args.pattern, detail)
          throw new Error(`grep failed: ${detail}`)
        }
        const files = await byMtime([...byFile.keys()])
        kept.push(...files.flatMap((file) => byFile.get(file) ?? []).slice(0, GREP_LIMIT))
        total = exit.lines
      } else {
        const hits = await walkGrep(cwd, only, args.pattern, args.include, ctx.abort)
        total = hits.length
        kept.push(
          ...hits.slice(0, GREP_LIMIT).map((hit) => ({ ...hit, path: join(shownDir, hit.path.slice(cwd.length + 1)) }))
        )
      }
      const lines = kept.map((hit) => `${displayPath(ctx.directory, hit.path)}:${hit.line}: ${cut(hit.text)}`)
      const note =
        total > kept.length
          ? `\n\n(Showing ${kept.length} of ${total} matches, newest files first. Narrow the pattern, path or include to see the rest.)`
          : ""
      return {
        title: args.pattern,
        output: total === 0 ? "No matches found." : `${lines.join("\n")}${note}`,
        metadata: { matches: total, truncated: total > kept.length, backend: rg ? "ripgrep" : "node" }
      }
    }
  })
