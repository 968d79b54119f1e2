import { spawn } from "node:child_process"
import type { RunProgramResult } from "./plugin.js"

/** How {@link runProgram} runs a program. */
export interface StartProgramOptions {
  /** The working directory. */
  readonly cwd: string
  /** Exactly the environment it gets (give it `scrubEnv(process.env, { secrets: ctx.secrets }).env`). */
  readonly env: Readonly<Record<string, string>>
  /** Killed, with everything it started, after this long in ms (default two minutes). */
  readonly timeoutMs?: number
  /** Written to its stdin, which is then closed (default: stdin closed at once). */
  readonly input?: string
  /**
   * Keep its output (default true). Without it the program's stdout and stderr go nowhere, and the promise resolves
   * when it exits even if something it started in the background still holds them open.
   */
  readonly output?: boolean
}

const DEFAULT_TIMEOUT_MS = 120_000

/** Whether a process group still has a member (a zombie counts until its parent reaps it). */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Resolves once the killed group `pgid` has no member left, or after a quarter second: SIGKILL takes effect at once,
 * but a member whose new parent does not reap it (PID 1 of some containers) stays a zombie, which still counts.
 */
const groupGone = async (pgid: number): Promise<void> => {
  for (let waited = 0; groupAlive(pgid) && waited < 250; waited += 10)
    await new Promise((resolve) => setTimeout(resolve, 10))
}

/**
 * Runs a program you start yourself, outside `ctx.run` (no sandbox): no shell, in its own process group, so that at
 * the time limit the program and everything it started are killed together. Resolves when it exits, with its output
 * as text; a failing program resolves with its exit code, and the promise rejects only when the program cannot be
 * started at all. Programs the project could have put there (its `node_modules/.bin`, its scripts) belong in `ctx.run`.
 */
export const runProgram = (
  file: string,
  args: ReadonlyArray<string>,
  options: StartProgramOptions
): Promise<RunProgramResult> =>
  new Promise((resolve, reject) => {
    const group = process.platform !== "win32"
    const child = spawn(file, [...args], {
      cwd: options.cwd,
      env: options.env,
      detached: group,
      stdio: options.output === false ? ["pipe", "ignore", "ignore"] : ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    const timer = setTimeout(() => {
      timedOut = true
      try {
        if (child.pid !== undefined) process.kill(group ? -child.pid : child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // "close": its output is read to the end (without output, that is when it exits). A group killed at the time
    // limit is waited for, so that nothing it started outlives the result.
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer)
      const done = () => resolve({ exitCode, signal, stdout, stderr, timedOut })
      if (timedOut && group && child.pid !== undefined) groupGone(child.pid).then(done, done)
      else done()
    })
    child.stdin?.on("error", () => {})
    child.stdin?.end(options.input ?? "")
  })
