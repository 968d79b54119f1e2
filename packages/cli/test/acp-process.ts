import { spawn } from "node:child_process"
import { PassThrough, Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import * as acp from "@agentclientprotocol/sdk"

// A real `lathe acp` process (from source) for the ACP end-to-end tests: its stdio as the SDK's stream, what it wrote
// to stdout and stderr, and a close that ends stdin and waits for the exit. Each test file builds its own client on it.

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

export interface AcpProcess {
  /** The process's stdin and stdout as the SDK's newline-delimited JSON stream. */
  readonly stream: ReturnType<typeof acp.ndJsonStream>
  /** What the process wrote to stdout and stderr so far. */
  readonly out: () => { readonly stdout: string; readonly stderr: string }
  /** Closes stdin and waits for the process to exit (killed after 10 s). */
  readonly close: () => Promise<number | null>
}

/** Starts `lathe acp` in `cwd` with exactly `env`. */
export const startAcpProcess = (cwd: string, env: Record<string, string>): AcpProcess => {
  const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin, "acp"], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  // stdout goes both to the SDK and to `out()`, so a test can check that every line is JSON-RPC.
  const tee = new PassThrough()
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
    tee.write(chunk)
  })
  child.stdout.on("end", () => tee.end())
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
  return {
    stream: acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(tee) as unknown as ReadableStream<Uint8Array>
    ),
    out: () => ({ stdout, stderr }),
    close: async () => {
      child.stdin.end()
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}
