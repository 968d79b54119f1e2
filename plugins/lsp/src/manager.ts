/**
 * The language servers of one Lathe process: started on the first file of their type, restarted with a bounded
 * backoff when they crash, given up on (with one notice) when they cannot start, and stopped with the session.
 * Loaded by the plugin on the first edit or `lsp_*` call, so a run that edits nothing never loads it.
 */
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { scrubEnv } from "@lathe/plugin"
import { type Diagnostic, fileUri, LspClient } from "./client.js"
import { installPaths, lockHolder, logTail, startInstall } from "./install.js"
import { findServer, type SearchOptions, type ServerDefinition, serverFor } from "./servers.js"

/** What the manager needs from the plugin. */
export interface ManagerOptions extends SearchOptions {
  readonly servers: ReadonlyArray<ServerDefinition>
  /** Install npm-provided servers that are missing. */
  readonly install: boolean
  /** Lathe's secrets, kept out of the servers' environment. */
  readonly secrets: ReadonlyArray<string>
  readonly secretNames: ReadonlyArray<string>
  readonly inherit: ReadonlyArray<string>
  /** How long the first handshake may take, in ms. */
  readonly startTimeoutMs?: number
  /** Where the status of the running servers is written for `lathe lsp status` (absent: not written). */
  readonly statusFile?: string
  readonly log?: (message: string) => void
}

/** What a server is doing, for `lathe lsp status` and `lsp_diagnostics`. */
export interface ServerStatus {
  readonly name: string
  readonly state: "starting" | "running" | "installing" | "crashed" | "failed"
  readonly pid?: number
  readonly command?: string
  readonly foundIn?: string
  readonly restarts: number
  readonly error?: string
}

/**
 * The tsserver of the TypeScript installed beside a typescript-language-server program (the same `node_modules`, or
 * one above it), outside `root`. The server would otherwise take the project's own `node_modules/typescript`: code
 * the project chose, which an untrusted project may not run.
 */
export const ownTsserver = (program: string, root: string): string | undefined => {
  let dir: string
  try {
    dir = dirname(realpathSync(program))
  } catch {
    return undefined
  }
  for (let depth = 0; depth < 8; depth++, dir = dirname(dir)) {
    const candidates = [
      join(dir, "node_modules", "typescript", "lib", "tsserver.js"),
      ...(basename(dir) === "node_modules" ? [join(dir, "typescript", "lib", "tsserver.js")] : [])
    ]
    for (const candidate of candidates) {
      const inside = !relative(root, candidate).startsWith("..")
      if (!inside && existsSync(candidate)) return candidate
    }
    if (dirname(dir) === dir) break
  }
  return undefined
}

/** Restarts after a crash: at most this many, waiting 0.5 s, 1 s, 2 s… between them. */
export const MAX_RESTARTS = 3
const BACKOFF_MS = 500

interface Slot {
  readonly server: ServerDefinition
  client?: LspClient | undefined
  starting?: Promise<LspClient | undefined> | undefined
  installing?: Promise<void> | undefined
  state: ServerStatus["state"]
  restarts: number
  crashedAt?: number
  error?: string | undefined
  command?: string
  foundIn?: string
  /** The failure was told to the model already. */
  noticed: boolean
}

/** A file's diagnostics after an edit, or why there are none. */
export interface FileDiagnostics {
  readonly path: string
  readonly server: string
  readonly diagnostics: ReadonlyArray<Diagnostic>
  /** Whether the server published them within the wait. */
  readonly settled: boolean
}

export class LspManager {
  private readonly slots = new Map<string, Slot>()
  private stopped = false

  constructor(private readonly options: ManagerOptions) {
    for (const server of options.servers)
      this.slots.set(server.name, { server, state: "starting", restarts: 0, noticed: false })
  }

  absolute(path: string, directory: string): string {
    return isAbsolute(path) ? resolve(path) : resolve(directory, path)
  }

  status(): ReadonlyArray<ServerStatus> {
    return [...this.slots.values()]
      .filter((slot) => slot.client || slot.starting || slot.installing || slot.error || slot.restarts > 0)
      .map((slot) => ({
        name: slot.server.name,
        state: slot.state,
        ...(slot.client?.pid === undefined ? {} : { pid: slot.client.pid }),
        ...(slot.command ? { command: slot.command } : {}),
        ...(slot.foundIn ? { foundIn: slot.foundIn } : {}),
        restarts: slot.restarts,
        ...(slot.error ? { error: slot.error } : {})
      }))
  }

  private writeStatus(): void {
    const file = this.options.statusFile
    if (!file) return
    try {
      mkdirSync(join(file, ".."), { recursive: true })
      writeFileSync(
        file,
        `${JSON.stringify({ pid: process.pid, root: this.options.root, servers: this.status(), at: Date.now() })}\n`
      )
    } catch {
      // Status is a convenience for `lathe lsp status`: never fail an edit over it.
    }
  }

  /** A notice for the model, once per server, when it cannot run; `undefined` when it runs or was noticed. */
  takeNotice(name: string): string | undefined {
    const slot = this.slots.get(name)
    if (!slot || slot.noticed || !slot.error || (slot.state !== "failed" && slot.state !== "installing")) return
    slot.noticed = true
    return slot.error
  }

  /** The running client for a server, starting (or restarting) it when needed; `undefined` when it cannot run. */
  client(server: ServerDefinition): Promise<LspClient | undefined> {
    const slot = this.slots.get(server.name)
    if (!slot || this.stopped) return Promise.resolve(undefined)
    if (slot.client && !slot.client.exited) return Promise.resolve(slot.client)
    if (slot.starting) return slot.starting
    if (slot.state === "failed" || slot.installing) return Promise.resolve(undefined)
    if (slot.state === "crashed") {
      if (slot.restarts >= MAX_RESTARTS) {
        slot.state = "failed"
        slot.error = `The ${server.name} language server crashed ${slot.restarts + 1} times and was not restarted again.`
        this.writeStatus()
        return Promise.resolve(undefined)
      }
      const wait = BACKOFF_MS * 2 ** slot.restarts - (Date.now() - (slot.crashedAt ?? 0))
      slot.restarts += 1
      slot.starting = new Promise<void>((done) => setTimeout(done, Math.max(0, wait))).then(() => this.start(slot))
    } else slot.starting = this.start(slot)
    const starting = slot.starting
    starting.finally(() => {
      if (slot.starting === starting) slot.starting = undefined
    })
    return starting
  }

  private async start(slot: Slot): Promise<LspClient | undefined> {
    const { server } = slot
    const found = findServer(server, this.options)
    if (!found) {
      if (server.npm && this.options.install) {
        slot.state = "installing"
        slot.installing ??= this.install(slot).finally(() => {
          slot.installing = undefined
        })
        this.writeStatus()
        return undefined
      }
      return this.fail(
        slot,
        `The ${server.name} language server (${server.command[0]}) was not found` +
          (server.npm
            ? this.options.install
              ? "."
              : ` (installing it is off${this.options.trusted ? "" : " in an untrusted project"}: npm install -g ${server.npm.map((p) => p.replace(/@[^@/]+$/, "")).join(" ")}).`
            : " on PATH.") +
          " Edits go on without its diagnostics."
      )
    }
    slot.state = "starting"
    slot.command = found.path
    slot.foundIn = found.foundIn
    this.writeStatus()
    let initialization = server.initialization
    if (server.name === "typescript" && !server.configured && !this.options.trusted) {
      const tsserver = ownTsserver(found.path, this.options.root)
      if (!tsserver)
        return this.fail(
          slot,
          "In an untrusted project the typescript language server runs only with a TypeScript installed beside it " +
            "(npm install -g typescript-language-server typescript), never the project's own. Edits go on without " +
            "its diagnostics."
        )
      const own = (initialization?.tsserver ?? {}) as Record<string, unknown>
      initialization = { ...initialization, tsserver: { ...own, path: tsserver } }
    }
    const env = {
      ...scrubEnv(this.options.env, {
        secrets: this.options.secrets,
        names: this.options.secretNames,
        inherit: this.options.inherit
      }).env,
      ...server.env
    }
    try {
      const client = await LspClient.start({
        name: server.name,
        command: found.path,
        args: server.command.slice(1),
        env,
        root: this.options.root,
        ...(initialization ? { initialization } : {}),
        startTimeoutMs: this.options.startTimeoutMs ?? 20_000
      })
      if (this.stopped) {
        client.kill()
        return undefined
      }
      slot.client = client
      slot.state = "running"
      slot.error = undefined
      client.onExitOnce((code, signal) => {
        if (slot.client !== client || this.stopped) return
        slot.client = undefined
        slot.state = "crashed"
        slot.crashedAt = Date.now()
        slot.error = `The ${server.name} language server exited (${signal ?? `code ${code}`}).`
        this.options.log?.(slot.error)
        this.writeStatus()
      })
      this.writeStatus()
      return client
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      return this.fail(slot, `The ${server.name} language server failed to start: ${reason.slice(0, 500)}`)
    }
  }

  private fail(slot: Slot, message: string): undefined {
    slot.state = "failed"
    slot.error = message
    this.options.log?.(message)
    this.writeStatus()
    return undefined
  }

  /**
   * Installs the server's npm packages into Lathe's data folder in the background (see install.ts): the install goes
   * on after this Lathe exits, so a short run leaves it to finish and a later run finds the server. When another
   * Lathe (or another session of this one) installs it already, waits for that install instead of starting one.
   */
  private async install(slot: Slot): Promise<void> {
    const { server } = slot
    const paths = installPaths(this.options.dataDir, server.name)
    const env = scrubEnv(this.options.env, { secrets: this.options.secrets, names: this.options.secretNames }).env
    let exited: Promise<void> | undefined
    try {
      const started = startInstall({ paths, program: server.command[0] ?? "", packages: server.npm ?? [], env })
      if (started.started) exited = started.exited
      slot.error =
        `The ${server.name} language server is ${started.started ? "being" : "already being"} installed into ` +
        `${paths.dir} (in the background, also after this run ends; log: ${paths.log}). Its diagnostics follow ` +
        "once it is installed."
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      this.fail(slot, `Installing the ${server.name} language server failed to start: ${reason.slice(0, 400)}`)
      return
    }
    this.writeStatus()
    // Done when the lock is released (or its installer died); this process's own installer also says so by exiting.
    await new Promise<void>((done) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const poll = () => {
        clearTimeout(timer)
        if (this.stopped || lockHolder(paths.lock) === undefined) done()
        else timer = setTimeout(poll, 250).unref()
      }
      exited?.then(poll)
      poll()
    })
    if (this.stopped) return
    if (findServer(server, this.options)) {
      slot.state = "starting"
      slot.error = undefined
      slot.noticed = false
    } else {
      const tail = logTail(paths.log).split("\n").slice(-3).join("\n")
      this.fail(
        slot,
        `Installing the ${server.name} language server failed (log: ${paths.log})${tail ? `: ${tail}` : "."} ` +
          "Edits go on without its diagnostics; the next run tries again."
      )
    }
    this.writeStatus()
  }

  /**
   * Waits for a background install of the server for `path`, up to `timeoutMs`: `true` when one was under way and
   * has ended (its server can be tried now).
   */
  async installed(path: string, timeoutMs: number): Promise<boolean> {
    const server = serverFor(this.options.servers, path)
    const installing = server ? this.slots.get(server.name)?.installing : undefined
    if (!installing) return false
    let ended = false
    let timer: ReturnType<typeof setTimeout> | undefined
    // A timer that holds the process: the edit is waiting on it (the install's own polling does not).
    await Promise.race([
      installing.then(() => {
        ended = true
      }),
      new Promise((done) => {
        timer = setTimeout(done, timeoutMs)
      })
    ])
    clearTimeout(timer)
    return ended
  }

  /**
   * Syncs files to their servers and waits (up to `waitMs` each server, in parallel) for their diagnostics. Files no
   * server serves are left out; a server that cannot run is left out too (see {@link takeNotice}).
   */
  async diagnose(
    paths: ReadonlyArray<string>,
    waitMs: number,
    coldWaitMs = waitMs
  ): Promise<ReadonlyArray<FileDiagnostics>> {
    const byServer = new Map<ServerDefinition, Array<string>>()
    for (const path of paths) {
      const server = serverFor(this.options.servers, path)
      if (server) byServer.set(server, [...(byServer.get(server) ?? []), path])
    }
    const results = await Promise.all(
      [...byServer].map(async ([server, files]) => {
        const warm = this.slots.get(server.name)?.client?.exited === false
        const client = await this.client(server)
        if (!client) return []
        try {
          const synced = await Promise.all(files.map(async (path) => ({ path, since: await client.sync(path) })))
          const changed = synced.flatMap((file) => (file.since === undefined ? [] : [{ ...file, since: file.since }]))
          const since = Math.min(...changed.map((file) => file.since))
          const settled = await client.waitForDiagnostics(
            changed.map((file) => fileUri(file.path)),
            since,
            // A server that just started loads the project before its first diagnostics.
            warm ? waitMs : Math.max(waitMs, coldWaitMs)
          )
          return synced.map(({ path }) => ({
            path,
            server: server.name,
            diagnostics: client.diagnosticsFor(fileUri(path)),
            settled
          }))
        } catch {
          // The file vanished or the server died mid-sync: no diagnostics this time; a crash restarts it later.
          return []
        }
      })
    )
    return results.flat()
  }

  /** Every diagnostic the running servers hold, by file path. */
  allDiagnostics(): ReadonlyArray<{ readonly path: string; readonly diagnostics: ReadonlyArray<Diagnostic> }> {
    return [...this.slots.values()].flatMap((slot) =>
      slot.client
        ? slot.client.allDiagnostics().map(([uri, diagnostics]) => ({ path: fileURLToPath(uri), diagnostics }))
        : []
    )
  }

  /** The running client for a file, after syncing it (for hover, definition, references, symbols). */
  async clientFor(path: string, waitMs: number): Promise<LspClient | undefined> {
    const server = serverFor(this.options.servers, path)
    if (!server) return undefined
    const client = await this.client(server)
    // Diagnostics published for the file mean the server has loaded it (and its project): answers come complete.
    const since = client ? await client.sync(path) : undefined
    if (client && since !== undefined) await client.waitForDiagnostics([fileUri(path)], since, waitMs)
    return client
  }

  /** The running clients (for a workspace symbol search). */
  running(): ReadonlyArray<LspClient> {
    return [...this.slots.values()].flatMap((slot) => (slot.client && !slot.client.exited ? [slot.client] : []))
  }

  /** Stops every server (asks, then kills after a second) and removes the status file. */
  async stop(): Promise<void> {
    this.stopped = true
    await Promise.all([...this.slots.values()].map((slot) => slot.client?.stop()))
    if (this.options.statusFile) rmSync(this.options.statusFile, { force: true })
  }

  /** Kills every server at once (the process is exiting and cannot wait). */
  killAll(): void {
    this.stopped = true
    for (const slot of this.slots.values()) slot.client?.kill()
    if (this.options.statusFile) rmSync(this.options.statusFile, { force: true })
  }
}
