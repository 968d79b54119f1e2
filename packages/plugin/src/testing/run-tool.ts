import { Effect } from "effect"
import type { PermissionRequest } from "../permission.js"
import type { AnyTool, ToolContext, ToolInfo, ToolOutput, ToolRunContext } from "../tool.js"

/** What `toolContext` builds from; every field has a default. */
export interface ToolContextOptions {
  /** The project root and working directory. Default `process.cwd()`. */
  readonly root?: string
  /** Default "test". */
  readonly sessionID?: string
  /** Default "build". */
  readonly agent?: string
  /** Answers `ctx.ask`: resolve to allow, reject to refuse. Default: every ask allowed. */
  readonly ask?: (request: PermissionRequest) => Promise<void>
  /** Receives `ctx.metadata` updates. Default: ignored. */
  readonly metadata?: ToolContext["metadata"]
  readonly question?: ToolContext["question"]
  readonly subagent?: ToolContext["subagent"]
  readonly switchAgent?: ToolContext["switchAgent"]
  readonly command?: ToolContext["command"]
  /** Aborts the call. Default: a signal that never fires. */
  readonly abort?: AbortSignal
}

let calls = 0

/** A tool context for calling a tool directly, without the loop (each call gets a new `callID`). */
export const toolContext = (options: ToolContextOptions = {}): ToolRunContext => {
  const root = options.root ?? process.cwd()
  calls += 1
  return {
    sessionID: options.sessionID ?? "test",
    messageID: "message_test",
    callID: `call_test_${calls}`,
    agent: options.agent ?? "build",
    directory: root,
    root,
    abort: options.abort ?? new AbortController().signal,
    ask: options.ask ?? (async () => {}),
    metadata: options.metadata ?? (() => {}),
    ...(options.question === undefined ? {} : { question: options.question }),
    ...(options.subagent === undefined ? {} : { subagent: options.subagent }),
    ...(options.switchAgent === undefined ? {} : { switchAgent: options.switchAgent }),
    ...(options.command === undefined ? {} : { command: options.command })
  }
}

/**
 * Runs a tool as the loop does (arguments validated, `execute` called, output truncated only when the host asks for
 * it) and resolves with its output; rejects with the tool error the model would read (`ToolInvalidArguments`,
 * `ToolExecutionError`, `ToolAborted`, `PermissionDenied`, `PermissionRejected`: check `_tag` and `message`).
 * ```ts
 * const out = await runTool(tools.find((t) => t.id === "shout")!, { text: "hi" }, { root: dir })
 * ```
 */
export const runTool = <Args>(
  tool: ToolInfo<Args> | AnyTool,
  args: unknown,
  context: ToolContextOptions | ToolRunContext = {}
): Promise<ToolOutput> => Effect.runPromise(tool.run(args, "callID" in context ? context : toolContext(context)))
