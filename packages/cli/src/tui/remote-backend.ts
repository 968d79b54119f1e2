import { isTrusted, resolvePaths } from "@lathe/core"
import type { AssistantMessage, LatheEvent, MessageWithParts, Session } from "@lathe/plugin/schema"
import { createLatheClient, type LatheClient } from "@lathe/sdk"
import { Effect } from "effect"
import type {
  Backend,
  BackendFactory,
  BackendHooks,
  BackendPrompt,
  LoadedSession,
  Outcome,
  RevertOptions,
  TurnEnd
} from "../backend.js"
import { notAvailableWhenAttached } from "../backend.js"
import type { CliIO } from "../io.js"

/** Why attaching failed, written for the person (the server's address and what to do). */
export class AttachError extends Error {
  override readonly name = "AttachError"
}

const failure = (error: unknown): { readonly ok: false; readonly message: string } => ({
  ok: false,
  message: error instanceof Error ? error.message : String(error)
})

/** Runs a client call; a rejection comes back as its message. */
const attempt = async <A>(call: () => Promise<A>): Promise<Outcome<A>> => {
  try {
    return { ok: true, value: await call() }
  } catch (error) {
    return failure(error)
  }
}

/** A server the UI checked it can talk to, and a client whose event streams report when they connect. */
export interface ServerConnection {
  readonly client: LatheClient
  /** `host:port`, for the footer. */
  readonly label: string
  /** Calls `listener` each time an event stream's answer arrives (the server follows the bus from then on). */
  readonly onStreamOpen: (listener: () => void) => () => void
}

/**
 * Checks the server at `url` answers `/health` (with `token`, when given). Rejects with an {@link AttachError}
 * saying what to do when the address is malformed, nothing listens there, or the token is missing or wrong.
 */
export const connectServer = async (url: string, token: string | undefined): Promise<ServerConnection> => {
  const server = serverConnection(url, token)
  try {
    await server.client.health()
  } catch (error) {
    const status = (error as { readonly status?: unknown }).status
    if (status === 401)
      throw new AttachError(
        `The server at ${url} needs a token: pass --token <token> or set LATHE_SERVER_TOKEN (the token \`lathe serve\` printed at start, or the one it was given).`
      )
    throw new AttachError(error instanceof Error ? error.message : String(error))
  }
  return server
}

/**
 * A connection to the server at `url` without a first round trip (`lathe run --attach`: the first call says what is
 * wrong). Throws an {@link AttachError} when the address is malformed or not http(s).
 */
export const serverConnection = (url: string, token: string | undefined): ServerConnection => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new AttachError(
      `--attach ${url}: not a URL. Give the address \`lathe serve\` printed, e.g. http://127.0.0.1:4096`
    )
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new AttachError(`--attach ${url}: only http:// and https:// servers can be attached to.`)
  const listeners = new Set<() => void>()
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init)
    const target = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
    if (new URL(target).pathname.endsWith("/events")) for (const listener of listeners) listener()
    return response
  }
  const client = createLatheClient({ baseUrl: url, token, fetch })
  return {
    client,
    label: parsed.host,
    onStreamOpen: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
}

interface Waiter {
  readonly sessionID: string
  /** The user message the turn answers: the turn is over once a newer assistant message exists (or it failed). */
  readonly after: string
  failed: boolean
  readonly resolve: (outcome: Outcome<TurnEnd | undefined>) => void
}

/** How long a new session's `session.created` event is awaited before following the session from its start. */
const CREATED_WAIT_MS = 2_000

/** How long a prompt waits for its session's event stream to open before sending anyway. */
const STREAM_OPEN_MS = 5_000

/**
 * The agent behind a `lathe serve` server, over the Promise client of `@lathe/sdk`. Events of the session in view
 * come from `GET /events?sessionID=` (a new session's from its first one, so nothing published before the stream
 * opened is lost); asks are answered over HTTP; a prompt sent while a turn runs goes to the server, which queues it.
 * Features the API has no route for (`!cmd`, `/compact`, `/models`, image attachments, trust) say so; a command
 * named in a prompt (`lathe run --command`) is expanded by the server.
 */
export class RemoteBackend implements Backend {
  readonly queuesPrompts = true
  private stream: AbortController | undefined
  private streamOpen: Promise<void> = Promise.resolve()
  private readonly newestAssistant = new Map<string, string>()
  /** The latest assistant message answering each user message (by its ID), and each session's latest error. */
  private readonly answers = new Map<string, AssistantMessage>()
  private readonly errors = new Map<string, string>()
  private readonly waiters = new Set<Waiter>()

  private constructor(
    private readonly io: CliIO,
    private readonly server: ServerConnection,
    private readonly hooks: BackendHooks
  ) {}

  /** A factory for `Controller.start` over a checked connection. */
  static factory(io: CliIO, server: ServerConnection): BackendFactory {
    return (hooks) => new RemoteBackend(io, server, hooks)
  }

  get attached(): string {
    return this.server.label
  }

  /** Every feature of `LocalFeature` needs the agent in this process. */
  supports(): boolean {
    return false
  }

  async setup() {
    const client = this.server.client
    const [agents, paths] = await Promise.all([attempt(() => client.agents()), resolvePaths(this.io.cwd, this.io.env)])
    if (!agents.ok) return agents
    // Custom commands are read here: this machine's trust store says whether the folder's may choose agent and model.
    const trusted = await Effect.runPromise(isTrusted(paths).pipe(Effect.orElseSucceed(() => false)))
    return {
      ok: true as const,
      value: {
        // @file mentions and custom commands are read here, where the person is; the agent works on the server.
        root: paths.root,
        agents: agents.value.map((a) => ({ name: a.name, mode: a.mode, hidden: false })),
        defaultAgent: undefined,
        notices: [],
        trustPrompt: undefined,
        history: { dataDir: paths.data, projectID: paths.projectID },
        configDir: paths.config,
        trusted
      }
    }
  }

  /**
   * Creates a session and follows it from its creation on. The stream of every session is open while the session is
   * made, so its `session.created` is shown and the session's stream resumes right after it, with what the server said
   * meanwhile to no session in particular (a notice about the model) replayed too.
   */
  async createSession(agent: string | undefined) {
    const client = this.server.client
    const watch = new AbortController()
    try {
      const all = client.events({ signal: watch.signal })
      const ready = await attempt(() => all.ready)
      if (!ready.ok) return ready
      const created = await attempt(() => client.sessions.create(agent ? { agent } : {}))
      if (!created.ok) return created
      const timer = setTimeout(() => watch.abort(), CREATED_WAIT_MS)
      let announced: LatheEvent | undefined
      let after: string | undefined
      try {
        for await (const event of all)
          if (event.type === "session.created" && event.session.id === created.value.id) {
            announced = event
            after = all.lastEventId
            break
          }
      } catch {
        // the stream of every session failed: the session's own replays its start instead
      } finally {
        clearTimeout(timer)
      }
      this.follow(created.value.id, after ?? "0")
      if (announced !== undefined && after !== undefined) {
        this.track(announced)
        this.hooks.onEvent(announced)
      }
      return created
    } finally {
      watch.abort()
    }
  }

  async discardIfEmpty(sessionID: string) {
    const client = this.server.client
    const messages = await attempt(() => client.sessions.messages(sessionID))
    if (!messages.ok || messages.value.length > 0) return false
    return (await attempt(() => client.sessions.delete(sessionID))).ok
  }

  /**
   * Follows one session's events (replacing the stream of the one before), from now or after `lastEventId` ("0": from
   * the session's first event).
   */
  private follow(sessionID: string, lastEventId?: string): void {
    this.stream?.abort()
    this.answers.clear() // kept for the session in view only
    const stream = new AbortController()
    this.stream = stream
    let opened: () => void = () => undefined
    this.streamOpen = Promise.race([
      new Promise<void>((resolve) => {
        opened = resolve
      }),
      new Promise<void>((resolve) => setTimeout(resolve, STREAM_OPEN_MS).unref())
    ])
    const stop = this.server.onStreamOpen(() => opened())
    const events = this.server.client.events({
      sessionID,
      signal: stream.signal,
      ...(lastEventId !== undefined ? { lastEventId } : {})
    })
    void (async () => {
      let failed: string | undefined
      try {
        for await (const event of events) {
          this.track(event)
          this.hooks.onEvent(event)
        }
      } catch (error) {
        if (!stream.signal.aborted) {
          failed = failure(error).message
          this.hooks.onWarning("events", failed)
        }
      } finally {
        stop()
        if (!stream.signal.aborted) this.streamEnded(sessionID, failed)
      }
    })()
  }

  /** The session's stream ended (or failed) on its own: the prompts waiting on it are told instead of waiting on. */
  private streamEnded(sessionID: string, failed: string | undefined): void {
    for (const waiter of [...this.waiters].filter((w) => w.sessionID === sessionID)) {
      this.waiters.delete(waiter)
      waiter.resolve(failed === undefined ? { ok: true, value: this.turnEnd(waiter) } : { ok: false, message: failed })
    }
  }

  /** Notes what ends a turn, and settles the prompts waiting for it. */
  private track(event: LatheEvent): void {
    if (event.type === "message.updated" && event.message.role === "assistant") {
      const newest = this.newestAssistant.get(event.message.sessionID)
      if (newest === undefined || event.message.id > newest)
        this.newestAssistant.set(event.message.sessionID, event.message.id)
      // Kept from the first event (the prompt's own answer may arrive before the server's reply to it).
      this.answers.set(event.message.parentID, event.message)
    }
    if (event.type === "session.error") {
      this.errors.set(event.sessionID, event.error.message)
      for (const w of this.waiters) if (w.sessionID === event.sessionID) w.failed = true
    }
    const idle = event.type === "session.idle" || (event.type === "session.status" && event.status.type === "idle")
    if (idle || event.type === "session.error") void this.settle(event.sessionID)
  }

  /** Resolves the waiters of a session whose turn ended, once the server says no turn runs there any more. */
  private async settle(sessionID: string): Promise<void> {
    const done = [...this.waiters].filter(
      (w) => w.sessionID === sessionID && (w.failed || (this.newestAssistant.get(sessionID) ?? "") > w.after)
    )
    if (done.length === 0) return
    const info = await attempt(() => this.server.client.sessions.get(sessionID))
    // Another turn started for a prompt queued behind this one: the next idle settles it.
    if (info.ok && info.value.status !== "idle") return
    for (const waiter of done) {
      this.waiters.delete(waiter)
      waiter.resolve({ ok: true, value: this.turnEnd(waiter) })
    }
  }

  /** What a waiter's turn ended with (forgotten once told). */
  private turnEnd(waiter: Waiter): TurnEnd {
    const answer = this.answers.get(waiter.after)
    this.answers.delete(waiter.after)
    return { answer, error: this.errors.get(waiter.sessionID) }
  }

  async prompt(input: BackendPrompt): Promise<Outcome<TurnEnd | undefined>> {
    await this.streamOpen
    const client = this.server.client
    this.errors.delete(input.sessionID)
    // The route takes text only: attached text files and context go inline, after what the person typed. A command
    // goes by name, expanded where the plugins run (the server), with the arguments as typed.
    const text = input.parts
      .flatMap((p) => (p.type === "text" ? [p.text] : []))
      .join("\n\n")
      .trim()
    const accepted = await attempt(() =>
      client.sessions.prompt(input.sessionID, {
        ...(input.command === undefined
          ? { text: text || input.text }
          : {
              text: input.text,
              command: input.command,
              ...(input.arguments !== undefined ? { arguments: [...input.arguments] } : {})
            }),
        ...(input.agent ? { agent: input.agent } : {}),
        ...(input.model ? { model: input.model } : {})
      })
    )
    if (!accepted.ok) return accepted
    for (const notice of accepted.value.notices ?? []) input.onNotice?.(notice)
    if (input.signal.aborted) {
      // Stopped while the prompt was on its way: the turn it started is stopped too.
      void attempt(() => client.sessions.abort(input.sessionID))
      return { ok: false, message: "aborted" }
    }
    return new Promise<Outcome<TurnEnd | undefined>>((resolve) => {
      const waiter: Waiter = {
        sessionID: input.sessionID,
        after: accepted.value.messageID,
        failed: false,
        resolve: (outcome) => {
          input.signal.removeEventListener("abort", onAbort)
          resolve(outcome)
        }
      }
      const onAbort = () => {
        this.waiters.delete(waiter)
        this.answers.delete(waiter.after)
        void attempt(() => client.sessions.abort(input.sessionID))
        waiter.resolve({ ok: false, message: "aborted" })
      }
      input.signal.addEventListener("abort", onAbort, { once: true })
      this.waiters.add(waiter)
      // The turn may have ended before the waiter was registered.
      void this.settle(input.sessionID)
    })
  }

  /** Who answered is not sent: the server records a reply over HTTP as the person's. */
  replyPermission(id: string, reply: "once" | "always" | "reject", message: string | undefined) {
    return attempt(() =>
      this.server.client.permissions.reply(id, { reply, ...(reply === "reject" && message ? { message } : {}) })
    )
  }

  replyQuestion(id: string, answers: ReadonlyArray<ReadonlyArray<string>> | undefined, reason?: string) {
    return attempt(() =>
      this.server.client.questions.reply(
        id,
        answers ? { answers: answers.map((a) => [...a]) } : { dismissed: reason ?? "The user dismissed the questions." }
      )
    )
  }

  async revert(verb: "undo" | "redo", sessionID: string, options: RevertOptions = {}) {
    const sessions = this.server.client.sessions
    const result = await attempt(() =>
      verb === "undo" ? sessions.undo(sessionID, options) : sessions.redo(sessionID, options)
    )
    return result.ok
      ? { ok: true as const, value: { files: result.value.files, overwritten: result.value.overwritten ?? [] } }
      : result
  }

  turns(sessionID: string) {
    return attempt(() => this.server.client.sessions.turns(sessionID))
  }

  async sessions(): Promise<ReadonlyArray<Session>> {
    const result = await attempt(() => this.server.client.sessions.list({ limit: 200 }))
    return result.ok ? result.value.filter((s) => s.parentID === undefined) : []
  }

  async load(id: string | undefined): Promise<Outcome<LoadedSession | undefined>> {
    const client = this.server.client
    const loaded = await attempt(async () => {
      const session = id ? await client.sessions.get(id) : (await client.sessions.list({ limit: 1 }))[0]
      if (!session) return undefined
      const messages = await client.sessions.messages(session.id)
      // The API lists top-level sessions only: subagents' sessions are found through the task calls that ran them.
      const children = new Map<string, ReadonlyArray<MessageWithParts>>()
      for (const childID of childSessions(messages))
        children.set(childID, await client.sessions.messages(childID).catch(() => []))
      return { session, messages, children }
    })
    if (loaded.ok && loaded.value) this.follow(loaded.value.session.id)
    return loaded
  }

  async models(): Promise<ReadonlyArray<string>> {
    return []
  }

  /** No route resolves models: the label is the chosen one (the server checks it with the prompt). */
  async resolveModel(model: string | undefined) {
    return { ok: true as const, value: { label: model ?? "server's model", contextLimit: 0 } }
  }

  async compact(): Promise<Outcome<void>> {
    return { ok: false, message: "/compact is not available when attached to a server." }
  }

  async trust(): Promise<Outcome<void>> {
    return { ok: false, message: "Trust is decided where the server runs: run lathe trust there." }
  }

  async reload(): Promise<Outcome<void>> {
    return { ok: false, message: notAvailableWhenAttached("/connect") }
  }

  async decline(): Promise<Outcome<void>> {
    return { ok: false, message: "Trust is decided where the server runs: run lathe trust there." }
  }

  async dispose(): Promise<void> {
    this.stream?.abort()
    for (const waiter of this.waiters) waiter.resolve({ ok: false, message: "detached" })
    this.waiters.clear()
  }
}

/** The child sessions the task calls of `messages` ran in. */
const childSessions = (messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const message of messages)
    for (const part of message.parts) {
      if (part.type !== "tool" || part.tool !== "task") continue
      const state = part.state
      const fromMetadata = "metadata" in state ? state.metadata?.sessionID : undefined
      const fromInput = state.input.session_id
      const id = typeof fromMetadata === "string" ? fromMetadata : typeof fromInput === "string" ? fromInput : undefined
      if (id) ids.add(id)
    }
  return [...ids]
}
