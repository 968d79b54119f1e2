import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { CallToolResult, Tool as McpTool, Progress } from "@modelcontextprotocol/sdk/types.js"
import type { McpMessageError } from "./message-reader.js"
import { McpAuthError } from "./oauth-error.js"
import type { McpServer } from "./servers.js"
import { describeStatus, type McpStatus } from "./status.js"
import { ProcessGroupTransport } from "./stdio-transport.js"
import { type AuthProviderFactory, createTransport } from "./transport.js"

export { describeStatus, type McpStatus }

/** How a connection behaves. */
export interface ConnectionOptions {
  /** Supplies OAuth for remote servers whose `oauth` is not `false`. */
  readonly authProvider?: AuthProviderFactory
  /** Waits between restarts of a server that stopped, in ms; its length bounds the restarts (default 5). */
  readonly restartDelays?: ReadonlyArray<number>
  /** Told when the server's tool list changed (`notifications/tools/list_changed`) or it restarted. */
  readonly onToolsChanged?: (connection: McpConnection) => void
  /** Told when the server stopped, restarted or gave up. */
  readonly onStatus?: (connection: McpConnection) => void
  /** The environment local servers inherit, before their own `env` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Lathe's credentials, kept out of local servers' environment (see `serverEnvironment`; default none). */
  readonly credentials?: ReadonlyArray<string>
  /** The host's provider key variables, never inherited by local servers (`ctx.secretNames`; default none). */
  readonly credentialNames?: ReadonlyArray<string>
}

/** The default restart backoff: 0.5 s, 1 s, 2 s, 4 s, 8 s, then give up. */
export const DEFAULT_RESTART_DELAYS: ReadonlyArray<number> = [500, 1_000, 2_000, 4_000, 8_000]

const CLIENT = { name: "lathe", version: "0.0.0" }
/** How much of a server's stderr is kept for its errors: the last 20 lines, at most 2 KB. */
const STDERR_BYTES = 2_048
const STDERR_LINES = 20

/** The end of a stream's text, bounded by {@link STDERR_BYTES}; `lines` gives at most {@link STDERR_LINES}. */
class Tail {
  private text = ""
  add(chunk: string): void {
    this.text = (this.text + chunk).slice(-STDERR_BYTES)
  }
  clear(): void {
    this.text = ""
  }
  lines(): Array<string> {
    return this.text
      .split(/\r?\n/)
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== "")
      .slice(-STDERR_LINES)
  }
}

/** An error as one line (servers answer errors with whole HTML pages), at most 300 characters. */
const text = (error: unknown): string => {
  const line = (error instanceof Error ? error.message || error.name : String(error)).replace(/\s+/g, " ").trim()
  return line.length > 300 ? `${line.slice(0, 297)}...` : line
}

const isUnauthorized = (error: unknown): boolean =>
  error instanceof UnauthorizedError ||
  error instanceof McpAuthError ||
  ((error instanceof StreamableHTTPError || error instanceof SseError) && error.code === 401)

class Timeout extends Error {}

/** Settles like `promise`, or rejects with {@link Timeout} after `ms`; the loser's outcome is swallowed. */
const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`${what} did not finish within ${ms} ms`)), ms)
  })
  promise.catch(() => undefined)
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

/**
 * One MCP server: connects through the SDK client, keeps its tool list, and restarts it with bounded backoff when it
 * stops. Never throws from `start`; the outcome is in `status`.
 */
export class McpConnection {
  status: McpStatus
  /** The server's tools as it last listed them. */
  tools: ReadonlyArray<McpTool> = []
  private client: Client | undefined
  private closed = false
  /** stderr since the process started, and since it connected (what may explain a later stop). */
  private readonly stderr = new Tail()
  private readonly stderrConnected = new Tail()
  private exitStatus: (() => string | undefined) | undefined
  /** What the current local server sent that could not be read (see `ProcessGroupTransport.fault`). */
  private fault: (() => McpMessageError | undefined) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private started: Promise<McpStatus> | undefined

  constructor(
    readonly server: McpServer,
    private readonly options: ConnectionOptions = {}
  ) {
    this.status = server.enabled ? { state: "connecting" } : { state: "disabled" }
  }

  /**
   * Resolves with the status once the first start has settled (connected, failed, needs auth, disabled), for a host
   * that needs this server now (an MCP prompt or resource). Starts the connection when nothing has yet.
   */
  ready(): Promise<McpStatus> {
    return this.start()
  }

  /** The SDK client while connected, for requests beyond tools (prompts, resources); `undefined` otherwise. */
  get sdkClient(): Client | undefined {
    return this.status.state === "connected" ? this.client : undefined
  }

  /** The local server's process id while it runs (for diagnostics). */
  get pid(): number | undefined {
    const transport = this.client?.transport
    return transport && "pid" in transport && typeof transport.pid === "number" ? transport.pid : undefined
  }

  /**
   * Connects within the server's `firstTimeout`, else its `timeout` (a disabled server stays disabled), and resolves
   * with the status.
   */
  start(): Promise<McpStatus> {
    this.started ??= this.firstStart()
    return this.started
  }

  private async firstStart(): Promise<McpStatus> {
    if (!this.server.enabled || this.closed) return this.status
    try {
      const timeout = this.server.firstTimeout ?? this.server.timeout
      await within(this.connect(), timeout, `connecting to "${this.server.name}"`)
    } catch (error) {
      // Not awaited: closing a hung stdio server takes the SDK seconds, and the run must go on at the timeout.
      void this.dropClient()
      this.status = isUnauthorized(error)
        ? {
            state: "needs-auth",
            reason:
              error instanceof McpAuthError
                ? error.message
                : `the server asks for authorization: run \`lathe mcp auth ${this.server.name}\``
          }
        : { state: "failed", reason: this.reason(error) }
    }
    return this.status
  }

  /**
   * Calls a tool of this server. Aborting `signal` cancels the request (the SDK sends `notifications/cancelled`).
   * When the server answers with a message too large or malformed to read, the call fails with an error saying so
   * (the connection is closed and restarts, as when the server stops).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { readonly signal?: AbortSignal; readonly onprogress?: (progress: Progress) => void } = {}
  ): Promise<CallToolResult> {
    const client = this.client
    if (!client || this.status.state !== "connected")
      throw new Error(`The MCP server "${this.server.name}" is not available (${describeStatus(this.status)}).`)
    const fault = this.fault
    const result = await client
      .callTool({ name, arguments: args }, undefined, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onprogress ? { onprogress: options.onprogress } : {}),
        resetTimeoutOnProgress: true
      })
      .catch((error: unknown) => {
        const what = fault?.()
        throw what === undefined ? error : new Error(this.faultMessage(what))
      })
    return result as CallToolResult
  }

  /** Stops the server (and any pending restart); the connection is not used again. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.dropClient()
  }

  private async connect(): Promise<void> {
    const server = this.server
    const authProvider =
      server.type === "remote" && server.oauth !== false ? await this.options.authProvider?.(server) : undefined
    const attempt = async (protocol?: "streamable-http" | "sse") => {
      const transport = createTransport(server, {
        ...(authProvider ? { authProvider } : {}),
        ...(protocol ? { protocol } : {}),
        ...(this.options.env ? { env: this.options.env } : {}),
        ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
        ...(this.options.credentialNames ? { credentialNames: this.options.credentialNames } : {})
      })
      this.captureStderr(transport)
      const client = new Client(CLIENT, {
        listChanged: { tools: { autoRefresh: false, onChanged: () => void this.refresh(client) } }
      })
      this.client = client
      await client.connect(transport)
      return client
    }
    let client: Client
    if (server.type === "remote" && server.transport === undefined) {
      try {
        client = await attempt("streamable-http")
      } catch (first) {
        if (isUnauthorized(first) || this.closed) throw first
        await this.dropClient()
        client = await attempt("sse").catch((second: unknown) =>
          Promise.reject(new Error(`Streamable HTTP: ${text(first)}; SSE: ${text(second)}`))
        )
      }
    } else client = await attempt()
    this.tools = await listAll(client)
    if (this.client !== client) return
    client.onclose = () => this.onClosed(client)
    this.stderrConnected.clear()
    this.status = { state: "connected", tools: this.tools.length }
  }

  private async refresh(client: Client): Promise<void> {
    if (client !== this.client) return
    try {
      this.tools = await listAll(client)
      if (this.status.state === "connected") this.status = { state: "connected", tools: this.tools.length }
      this.options.onToolsChanged?.(this)
    } catch {
      // A failed refresh keeps the last list; the next notification tries again.
    }
  }

  /** The server stopped after connecting: restart it with the backoff, then give up with the last reason. */
  private onClosed(client: Client): void {
    if (this.closed || client !== this.client) return
    this.client = undefined
    const delays = this.options.restartDelays ?? DEFAULT_RESTART_DELAYS
    // Only what it printed after connecting: a start-up banner does not explain a stop.
    const how = this.exitStatus?.()
    const fault = this.fault?.()
    const stopped =
      fault !== undefined
        ? this.faultMessage(fault)
        : withStderr(`the server stopped${how ? ` (${how})` : ""}`, this.stderrConnected.lines())
    const retry = (attempt: number, reason: string) => {
      const delay = delays[attempt - 1]
      if (delay === undefined) {
        this.status = { state: "failed", reason: `${reason}; gave up after ${delays.length} restarts` }
        this.options.onStatus?.(this)
        return
      }
      this.status = { state: "restarting", attempt, reason }
      this.options.onStatus?.(this)
      this.timer = setTimeout(() => {
        if (this.closed) return
        this.stderr.clear()
        within(this.connect(), this.server.timeout, `restarting "${this.server.name}"`).then(
          () => {
            this.options.onStatus?.(this)
            this.options.onToolsChanged?.(this)
          },
          async (error: unknown) => {
            await this.dropClient()
            if (!this.closed) retry(attempt + 1, this.reason(error))
          }
        )
      }, delay)
      this.timer.unref?.()
    }
    retry(1, stopped)
  }

  /** The error for a server whose output could not be read. */
  private faultMessage(fault: McpMessageError): string {
    return (
      `The MCP server "${this.server.name}" ${fault.message}; Lathe closed its connection and restarts it for the ` +
      `next call.${fault.kind === "oversized" ? " Ask the server for less (a narrower query, a smaller page)." : ""}`
    )
  }

  private captureStderr(transport: Transport): void {
    this.exitStatus = transport instanceof ProcessGroupTransport ? () => transport.exitStatus : undefined
    this.fault = transport instanceof ProcessGroupTransport ? () => transport.fault : undefined
    const stream = "stderr" in transport ? (transport.stderr as NodeJS.ReadableStream | null) : null
    stream?.on("data", (chunk: Buffer | string) => {
      this.stderr.add(chunk.toString())
      this.stderrConnected.add(chunk.toString())
    })
  }

  /**
   * Why a start failed, with the end of the server's stderr when it printed any. A time-out with stderr points at
   * it first (behind a proxy, `npx` prints why it cannot fetch); a silent one says how to check the command.
   */
  private reason(error: unknown): string {
    const tail = this.server.type === "local" ? this.stderr.lines() : []
    const fault = this.fault?.()
    if (fault !== undefined) return this.faultMessage(fault)
    if (!(error instanceof Timeout)) return withStderr(text(error), tail)
    if (tail.length === 0)
      return (
        `${text(error)}, and the server printed nothing on stderr. Run its command in a shell to see whether it ` +
        'starts (it should wait for input); if it is only slow to start, raise "timeout" in its config.'
      )
    return withStderr(
      text(error),
      tail,
      'Its stderr may say why (if it is only slow to start, raise "timeout" in its config)'
    )
  }

  private async dropClient(): Promise<void> {
    const client = this.client
    this.client = undefined
    if (client) await client.close().catch(() => undefined)
  }
}

/** `headline`, then `intro` and the stderr lines indented below it (`headline` alone when there are none). */
const withStderr = (headline: string, lines: ReadonlyArray<string>, intro = "The server's stderr ends with"): string =>
  lines.length === 0 ? headline : `${headline}. ${intro}:\n${lines.map((line) => `    ${line}`).join("\n")}`

/** Every tool of a server, following `nextCursor`. */
const listAll = async (client: Client): Promise<Array<McpTool>> => {
  const tools: Array<McpTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/** Connects every server at once (disabled ones stay disabled); resolves when each is connected or has failed. */
export const connectAll = async (
  servers: ReadonlyArray<McpServer>,
  options: ConnectionOptions = {}
): Promise<Array<McpConnection>> => {
  const connections = servers.map((server) => new McpConnection(server, options))
  await Promise.all(connections.map((connection) => connection.start()))
  return connections
}
