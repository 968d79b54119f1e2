import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { definePlugin, type Plugin, Tool } from "@lathe/plugin"
import { type PluginTurnStep, runPluginTurn } from "@lathe/plugin/testing"
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

/** A project and its person's home, and turns of the loop with the hooks plugin over a scripted model. */
export const hookLoop = (options: {
  readonly steps: ReadonlyArray<PluginTurnStep>
  /** Written to `~/.claude/settings.json`. */
  readonly personal?: unknown
  /** lathe.json `hooks`. */
  readonly hooks?: unknown
  readonly root?: string
}) => {
  const root = options.root ?? tempDir()
  const home = tempDir()
  if (options.personal !== undefined) writeJson(join(home, ".claude", "settings.json"), options.personal)
  /** Runs one prompt; `read` is what the model was given besides the system prompt (prompts, context, tool results). */
  const run = async (prompt: string) => {
    const turn = await runPluginTurn({
      root,
      home,
      configDir: tempDir(),
      plugins: [bashPlugin, createHooksPlugin()],
      config: options.hooks === undefined ? {} : { hooks: options.hooks },
      steps: options.steps,
      prompt
    })
    const read = [
      ...turn.messages.flatMap((message) => message.parts.flatMap((part) => (part.type === "text" ? [part.text] : []))),
      ...turn.toolResults.map((result) => result.output ?? result.error ?? "")
    ].join("\n")
    return { ...turn, read }
  }
  return { root, home, run }
}

/** A step calling bash with each command (ids `call_1`, `call_2`…), then a step that answers. */
export const bashSteps = (...commands: ReadonlyArray<string>): ReadonlyArray<PluginTurnStep> => [
  {
    steps: commands.map((command, index) => ({
      tool: "bash",
      id: `call_${index + 1}`,
      input: { command, description: "run" }
    }))
  },
  { steps: [{ text: "done" }] }
]
