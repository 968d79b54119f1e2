import { execFile } from "node:child_process"

/**
 * The git commands whose output start-up needs. The CLI's entry starts them before it loads the heavy modules
 * (`prefetchStartupGit`), so on a large repository `git status` (tens of milliseconds of stat calls) runs in another
 * process during module loading instead of after it; `Paths` and `SystemPrompt` then take the results (`gitOutput`).
 */
export const startupGitCommands = {
  /** The work tree's top (Paths). */
  toplevel: ["rev-parse", "--show-toplevel"],
  /** The root commits: the project's id (Paths). */
  rootCommits: ["rev-list", "--max-parents=0", "HEAD"],
  /** Branch and changed files in one process (the system prompt's environment). */
  status: ["status", "--porcelain=v2", "--branch", "--untracked-files=no"]
} as const

/** How long a git command may take before it counts as failed. */
const TIMEOUT_MS = 5_000

/** Shared by every copy of this module in a process: the CLI's entry and its `run` build each bundle one. */
const KEY = Symbol.for("@lathe/core/git-prefetch")
type Waiting = Map<string, Promise<string | undefined>>

const waiting = (): Waiting => {
  const global = globalThis as { [KEY]?: Waiting }
  const found = global[KEY]
  if (found !== undefined) return found
  const created: Waiting = new Map()
  global[KEY] = created
  return created
}

const keyOf = (cwd: string, args: ReadonlyArray<string>): string => [cwd, ...args].join("\0")

/** Runs git in `cwd`: its trimmed stdout, or undefined when git is missing, fails or times out. */
const run = (cwd: string, args: ReadonlyArray<string>): Promise<string | undefined> =>
  new Promise((done) => {
    execFile("git", [...args], { cwd, timeout: TIMEOUT_MS, windowsHide: true }, (error, stdout) =>
      done(error ? undefined : stdout.trim())
    )
  })

/** Starts `commands` in `cwd` now; a later `gitOutput` with the same directory and arguments takes the result. */
export const prefetchGit = (cwd: string, commands: ReadonlyArray<ReadonlyArray<string>>): void => {
  const map = waiting()
  for (const args of commands) {
    const key = keyOf(cwd, args)
    if (!map.has(key)) map.set(key, run(cwd, args))
  }
}

/** Starts every start-up git command in `cwd`. */
export const prefetchStartupGit = (cwd: string): void => prefetchGit(cwd, Object.values(startupGitCommands))

/**
 * The output of `git <args>` in `cwd`: a prefetched result when one is waiting (taken, so the next call runs git
 * afresh and never gets a stale answer), else a new run.
 */
export const gitOutput = (cwd: string, args: ReadonlyArray<string>): Promise<string | undefined> => {
  const map = waiting()
  const key = keyOf(cwd, args)
  const prefetched = map.get(key)
  if (prefetched === undefined) return run(cwd, args)
  map.delete(key)
  return prefetched
}
