/**
 * The session `bench/loop.ts` measures and `bench/loop-profile.ts` profiles: `steps` model requests, each but the
 * last answered with one `read` call of another file (`r<i>.txt`), the last with an answer; and the environment a
 * run of it gets (a fresh home, the scripted server as `LATHE_BASE_URL`).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { ScriptedReply } from "@lathe/core/testing"

/** Makes `dir` a git repository with one commit of everything in it (the project id is then that commit). */
export const commitAll = (dir: string): void => {
  execFileSync("git", ["init", "-q"], { cwd: dir })
  execFileSync("git", ["add", "-A"], { cwd: dir })
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "init"], { cwd: dir })
}

/** Writes the files the session reads into `dir`: `r0.txt` … `r<steps-1>.txt`, and `a.txt`. */
export const writeSessionFiles = (dir: string, steps: number): void => {
  writeFileSync(join(dir, "a.txt"), "alpha\n")
  for (let i = 0; i < steps; i++) writeFileSync(join(dir, `r${i}.txt`), `read ${i}\n`)
}

/** `<work>/repo`: a git repository holding the session's files (`writeSessionFiles`) in one commit. */
export const sessionRepo = (work: string, steps: number): string => {
  const repo = join(work, "repo")
  mkdirSync(repo)
  writeSessionFiles(repo, steps)
  commitAll(repo)
  return repo
}

/**
 * The scripted model's replies. `sameInput` reads `a.txt` every time instead: from the third identical call on, each
 * step also goes through the doom-loop guard's ask (answered by `--yes`).
 */
export const sessionScript =
  (steps: number, sameInput = false) =>
  (_request: unknown, index: number): ScriptedReply | undefined => {
    if (index < steps - 1)
      return { steps: [{ tool: "read", input: { filePath: sameInput ? "a.txt" : `r${index}.txt` } }] }
    if (index === steps - 1) return { steps: [{ text: "done" }] }
    return undefined
  }

/** The environment of one run: `home` as its home, data and config, the model at `url`, Node's compile cache shared. */
export const sessionEnv = (home: string, url: string, compileCache: string): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: home,
  LATHE_DATA_DIR: join(home, "data"),
  XDG_CONFIG_HOME: join(home, "config"),
  LATHE_BASE_URL: url,
  LATHE_MODEL: "bench",
  // The model catalogue's background refresh (after the first request) goes to a closed loopback port.
  LATHE_MODELS_URL: "http://127.0.0.1:9/api.json",
  NODE_COMPILE_CACHE: compileCache,
  // `LATHE_NODE_HEAP=small` (the young-generation cap, opt-in) passes through, to measure its cost.
  ...(process.env.LATHE_NODE_HEAP ? { LATHE_NODE_HEAP: process.env.LATHE_NODE_HEAP } : {})
})

/**
 * Runs `command args` in `cwd` with exactly `env`, stdout ignored, until it ends: its exit code and what it wrote on
 * stderr (a session's figures and marks, or why it failed). Spawned at once: a caller timing the run takes its start
 * just before calling.
 */
export const runForStderr = async (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv
): Promise<{ readonly code: number | null; readonly stderr: string }> => {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const code = await new Promise<number | null>((done, fail) => {
    child.on("error", fail)
    child.on("close", done)
  })
  return { code, stderr }
}
