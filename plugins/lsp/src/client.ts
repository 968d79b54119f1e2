/**
 * One running language server: the process, the LSP handshake, the documents it has open, and the diagnostics it
 * published. Knows nothing of Lathe: the manager decides when to start, restart and stop it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { extname } from "node:path"
import { pathToFileURL } from "node:url"
import { RpcClosed, RpcConnection } from "./jsonrpc.js"

/** A position or range as LSP has them: zero-based lines and UTF-16 columns. */
export interface Position {
  readonly line: number
  readonly character: number
}
export interface Range {
  readonly start: Position
  readonly end: Position
}
export interface Location {
  readonly uri: string
  readonly range: Range
}

/** One diagnostic as the server published it (severity 1 error, 2 warning, 3 information, 4 hint). */
export interface Diagnostic {
  readonly range: Range
  readonly severity?: number
  readonly code?: string | number
  readonly source?: string
  readonly message: string
}

/** How to start a server. */
export interface ClientSpec {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly root: string
  /** `initializationOptions`, also the answer to `workspace/configuration`. */
  readonly initialization?: Readonly<Record<string, unknown>>
  /** How long the handshake may take, in ms. */
  readonly startTimeoutMs: number
}

const LANGUAGE_IDS: Readonly<Record<string, string>> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "typescriptreact",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascriptreact",
  ".py": "python",
  ".pyi": "python",
  ".go": "go",
  ".rs": "rust"
}

/** The LSP `languageId` of a file, by its extension (a server declared in config gets the extension's name). */
export const languageId = (path: string): string => {
  const ext = extname(path).toLowerCase()
  return LANGUAGE_IDS[ext] ?? ext.slice(1)
}

export const fileUri = (path: string): string => pathToFileURL(path).href

/** The value of a dotted `section` (`python.analysis`) in the settings, for `workspace/configuration`. */
const section = (settings: Readonly<Record<string, unknown>>, name: string | undefined): unknown => {
  if (!name) return settings
  let value: unknown = settings
  for (const key of name.split(".")) {
    if (typeof value !== "object" || value === null) return null
    value = (value as Record<string, unknown>)[key]
  }
  return value ?? null
}

/** What the client sent for a file and what the server last published for it. */
interface Document {
  version: number
  text: string
}

/** Who waits for a file's next diagnostics. */
type Waiter = () => void

/** The longest quiet spell a wait for diagnostics keeps after a publication (see `waitForDiagnostics`). */
const MAX_QUIET_MS = 2000

export class LspClient {
  private readonly process: ChildProcess
  private readonly connection: RpcConnection
  private readonly documents = new Map<string, Document>()
  private readonly diagnostics = new Map<string, ReadonlyArray<Diagnostic>>()
  /** When each file's diagnostics last arrived (ms since start), and who waits for the next. */
  private readonly published = new Map<string, number>()
  private readonly waiters = new Set<Waiter>()
  private exitListeners: Array<(code: number | null, signal: string | null) => void> = []
  private stderrTail = ""
  exited = false

  private constructor(readonly spec: ClientSpec) {
    this.process = spawn(spec.command, [...spec.args], {
      cwd: spec.root,
      env: spec.env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    if (!this.process.stdout || !this.process.stdin) throw new Error(`${spec.name}: no stdio`)
    this.connection = new RpcConnection(this.process.stdout, this.process.stdin)
    this.process.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-2000)
    })
    this.process.on("error", (error) => this.onExit(null, null, error.message))
    this.process.on("exit", (code, signal) => this.onExit(code, signal))
    const settings = spec.initialization ?? {}
    this.connection.onNotification("textDocument/publishDiagnostics", (params) => {
      const { uri, diagnostics } = params as { uri: string; diagnostics: ReadonlyArray<Diagnostic> }
      this.diagnostics.set(uri, diagnostics)
      this.published.set(uri, Date.now())
      for (const waiter of [...this.waiters]) waiter()
    })
    this.connection.onRequest("workspace/configuration", (params) =>
      ((params as { items?: ReadonlyArray<{ section?: string }> }).items ?? []).map((item) =>
        section(settings, item.section)
      )
    )
    this.connection.onRequest("workspace/workspaceFolders", () => [{ uri: fileUri(spec.root), name: "root" }])
    this.connection.onRequest("window/workDoneProgress/create", () => null)
    this.connection.onRequest("client/registerCapability", () => null)
    this.connection.onRequest("client/unregisterCapability", () => null)
    this.connection.onRequest("window/showMessageRequest", () => null)
    this.connection.onRequest("workspace/applyEdit", () => ({ applied: false }))
  }

  /** The server's process id, while it runs. */
  get pid(): number | undefined {
    return this.exited ? undefined : this.process.pid
  }

  /** The last lines the server wrote to stderr (for a notice when it fails). */
  get stderr(): string {
    return this.stderrTail.trim()
  }

  /** Starts the server and completes the handshake; rejects (the process stopped) when it fails. */
  static async start(spec: ClientSpec): Promise<LspClient> {
    const client = new LspClient(spec)
    // Why the process ended during the handshake: its exit code and the end of its stderr.
    const exited = new Promise<Error>((resolve) =>
      client.onExitOnce((code, signal, reason) =>
        resolve(
          new Error(
            reason ??
              `exited during start-up (${signal ?? `code ${code}`})${client.stderr ? `: ${client.stderr.slice(-400)}` : ""}`
          )
        )
      )
    )
    try {
      const failed = exited.then((error) => Promise.reject(error))
      const rootUri = fileUri(spec.root)
      await Promise.race([
        failed,
        client.connection.request(
          "initialize",
          {
            processId: process.pid,
            clientInfo: { name: "lathe" },
            rootUri,
            rootPath: spec.root,
            workspaceFolders: [{ uri: rootUri, name: "root" }],
            initializationOptions: spec.initialization ?? {},
            capabilities: {
              general: { positionEncodings: ["utf-16"] },
              workspace: { configuration: true, workspaceFolders: true, symbol: {} },
              textDocument: {
                synchronization: { didSave: true, dynamicRegistration: false },
                publishDiagnostics: { relatedInformation: false, versionSupport: true },
                hover: { contentFormat: ["markdown", "plaintext"] },
                definition: { linkSupport: false },
                references: {},
                documentSymbol: { hierarchicalDocumentSymbolSupport: true }
              },
              window: { workDoneProgress: false }
            }
          },
          spec.startTimeoutMs
        )
      ])
      client.connection.notify("initialized", {})
      if (spec.initialization)
        client.connection.notify("workspace/didChangeConfiguration", { settings: spec.initialization })
      return client
    } catch (error) {
      // Its output closed first: the exit (with its code and stderr) follows at once, and says more.
      const reason =
        error instanceof RpcClosed
          ? await Promise.race([
              exited,
              new Promise<undefined>((done) => setTimeout(() => done(undefined), 1000).unref())
            ])
          : undefined
      client.kill()
      throw reason ?? error
    }
  }

  /** Called once when the process exits (at once if it already has). */
  onExitOnce(listener: (code: number | null, signal: string | null, reason?: string) => void): void {
    this.exitListeners.push(listener)
  }

  private onExit(code: number | null, signal: string | null, reason?: string): void {
    if (this.exited) return
    this.exited = true
    this.connection.close(reason ?? "the language server exited")
    for (const waiter of [...this.waiters]) waiter()
    const listeners = this.exitListeners
    this.exitListeners = []
    for (const listener of listeners)
      (listener as (c: number | null, s: string | null, r?: string) => void)(code, signal, reason)
  }

  /**
   * Tells the server a file's current text (read from disk): `didOpen` the first time, `didChange` (whole text) and
   * `didSave` after. Returns the time the sync was sent, to wait for diagnostics published after it, or `undefined`
   * when the server already has this text (its diagnostics are current: nothing new will be published).
   */
  async sync(path: string): Promise<number | undefined> {
    const text = await readFile(path, "utf8")
    const uri = fileUri(path)
    const document = this.documents.get(uri)
    if (document?.text === text && this.published.has(uri)) return undefined
    const sent = Date.now()
    if (!document) {
      this.documents.set(uri, { version: 1, text })
      this.connection.notify("textDocument/didOpen", {
        textDocument: { uri, languageId: languageId(path), version: 1, text }
      })
    } else {
      document.version += 1
      document.text = text
      this.connection.notify("textDocument/didChange", {
        textDocument: { uri, version: document.version },
        contentChanges: [{ text }]
      })
    }
    this.connection.notify("textDocument/didSave", { textDocument: { uri }, text })
    return sent
  }

  /**
   * Waits until each file has diagnostics published at or after `since`, then until a quiet spell passes without
   * another publication for them (a server may send syntax errors first, then types), or until `timeoutMs` in all.
   * Resolves with whether every file got diagnostics.
   *
   * The quiet spell is `quietMs`, or half the time the server took to publish, if longer: a server that took seconds to
   * send its first (often empty) list — one loading its project, or on a loaded machine — takes long for the next one
   * too, and 150 ms after its syntax pass would end the wait before its type errors.
   */
  waitForDiagnostics(uris: ReadonlyArray<string>, since: number, timeoutMs: number, quietMs = 150): Promise<boolean> {
    const fresh = () => uris.every((uri) => (this.published.get(uri) ?? 0) >= since)
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined
      const finish = (all: boolean) => {
        clearTimeout(deadline)
        if (quiet) clearTimeout(quiet)
        this.waiters.delete(check)
        resolve(all)
      }
      const check: Waiter = () => {
        if (this.exited) return finish(fresh())
        if (!fresh()) return
        if (quiet) clearTimeout(quiet)
        quiet = setTimeout(() => finish(true), Math.max(quietMs, Math.min((Date.now() - since) / 2, MAX_QUIET_MS)))
      }
      const deadline = setTimeout(() => finish(fresh()), timeoutMs)
      this.waiters.add(check)
      check()
    })
  }

  /** The diagnostics last published for a file (empty when none were). */
  diagnosticsFor(uri: string): ReadonlyArray<Diagnostic> {
    return this.diagnostics.get(uri) ?? []
  }

  /** Every file with diagnostics, and them. */
  allDiagnostics(): ReadonlyArray<readonly [string, ReadonlyArray<Diagnostic>]> {
    return [...this.diagnostics.entries()].filter(([, list]) => list.length > 0)
  }

  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    return this.connection.request(method, params, timeoutMs)
  }

  /** Asks the server to shut down, then to exit; kills it if it has not within `timeoutMs`. */
  async stop(timeoutMs = 1000): Promise<void> {
    if (this.exited) return
    const gone = new Promise<void>((resolve) => this.onExitOnce(() => resolve()))
    try {
      await this.connection.request("shutdown", null, timeoutMs)
      this.connection.notify("exit", null)
    } catch {
      // It did not answer: it is killed below.
    }
    const timer = setTimeout(() => this.kill(), timeoutMs)
    await gone
    clearTimeout(timer)
  }

  /** Kills the process at once. */
  kill(): void {
    if (this.exited) return
    try {
      this.process.kill("SIGKILL")
    } catch {
      // Already gone.
    }
  }
}
