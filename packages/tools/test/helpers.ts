import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import {
  type AnyTool,
  denied,
  type PermissionRequest,
  rejected,
  type ToolOutput,
  type ToolRunContext
} from "@lathe/plugin"
import { Effect } from "effect"
import { afterEach } from "vitest"

/** How the test `ask` answers: allow everything, deny by rule, or reject as a person would. */
export type AskMode = "allow" | "deny" | "reject"

/** A temp project and a tool context on it that records asks and metadata updates. */
export interface Harness {
  readonly root: string
  readonly asks: Array<PermissionRequest>
  readonly updates: Array<{ readonly title?: string; readonly metadata?: Record<string, unknown> }>
  readonly controller: AbortController
  /** Answer for asks; `answer` may choose per request. */
  mode: AskMode | ((request: PermissionRequest) => AskMode)
  readonly ctx: (overrides?: Partial<ToolRunContext>) => ToolRunContext
  /** Writes a file under the root (creating folders); returns its absolute path. */
  readonly write: (path: string, content: string | Buffer) => string
  readonly path: (path: string) => string
}

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temp dir (real path), removed after the test. */
export const tempDir = (prefix = "lathe-tools-"): string => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  dirs.push(dir)
  return dir
}

/** Builds a harness on a new temp project dir. */
export const harness = (sessionID = "ses_test"): Harness => {
  const root = tempDir()
  const asks: Array<PermissionRequest> = []
  const updates: Harness["updates"] = []
  const controller = new AbortController()
  const h: Harness = {
    root,
    asks,
    updates,
    controller,
    mode: "allow",
    ctx: (overrides = {}) => ({
      sessionID,
      messageID: "msg_1",
      callID: "call_1",
      agent: "build",
      directory: root,
      root,
      abort: controller.signal,
      ask: async (request) => {
        asks.push(request)
        const mode = typeof h.mode === "function" ? h.mode(request) : h.mode
        if (mode === "deny") throw denied(request.permission, request.patterns[0] ?? "*")
        if (mode === "reject") throw rejected(request.permission, request.patterns)
      },
      metadata: (update) => {
        updates.push(update)
      },
      ...overrides
    }),
    write: (path, content) => {
      const full = join(root, path)
      mkdirSync(dirname(full), { recursive: true })
      writeFileSync(full, content)
      return full
    },
    path: (path) => join(root, path)
  }
  return h
}

/** Runs a tool and returns its output (fails the test on error). */
export const run = (tool: AnyTool, args: unknown, ctx: ToolRunContext): Promise<ToolOutput> =>
  Effect.runPromise(tool.run(args, ctx))

/** Runs a tool expecting failure; returns the error's tag and the message the model sees. */
export const runError = async (
  tool: AnyTool,
  args: unknown,
  ctx: ToolRunContext
): Promise<{ readonly _tag: string; readonly message: string }> => {
  const error = await Effect.runPromise(Effect.flip(tool.run(args, ctx)))
  return { _tag: error._tag, message: error.message }
}
