import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { LatheEvent } from "@lathe/plugin/schema"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

/** A throwaway project and home: the CLI reads config, data and trust only from inside it. */
export const sandbox = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-cli-"))
  const project = join(dir, "project")
  mkdirSync(project)
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(dir, "home"),
    LATHE_DATA_DIR: join(dir, "data"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "xdg-data"),
    // The model catalogue's daily refresh goes to a closed loopback port, never to the network.
    LATHE_MODELS_URL: "http://127.0.0.1:9/api.json",
    // Language servers are never installed from the npm registry (lsp.e2e.test.ts puts its own on PATH).
    LATHE_LSP_INSTALL: "0"
  }
  return { dir, project, env }
}

/** What a CLI run printed and how it ended. */
export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as one JSON event per line (for `--format json`); lines that are not JSON are skipped. */
  readonly events: ReadonlyArray<LatheEvent>
}

/** How {@link runProgram} runs a program. */
export interface RunOptions {
  readonly cwd: string
  readonly env: Record<string, string>
  readonly timeoutMs?: number
  /** Called once the process has started (e.g. to send it a signal later). */
  readonly onSpawn?: (child: ChildProcess) => void
  /** Written to the process's stdin (a pipe, then closed); without it stdin is empty. */
  readonly input?: string
}

/** Runs the real `lathe` CLI from source (tsx, `@lathe/source`), as a separate process. */
export const runLathe = (args: ReadonlyArray<string>, options: RunOptions): Promise<CliRun> =>
  runProgram(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin, ...args], options, "lathe")

/**
 * Runs `command args` with exactly `options.env`, collecting its output (stdout also as events, see {@link CliRun});
 * kills it and rejects after `timeoutMs` (30 s by default).
 */
export const runProgram = (
  command: string,
  args: ReadonlyArray<string>,
  options: RunOptions,
  label: string = command
): Promise<CliRun> =>
  new Promise((resolve, reject) => {
    const child =
      options.input === undefined
        ? spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
    if (options.input !== undefined) child.stdin?.end(options.input)
    options.onSpawn?.(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${label} ${args.join(" ")} timed out\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      const events: Array<LatheEvent> = []
      for (const line of stdout.split("\n")) {
        if (!line.startsWith("{")) continue
        try {
          events.push(JSON.parse(line) as LatheEvent)
        } catch {
          // not an event line
        }
      }
      resolve({ code, stdout, stderr, events })
    })
  })

/**
 * Runs `lathe` at a pseudo-terminal (util-linux `script`), as from a person's shell, and types `answer` (plus Enter)
 * once the output contains `prompt`. Resolves with everything the terminal showed and the exit code.
 */
export const runAtTerminal = (
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly env: Record<string, string>
    readonly prompt: string
    readonly answer: string
  }
): Promise<{ readonly code: number | null; readonly output: string }> =>
  new Promise((resolve, reject) => {
    const cli = [process.execPath, "--conditions=@lathe/source", "--import", tsx, bin, ...args]
    const child = spawn("script", ["-qec", cli.map((arg) => `'${arg}'`).join(" "), "/dev/null"], {
      cwd: options.cwd,
      env: { ...options.env, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    let answered = false
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (!answered && output.includes(options.prompt)) {
        answered = true
        child.stdin.write(`${options.answer}\r`)
      }
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`lathe ${args.join(" ")} at a terminal timed out; it showed:\n${output}`))
    }, 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
