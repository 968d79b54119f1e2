import { stat } from "node:fs/promises"
import { Tool } from "@lathe/core"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { checkExternal, resolvePath } from "./paths.js"
import { runShell } from "./shell.js"

/** Default command timeout: 2 minutes. */
export const DEFAULT_TIMEOUT_MS = 2 * 60 * 1000
/** Longest timeout a call may ask for: 10 minutes. */
export const MAX_TIMEOUT_MS = 10 * 60 * 1000
/** The live preview in `metadata.output` keeps the last this many characters. */
export const PREVIEW_CHARS = 30_000
/** Live previews are published at most this often. */
const PREVIEW_INTERVAL_MS = 100

/** `bash` arguments. */
export const BashInput = z.object({
  command: z.string().min(1).describe("The command line to run"),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(`Milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS})`),
  workdir: z.string().optional().describe("The folder to run in (default: the working directory)"),
  description: z.string().min(1).describe("What the command does, in 5-10 words, e.g. 'Run the unit tests'")
})
/** `bash` arguments, parsed. */
export type BashInput = z.infer<typeof BashInput>

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`

/**
 * Builds the `bash` tool: asks `bash` with the raw command line (the permission layer analyses it), runs it
 * in its own process group with stdin closed, streams the output to `metadata.output`, and kills the whole
 * group on timeout or abort. A failing command is a normal result carrying its exit code, not an error.
 */
export const createBashTool = () =>
  Tool.define("bash", {
    description: loadDescription("bash"),
    parameters: BashInput,
    mutates: true,
    execute: async (args, ctx) => {
      const cwd = resolvePath(ctx, args.workdir ?? ".")
      const real = await checkExternal(ctx, cwd, "directory")
      const info = await stat(real).catch(() => undefined)
      if (!info?.isDirectory()) throw new Error(`workdir ${cwd} is not an existing folder.`)
      await ctx.ask({
        permission: "bash",
        patterns: [args.command],
        metadata: { command: args.command, description: args.description, workdir: cwd }
      })
      const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS
      let preview = ""
      let last = 0
      let pending: NodeJS.Timeout | undefined
      const publish = () => {
        pending = undefined
        last = performance.now()
        ctx.metadata({ metadata: { output: preview, description: args.description } })
      }
      const result = await runShell({
        command: args.command,
        cwd: real,
        timeoutMs,
        signal: ctx.abort,
        onOutput: (chunk) => {
          preview = (preview + chunk).slice(-PREVIEW_CHARS)
          if (pending) return
          const wait = PREVIEW_INTERVAL_MS - (performance.now() - last)
          if (wait <= 0) publish()
          else pending = setTimeout(publish, wait)
        }
      })
      if (pending) clearTimeout(pending)
      const notes: Array<string> = []
      if (result.overflowed) notes.push("Output beyond 32 MB was discarded.")
      if (result.timedOut)
        notes.push(`The command timed out after ${seconds(timeoutMs)} and was killed with its child processes.`)
      if (result.aborted) notes.push("The command was aborted and killed with its child processes.")
      const status =
        result.exitCode !== null ? `exit code ${result.exitCode}` : `killed by ${result.signal ?? "a signal"}`
      notes.push(`(${status}, ${seconds(result.durationMs)})`)
      const body = result.output === "" ? "(no output)" : result.output.replace(/\n$/, "")
      return {
        title: args.description,
        output: `${body}\n\n${notes.join("\n")}`,
        metadata: {
          description: args.description,
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          durationMs: result.durationMs
        }
      }
    }
  })
