import { spawn } from "node:child_process"

/** What a `!cmd` run produced. */
export interface ShellResult {
  readonly code: number
  /** stdout and stderr interleaved, cut to the last 200,000 characters. */
  readonly output: string
}

const LIMIT = 200_000

/**
 * Runs a command the person typed (`!cmd`) with `sh -c` in `cwd`, stdin closed, in its own process group; streams
 * its output to `onOutput` and kills the group after `timeoutMs` (default two minutes). Never rejects.
 */
export const runShell = (
  command: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  onOutput: (output: string) => void,
  timeoutMs = 120_000
): Promise<ShellResult> =>
  new Promise((resolve) => {
    let output = ""
    const child = spawn("sh", ["-c", command], {
      cwd,
      env: { ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    const append = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (output.length > LIMIT) output = output.slice(-LIMIT)
      onOutput(output)
    }
    child.stdout.on("data", append)
    child.stderr.on("data", append)
    const timer = setTimeout(() => {
      output += `\n(killed after ${Math.round(timeoutMs / 1000)} s)`
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }, timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      resolve({ code: 127, output: `${output}${error.message}` })
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? (signal ? 128 : 1), output })
    })
  })
