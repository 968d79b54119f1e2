import { mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { AnyTool, PermissionRequest, ToolError, ToolOutput, ToolRunContext } from "@lathe/plugin"
import { Effect } from "effect"
import type { LocalServer } from "../src/servers.js"

const require = createRequire(import.meta.url)
const bin = (pkg: string) => join(dirname(require.resolve(`${pkg}/package.json`)), "dist", "index.js")

/** The everything server's entry (`node <it> stdio|streamableHttp`). */
export const everythingBin = bin("@modelcontextprotocol/server-everything")
/** The filesystem server's entry (`node <it> <allowed dir>`). */
export const filesystemBin = bin("@modelcontextprotocol/server-filesystem")

/** A fresh real temp dir. */
export const tempDir = (prefix = "lathe-mcp-"): string => realpathSync(mkdtempSync(join(tmpdir(), prefix)))

/** A local server running `node <args>`. */
export const nodeServer = (
  name: string,
  args: ReadonlyArray<string>,
  extra: Partial<LocalServer> = {}
): LocalServer => ({
  name,
  source: "test",
  enabled: true,
  timeout: 10_000,
  wait: false,
  type: "local",
  command: process.execPath,
  args: [...args],
  env: {},
  cwd: tempDir(),
  ...extra
})

/** What a tool call asked and reported while it ran. */
export interface CallRecord {
  readonly asks: Array<PermissionRequest>
  readonly progress: Array<Record<string, unknown>>
}

/** Runs a tool as the loop would (truncation into `truncationDir` when given); the record shows asks and progress. */
export const runTool = (
  tool: AnyTool,
  args: unknown,
  options: { readonly abort?: AbortSignal; readonly truncationDir?: string; readonly deny?: boolean } = {}
): {
  readonly record: CallRecord
  readonly result: Promise<ToolOutput>
  /** The call's failure (rejects when it succeeded). */
  readonly error: () => Promise<ToolError>
} => {
  const record: CallRecord = { asks: [], progress: [] }
  const root = tempDir()
  const ctx: ToolRunContext = {
    sessionID: "s1",
    messageID: "m1",
    callID: "c1",
    agent: "build",
    directory: root,
    root,
    abort: options.abort ?? new AbortController().signal,
    ask: async (request) => {
      record.asks.push(request)
      if (options.deny) throw new Error("denied by the test")
    },
    metadata: (update) => {
      if (update.metadata) record.progress.push(update.metadata)
    },
    ...(options.truncationDir
      ? {
          truncate: (output: string, name: string) =>
            Effect.sync(() => truncateAt(output, name, options.truncationDir ?? ""))
        }
      : {})
  }
  const run = tool.run(args, ctx)
  let started: Promise<ToolOutput> | undefined
  let flipped: Promise<ToolError> | undefined
  return {
    record,
    get result() {
      started ??= Effect.runPromise(run)
      return started
    },
    error: () => {
      flipped ??= Effect.runPromise(Effect.flip(run))
      return flipped
    }
  }
}

/**
 * A host's truncation, as the tests need it (the host's own is tested in core): past 2000 lines the text keeps its
 * first 2000 and the whole text is written to a file in `dir`.
 */
const truncateAt = (
  output: string,
  name: string,
  dir: string
): { content: string; truncated: boolean; outputPath?: string } => {
  const lines = output.split("\n")
  if (lines.length <= 2000) return { content: output, truncated: false }
  const outputPath = join(dir, `${name}-${Date.now()}.txt`)
  writeFileSync(outputPath, output)
  return {
    content: `${lines.slice(0, 2000).join("\n")}\n… (the whole output: ${outputPath})`,
    truncated: true,
    outputPath
  }
}
