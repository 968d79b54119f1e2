import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { CallToolResult, Tool as McpTool, Progress } from "@modelcontextprotocol/sdk/types.js"
import { McpAuthError } from "./oauth-error.js"
import type { McpServer } from "./servers.js"
import { describeStatus, type McpStatus } from "./status.js"
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
}

/** The default restart backoff: 0.5 s, 1 s, 2 s, 4 s, 8 s, then give up. */
export const DEFAULT_RESTART_DELAYS: ReadonlyArray<number> = [500, 1_000, 2_000, 4_000, 8_000]

const CLIENT = { name: "lathe", version: "0.0.0" }
const STDERR_KEEP = 2_000

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
  private stderr = ""
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    readonly server: McpServer,
    private readonly options: ConnectionOptions = {}
  ) {
    this.status = server.enabled ? { state: "connecting" } : { state: "disabled" }
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

  /** Connects within the server's `timeout` (a disabled server stays disabled) and resolves with the status. */
  async start(): Promise<McpStatus> {
    if (!this.server.enabled || this.closed) return this.status
    try {
      await within(this.connect(), this.server.timeout, `connecting to "${this.server.name}"`)
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

  /** Calls a tool of this server. Aborting `signal` cancels the request (the SDK sends `notifications/cancelled`). */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { readonly signal?: AbortSignal; readonly onprogress?: (progress: Progress) => void } = {}
  ): Promise<CallToolResult> {
    const client = this.client
    if (!client || this.status.state !== "connected")
      throw new Error(`The MCP server "${this.server.name}" is not available (${describeStatus(this.status)}).`)
    const result = await client.callTool({ name, arguments: args }, undefined, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
      resetTimeoutOnProgress: true
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
      server.type === "remote" && server.oauth !== false ? this.options.authProvider?.(server) : undefined
    const attempt = async (protocol?: "streamable-http" | "sse") => {
      const transport = createTransport(server, {
        ...(authProvider ? { authProvider } : {}),
        ...(protocol ? { protocol } : {})
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
    const stopped = `the server stopped${this.stderr ? ` (stderr: ${this.stderr.trim()})` : ""}`
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
        this.stderr = ""
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

  private captureStderr(transport: Transport): void {
    const stream = "stderr" in transport ? (transport.stderr as NodeJS.ReadableStream | null) : null
    stream?.on("data", (chunk: Buffer | string) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_KEEP)
    })
  }

  private reason(error: unknown): string {
    const why =
      error instanceof Timeout ? `${text(error)} (raise "timeout" in its config if it needs longer)` : text(error)
    const tail = this.stderr.trim()
    return tail ? `${why} (stderr: ${tail.split("\n").slice(-5).join(" | ")})` : why
  }

  private async dropClient(): Promise<void> {
    const client = this.client
    this.client = undefined
    if (client) await client.close().catch(() => undefined)
  }
}

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
