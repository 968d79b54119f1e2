/**
 * What the cluster e2e tests share: a free loopback port and a `lathe runner` started from source that resolves once
 * it printed `runner HOST:PORT joined`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

/** A port nothing listens on right now (bound once on 127.0.0.1, then released). */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** A running `lathe runner` process. */
export interface RunnerProcess {
  readonly port: number
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly exited: Promise<number | null>
  /** Sessions this runner started answering (from its `session …: answering` lines). */
  readonly answered: () => ReadonlySet<string>
}

export interface RunnerOptions {
  /** `--shards`: every member of one cluster must give the same number. */
  readonly shards: string
  /** A data dir of its own (another machine's disk: its own workspace clones); else `env`'s. */
  readonly dataDir?: string
  /** How long it may take to join before it is killed and the promise fails. */
  readonly joinTimeoutMs: number
  /** Hears each chunk of its stderr (e.g. to keep logs of a failing run). */
  readonly onStderr?: (chunk: string) => void
}

/** Starts `lathe runner --port <port>` from source in `cwd`; resolves once it joined, fails if it exits first. */
export const startRunner = (
  env: Record<string, string>,
  cwd: string,
  port: number,
  options: RunnerOptions
): Promise<RunnerProcess> =>
  new Promise((resolve, reject) => {
    const args = ["--conditions=@lathe/source", "--import", tsx, bin, "runner", "--port", String(port)]
    const child = spawn(process.execPath, [...args, "--shards", options.shards], {
      cwd,
      env: options.dataDir ? { ...env, LATHE_DATA_DIR: options.dataDir } : env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`runner did not join\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.joinTimeoutMs)
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      if (/^runner \S+ joined\n/.test(stdout)) {
        clearTimeout(timer)
        resolve({
          port,
          child,
          exited,
          stderr: () => stderr,
          answered: () => new Set([...stderr.matchAll(/session (\S+): answering/g)].map((m) => m[1] ?? ""))
        })
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8")
      stderr += text
      options.onStderr?.(text)
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`runner exited with ${code} before joining\n${stderr}`))
    })
  })
