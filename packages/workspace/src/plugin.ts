import { definePlugin, type Plugin } from "@lathe/plugin"
import { Effect } from "effect"
import type { Workspaces } from "./workspaces.js"

/**
 * Tools that never change files: calls to them are not checkpointed. The built-in read-only tools of
 * `@lathe/tools` plus common read-only names; any other tool (bash, edit, write, MCP tools, …) may change files.
 */
export const readOnlyTools: ReadonlySet<string> = new Set([
  "read",
  "list",
  "glob",
  "grep",
  "webfetch",
  "websearch",
  "question",
  "todowrite",
  "todoread",
  "skill",
  "task"
])

/** Options of `workspacePlugin`. */
export interface WorkspacePluginOptions {
  /** Tools whose calls are not checkpointed (default `readOnlyTools`). */
  readonly readOnly?: ReadonlySet<string>
}

/**
 * A plugin that checkpoints a session's workspace after every tool call that may change files, in `tool.after`,
 * so before the call's result is stored: a call whose result reached the session store has its edits in the log.
 * Sessions without a workspace open on this runner cost one map lookup. A failed checkpoint is reported by the
 * plugin host (the call's result is kept) and the next call's checkpoint records the changes again, cumulatively.
 */
export const workspacePlugin = (workspaces: Workspaces["Service"], options: WorkspacePluginOptions = {}): Plugin => {
  const readOnly = options.readOnly ?? readOnlyTools
  return definePlugin({
    name: "@lathe/workspace",
    setup: () => ({
      "tool.after": async (input, output) => {
        if (readOnly.has(input.tool) || workspaces.directory(input.sessionID) === undefined) return
        const result = await Effect.runPromise(workspaces.checkpoint(input.sessionID))
        if (result.recorded) output.metadata.checkpoint = result.checkpoint
      }
    })
  })
}
