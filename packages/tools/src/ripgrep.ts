import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { access } from "node:fs/promises"
import { availableParallelism } from "node:os"
import { delimiter, join } from "node:path"

/**
 * Which ripgrep the search tools use: `"auto"` (the binary shipped in `@vscode/ripgrep`, else `rg` on PATH,
 * else none), `false` (never: always the pure-Node walker), or the path of an `rg` binary.
 */
export type RipgrepOption = "auto" | false | string

const executable = (path: string): Promise<boolean> =>
  access(path, constants.X_OK).then(
    () => true,
    () => false
  )

const findAuto = async (): Promise<string | undefined> => {
  try {
    const shipped = await import("@vscode/ripgrep")
    if (await executable(shipped.rgPath)) return shipped.rgPath
  } catch {
    // The platform package is missing (an unsupported OS or CPU): fall through to PATH.
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, process.platform === "win32" ? "rg.exe" : "rg")
    if (await executable(candidate)) return candidate
  }
  return undefined
}

let auto: Promise<string | undefined> | undefined

/** The rg binary to use for `option`, or undefined when the Node walker must do the work. Cached. */
export const locateRipgrep = (option: RipgrepOption): Promise<string | undefined> => {
  if (option === false) return Promise.resolve(undefined)
  if (option !== "auto") return Promise.resolve(option)
  auto ??= findAuto()
  return auto
}

/** Flags every search shares: hidden files yes, `.git` no, `.gitignore` honoured even outside a git repo. */
export const COMMON_FLAGS: ReadonlyArray<string> = [
  "--hidden",
  "--no-require-git",
  "--glob",
  "!.git",
  "--color",
  "never"
]

/**
 * Threads for an rg listing whose paths this process stats as they stream in: one core is left to that stat
 * loop, so the walk and the stats overlap instead of competing (on two cores `-j1` walks as fast as rg's
 * default and lets the stats hide behind the walk). At least 1, at most rg's own default ceiling of 12.
 */
export const listingThreads = (cores: number = availableParallelism()): number => Math.max(1, Math.min(12, cores - 1))

/** How an rg run ended: its exit code, stderr, and how many lines `onLine` saw. */
export interface RipgrepExit {
  readonly code: number | null
  readonly stderr: string
  readonly lines: number
}

/**
 * Runs rg in `cwd` and feeds each stdout record to `onLine`: a line, or with `terminator` "\0" a NUL-terminated
 * path (what `--files --null` prints, safe for names with newlines). Resolves when rg exits; kills rg when
 * `signal` aborts (resolving with what was seen so far). Exit code 1 means "nothing found", 2 an error (see stderr).
 */
export const runRipgrep = (
  rg: string,
  args: ReadonlyArray<string>,
  cwd: string,
  signal: AbortSignal,
  onLine: (line: string) => void,
  terminator: "\n" | "\0" = "\n"
): Promise<RipgrepExit> =>
  new Promise((resolve, reject) => {
    const child = spawn(rg, [...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    let lines = 0
    const kill = () => child.kill("SIGKILL")
    signal.addEventListener("abort", kill, { once: true })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 10_000) stderr += chunk
    })
    // Lines are split by hand: cheaper than readline for the tens of thousands of lines a big listing has.
    let rest = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      const parts = (rest + chunk).split(terminator)
      rest = parts.pop() ?? ""
      for (const line of parts) {
        lines++
        onLine(line)
      }
    })
    child.stdout.on("end", () => {
      if (rest !== "") {
        lines++
        onLine(rest)
      }
    })
    child.on("error", (error) => {
      signal.removeEventListener("abort", kill)
      reject(error)
    })
    child.on("close", (code) => {
      signal.removeEventListener("abort", kill)
      resolve({ code, stderr, lines })
    })
  })
