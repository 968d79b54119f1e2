import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { createSession, SessionPrompt, SessionStore } from "@lathe/core"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { definePlugin, type PluginContext, Tool } from "@lathe/plugin"
import { Effect, Layer } from "effect"
import { z } from "zod"
import { workspacePlugin } from "../src/plugin.js"
import { WorkspaceLog } from "../src/workspace-log.js"
import { MemoryWorkspaceLog } from "../src/workspace-log-memory.js"
import { Workspaces } from "../src/workspaces.js"
import { sourceRepo, tempDir } from "./helpers.js"

const usage = { input: 10, output: 5 }
const src = sourceRepo()

/** Tools that write into the session's checkout; `read` writes too, so a checkpoint after it would show. */
const toolsFor = (workspaces: Workspaces["Service"]) => {
  const write = (sessionID: string, path: string, content: string) => {
    const dir = workspaces.directory(sessionID)
    if (!dir) throw new Error(`no workspace for ${sessionID}`)
    writeFileSync(join(dir, path), content)
  }
  return [
    Tool.define("edit", {
      description: "Writes a file in the workspace",
      parameters: z.object({ path: z.string(), content: z.string() }),
      mutates: true,
      execute: async ({ path, content }, ctx) => {
        write(ctx.sessionID, path, content)
        return { title: path, output: `wrote ${path}` }
      }
    }),
    Tool.define("read", {
      description: "Reads a file (and, in this test only, leaves a trace a checkpoint would record)",
      parameters: z.object({ path: z.string() }),
      mutates: false,
      execute: async ({ path }, ctx) => {
        write(ctx.sessionID, "trace.txt", "read ran\n")
        return { title: path, output: "contents" }
      }
    })
  ]
}

describe("workspacePlugin", () => {
  it.live("checkpoints after an edit call, before its result is stored, and not after a read call", () =>
    Effect.gen(function* () {
      const workspaces = yield* Workspaces
      const log = yield* WorkspaceLog
      const turn = Effect.gen(function* () {
        const session = yield* createSession({ title: "workspace" })
        yield* workspaces.open(session.id, { repo: src.path })
        yield* (yield* SessionPrompt).prompt({
          sessionID: session.id,
          parts: [{ type: "text", text: "go" }],
          title: false
        })
        return { sessionID: session.id, messages: yield* (yield* SessionStore).messages(session.id) }
      }).pipe(
        Effect.provide(
          testLoopLayer({
            root: tempDir(),
            plugins: [
              definePlugin({ name: "tools", setup: () => ({ tools: toolsFor(workspaces) }) }),
              workspacePlugin(workspaces)
            ],
            steps: [
              [
                chunks.toolCall("c1", "edit", { path: "hello.txt", content: "hi\n" }),
                chunks.finish(usage, "tool-calls")
              ],
              [chunks.toolCall("c2", "read", { path: "hello.txt" }), chunks.finish(usage, "tool-calls")],
              [chunks.text("done"), chunks.finish(usage)]
            ]
          })
        )
      )
      const { sessionID, messages } = yield* turn
      const calls = messages.flatMap((m) => m.parts).filter((p) => p.type === "tool")
      const metadata = (tool: string) => {
        const part = calls.find((p) => p.tool === tool)
        return part?.state.status === "completed" ? part.state.metadata : undefined
      }
      assert.strictEqual(metadata("edit")?.checkpoint, 1, "the stored edit result already names its checkpoint")
      assert.strictEqual(metadata("read")?.checkpoint, undefined)
      assert.deepStrictEqual(yield* log.checkpoints(sessionID), [1])
      const diff = (yield* workspaces.diff(sessionID)) ?? ""
      assert.include(diff, "hello.txt")
      assert.notInclude(diff, "trace.txt")
    }).pipe(
      Effect.provide(
        Workspaces.layer({ root: tempDir("lathe-ws-runner-") }).pipe(Layer.provideMerge(MemoryWorkspaceLog.layer()))
      )
    )
  )

  it.live("sessions without a workspace on this runner are skipped without an error", () =>
    Effect.gen(function* () {
      const workspaces = yield* Workspaces
      const hooks = yield* Effect.promise(async () => workspacePlugin(workspaces).setup({} as PluginContext))
      const output = { title: "t", output: "o", metadata: {} }
      yield* Effect.promise(async () =>
        hooks["tool.after"]?.({ tool: "edit", sessionID: "ses_elsewhere", callID: "c1", args: {} }, output)
      )
      assert.deepStrictEqual(output.metadata, {})
      assert.strictEqual(yield* (yield* WorkspaceLog).latest("ses_elsewhere"), undefined)
    }).pipe(
      Effect.provide(
        Workspaces.layer({ root: tempDir("lathe-ws-runner-") }).pipe(Layer.provideMerge(MemoryWorkspaceLog.layer()))
      )
    )
  )
})
