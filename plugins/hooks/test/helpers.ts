import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { type ConfigTestInput, createSession, SessionPrompt } from "@lathe/core"
import { Bus, ScriptedLLM, type ScriptedStep, SessionStore, testLoopLayer } from "@lathe/core/testing"
import { definePlugin, type LatheEvent, type Plugin, Tool } from "@lathe/plugin"
import { Effect, Fiber, Layer, Logger, Stream } from "effect"
import { z } from "zod"
import { createHooksPlugin } from "../src/index.js"

/** A fresh temp dir (real path, so paths in assertions match what the hooks see). */
export const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), "lathe-hooks-")))

/** Writes an executable shell script (the text after the `#!/bin/bash` line) and returns its path. */
export const script = (dir: string, name: string, body: string): string => {
  const path = join(dir, name)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `#!/bin/bash\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

/** Writes a JSON file, making its folder. */
export const writeJson = (path: string, value: unknown): void => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, JSON.stringify(value, null, 2))
}

/** Reads a JSON file a hook wrote. */
export const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>

/** A `bash` tool for the loop: runs the command with real bash in the project root. */
export const BashTool = Tool.define("bash", {
  description: "Run a shell command",
  parameters: z.object({ command: z.string(), description: z.string().optional() }),
  mutates: true,
  execute: async ({ command }, ctx) => {
    const output = execFileSync("bash", ["-c", command], { cwd: ctx.root, encoding: "utf8" })
    return { title: command, output: output || "(no output)" }
  }
})

/** A plugin that offers {@link BashTool}. */
export const bashPlugin: Plugin = definePlugin({ name: "test-bash", setup: () => ({ tools: [BashTool] }) })

/** One event's hooks in settings shape: `[{ matcher, hooks: [{ type: "command", command, timeout }] }]`. */
export const on = (
  matcher: string | undefined,
  ...commands: ReadonlyArray<string | { readonly command: string; readonly timeout: number }>
) => [
  {
    ...(matcher === undefined ? {} : { matcher }),
    hooks: commands.map((c) => (typeof c === "string" ? { type: "command", command: c } : { type: "command", ...c }))
  }
]

/** A project, its person's home and config dirs, and the loop with the hooks plugin over a scripted model. */
export const hookLoop = (options: {
  readonly steps: ReadonlyArray<ScriptedStep>
  /** Written to `~/.claude/settings.json`. */
  readonly personal?: unknown
  /** lathe.json `hooks`. */
  readonly hooks?: ConfigTestInput["hooks"]
  readonly root?: string
}) => {
  const root = options.root ?? tempDir()
  const paths = { config: tempDir(), home: tempDir(), data: tempDir() }
  if (options.personal !== undefined) writeJson(join(paths.home, ".claude", "settings.json"), options.personal)
  const logs: Array<string> = []
  const capture = Logger.make(({ message }) => {
    logs.push(String(Array.isArray(message) ? message[0] : message))
  })
  const layer = testLoopLayer({
    root,
    paths,
    plugins: [bashPlugin, createHooksPlugin()],
    config: options.hooks ? { hooks: options.hooks } : {},
    steps: options.steps
  }).pipe(Layer.provide(Logger.layer([capture])))
  return { root, paths, logs, layer }
}

/** Creates a session and runs one prompt in it; returns the events published until it was idle, and its messages. */
export const runTurn = (text: string) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const session = yield* createSession({ title: "test" })
    const collected = yield* (yield* bus.subscribe).pipe(
      Stream.takeUntil((event) => event.type === "session.idle"),
      Stream.runCollect,
      Effect.forkChild({ startImmediately: true })
    )
    yield* (yield* SessionPrompt).prompt({ sessionID: session.id, parts: [{ type: "text", text }], title: false })
    const events: ReadonlyArray<LatheEvent> = yield* Fiber.join(collected)
    const messages = yield* (yield* SessionStore).messages(session.id)
    const requests = yield* (yield* ScriptedLLM).requests
    return { sessionID: session.id, events, messages, requests: requests.map((request) => JSON.stringify(request)) }
  }).pipe(Effect.scoped)
