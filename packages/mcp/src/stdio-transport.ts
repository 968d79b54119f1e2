// A local MCP server over stdio, in its own process group: a Ctrl-C at the terminal (SIGINT to the foreground group)
// reaches Lathe only, and Lathe stops the server and whatever it started (npx's child, a shell's jobs) as one.
import { type ChildProcess, spawn } from "node:child_process"
import { PassThrough } from "node:stream"
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { McpMessageError, MessageReader } from "./message-reader.js"

/** What {@link ProcessGroupTransport} starts. */
export interface ProcessGroupOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The whole environment of the process (nothing is added). */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
}

/** How long `close` waits after closing stdin, then after SIGTERM, before the next step (ms). */
export const STOP_GRACE_MS = { stdin: 1_000, term: 2_000 } as const

/** Children still running, stopped with SIGTERM (to their group) when this process exits or is signalled. */
const live = new Set<ChildProcess>()
const GROUPS = process.platform !== "win32"

const signalGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return
  try {
    if (GROUPS) process.kill(-child.pid, signal)
    else child.kill(signal)
  } catch {
    // The group is gone already.
  }
}

const terminateAll = (): void => {
  for (const child of live) signalGroup(child, "SIGTERM")
}

let guarded = false
/**
 * Once per process: stop the servers at exit, and on SIGINT / SIGTERM / SIGHUP when nothing else handles the signal
 * (a host that does, like `lathe run`, closes its connections itself). Then the signal does what it would have done.
 */
const guardExit = (): void => {
  if (guarded) return
  guarded = true
  process.once("exit", terminateAll)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const handler = () => {
      if (process.listenerCount(signal) > 1) return
      terminateAll()
      process.off(signal, handler)
      process.kill(process.pid, signal)
    }
    process.on(signal, handler)
  }
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/**
 * The MCP client transport for a local server: spawns it (no shell) in a new process group with exactly the given
 * environment, speaks newline-delimited JSON-RPC on its stdin/stdout, and keeps stderr to itself (read it from
 * `stderr`; nothing reaches the terminal). `close` ends stdin, then sends SIGTERM to the group after
 * {@link STOP_GRACE_MS}`.stdin`, then SIGKILL after `.term`. If this process exits first, the group gets SIGTERM.
 * A message over the cap or a malformed one (see {@link MessageReader}) is a fault: `fault` says what it was,
 * `onerror` gets it, stdout is no longer read, `onclose` fires at once (the client fails its pending requests) and
 * the server is stopped as by `close`. Nothing is thrown out of a stream handler.
 */
export class ProcessGroupTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T) => void
  /** The server's stderr, readable before `start` so nothing it prints early is lost. */
  readonly stderr = new PassThrough()
  private child: ChildProcess | undefined
  private started = false
  private readonly reader = new MessageReader()
  private closeReported = false

  /** What the server sent that could not be read (`sent a message over 16 MB …`), once that happened. */
  fault: McpMessageError | undefined

  constructor(private readonly options: ProcessGroupOptions) {}

  /** The server's process id (also its process group's) once started. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  /** How the process ended (`exit code 1`, `signal SIGKILL`), once it has; `undefined` while it runs. */
  exitStatus: string | undefined

  async start(): Promise<void> {
    if (this.started) throw new Error("ProcessGroupTransport already started")
    this.started = true
    guardExit()
    await new Promise<void>((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: { ...this.options.env },
        cwd: this.options.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: GROUPS,
        windowsHide: true
      })
      this.child = child
      child.once("error", (error) => {
        live.delete(child)
        reject(error)
        this.onerror?.(error)
      })
      child.once("spawn", () => {
        live.add(child)
        resolve()
      })
      child.once("exit", (code, signal) => {
        live.delete(child)
        this.exitStatus = signal ? `signal ${signal}` : `exit code ${code}`
      })
      child.once("close", () => {
        if (this.child === child) this.child = undefined
        this.reportClose()
      })
      child.stdin?.on("error", (error) => this.onerror?.(error))
      const stdout = child.stdout
      stdout?.on("data", (chunk: Buffer) => {
        if (this.fault !== undefined) return
        try {
          this.reader.read(chunk, (message) => this.onmessage?.(message))
        } catch (error) {
          if (!(error instanceof McpMessageError))
            return this.onerror?.(error instanceof Error ? error : new Error(String(error)))
          this.fault = error
          stdout.destroy()
          this.onerror?.(error)
          this.reportClose()
          void this.close()
        }
      })
      child.stderr?.pipe(this.stderr)
    })
  }

  /** `onclose` once, whether the process ended or a fault closed the connection first. */
  private reportClose(): void {
    if (this.closeReported) return
    this.closeReported = true
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (!stdin || stdin.destroyed) return reject(new Error("Not connected"))
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once("drain", resolve)
    })
  }

  async close(): Promise<void> {
    const child = this.child
    this.child = undefined
    this.reader.clear()
    if (!child) return
    const gone = new Promise<void>((resolve) => (exited(child) ? resolve() : child.once("exit", () => resolve())))
    const within = (ms: number) => Promise.race([gone, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())])
    try {
      child.stdin?.end()
    } catch {
      // stdin already closed
    }
    await within(STOP_GRACE_MS.stdin)
    // Also when the server exited on its own: what it started may still run in its group.
    signalGroup(child, "SIGTERM")
    if (!exited(child)) await within(STOP_GRACE_MS.term)
    if (!exited(child)) signalGroup(child, "SIGKILL")
    live.delete(child)
  }
}
