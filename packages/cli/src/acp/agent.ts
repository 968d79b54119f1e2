import * as acp from "@agentclientprotocol/sdk"
import type { ListedCommand } from "@lathe/core"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { cliLogger } from "../app.js"
import type { Backend, BackendSetup } from "../backend.js"
import { refusedAttachment, unsupportedAttachment } from "../file-attachments.js"
import type { CliIO } from "../io.js"
import { LocalBackend } from "../tui/local-backend.js"
import { cliVersion } from "../version.js"
import { type ClientSideHost, clientFiles, clientTerminal } from "./client-side.js"
import { mcpBlock } from "./mcp-servers.js"
import { readPrompt } from "./prompt.js"
import {
  diffContent,
  historyUpdates,
  planOf,
  stopReason,
  toolCallUpdate,
  toolContent,
  toolKind,
  toolLocations,
  toolStatus,
  toolTitle
} from "./updates.js"

// `lathe acp`: the Agent Client Protocol's agent side (the official SDK's), over the same `Backend` the interactive
// session drives (`LocalBackend`, the one turn-runner). An editor's session is a Lathe session; its prompt runs as
// `lathe run`'s does; Lathe's events become `session/update`s; every permission ask goes to the editor's person.
//
// The editor's `fs` and `terminal` capabilities (its `clientCapabilities` at `initialize`) become the plugins'
// `ctx.files` / `ctx.terminal` (`LocalBackend`'s `hostSide`): the file tools read and write through its buffers, bash
// runs in its terminal. What it does not offer, Lathe does itself (see client-side.ts).

/** The JSON-RPC code of an internal error, used with the message a person can act on. */
const INTERNAL = -32603

/** One project's agent: a backend for a folder and the editor's MCP servers, with what it told at start. */
interface Project {
  readonly backend: Backend
  readonly setup: BackendSetup
  /** Routes its events to the sessions they belong to. */
  readonly sessions: Set<Session>
}

/** What streams to the editor while a prompt runs. */
interface Turn {
  readonly abort: AbortController
  cancelled: boolean
}

/** An editor's session: a Lathe session, with its agent (the mode) and model. */
interface Session {
  readonly id: string
  readonly project: Project
  agent: string
  model: string | undefined
  turn: Turn | undefined
  /** Subagent sessions started from this one (their permission asks come here). */
  readonly children: Set<string>
  /** Text already sent, by part ID (deltas, then the full part: only what is new goes). */
  readonly sent: Map<string, number>
  /** Part kinds by part ID, for `part.delta` (text or reasoning). */
  readonly kinds: Map<string, "text" | "reasoning">
  /** The calls the editor was told about. */
  readonly calls: Set<string>
  /** The editor terminal each call's command ran in, by call ID: the call keeps showing it when it ends. */
  readonly terminals: Map<string, string>
  /** Assistant message IDs: only their parts stream (the person's prompt is the editor's own). */
  readonly assistant: Set<string>
  /** Updates go out in order, one after the other. */
  queue: Promise<void>
}

const errorOf = (message: string, data?: unknown) => new acp.RequestError(INTERNAL, message, data)

/**
 * Serves the protocol on `stream` until the editor closes it. Everything the agent logs goes to `io.stderr`; the
 * stream is the only thing written to the editor.
 */
export const serveAcp = async (io: CliIO, stream: acp.Stream): Promise<void> => {
  const projects = new Map<string, Promise<Project>>()
  const sessions = new Map<string, Session>()
  let client: acp.AgentContext | undefined
  /** What the editor offers (`initialize`): its buffers and terminal for the tools. */
  let capabilities: acp.ClientCapabilities | undefined
  let closing: AbortSignal = new AbortController().signal

  const send = (session: Session, update: acp.SessionUpdate) => {
    const to = client
    if (!to) return
    session.queue = session.queue.then(() =>
      to.notify(acp.methods.client.session.update, { sessionId: session.id, update }).catch((error: unknown) => {
        // After the editor went away, nothing is left to tell.
        if (!closing.aborted) io.stderr(`lathe acp: an update was not sent: ${String(error)}\n`)
      })
    )
  }

  /** The session an event belongs to: its own, or the one whose subagent it is. */
  const owner = (project: Project, sessionID: string): Session | undefined => {
    for (const session of project.sessions)
      if (session.id === sessionID || session.children.has(sessionID)) return session
    return undefined
  }

  const onEvent = (project: Project, event: LatheEvent) => {
    if (event.type === "session.created" && event.session.parentID) {
      const parent = owner(project, event.session.parentID)
      parent?.children.add(event.session.id)
      return
    }
    if (event.type === "permission.asked") {
      const session = owner(project, event.sessionID)
      if (session) void askPermission(session, event)
      return
    }
    // plan_exit/plan_enter handed the session to another agent (the person approved): the mode, and later prompts, follow.
    const switched = event.type === "session.updated" ? sessions.get(event.session.id) : undefined
    if (event.type === "session.updated" && switched && event.session.agent && event.session.agent !== switched.agent) {
      switched.agent = event.session.agent
      return send(switched, { sessionUpdate: "current_mode_update", currentModeId: switched.agent })
    }
    if (event.type === "question.asked") {
      // ACP's stable surface has no way to put free questions to the person: the model decides, and says so.
      void project.backend.replyQuestion(
        event.id,
        undefined,
        "The editor cannot show these questions; decide yourself and say what you chose."
      )
      return
    }
    const sessionID =
      "sessionID" in event
        ? event.sessionID
        : "part" in event
          ? event.part.sessionID
          : event.type === "message.updated"
            ? event.message.sessionID
            : undefined
    // A subagent's own text and calls stay in its session (the editor sees the task call); its asks come above.
    const session = sessionID === undefined ? undefined : sessions.get(sessionID)
    if (!session?.turn) return
    streamEvent(session, event)
  }

  /** One event of a running turn as the updates it makes. */
  const streamEvent = (session: Session, event: LatheEvent) => {
    const root = session.project.setup.root
    switch (event.type) {
      case "message.updated":
        if (event.message.role === "assistant") session.assistant.add(event.message.id)
        return
      case "part.updated": {
        const part = event.part
        if ((part.type === "text" || part.type === "reasoning") && session.assistant.has(part.messageID)) {
          session.kinds.set(part.id, part.type)
          const done = session.sent.get(part.id) ?? 0
          if (part.text.length > done) {
            session.sent.set(part.id, part.text.length)
            send(session, chunk(part.type, part.text.slice(done), part.messageID))
          }
        }
        return
      }
      case "part.delta": {
        if (!session.assistant.has(event.messageID)) return
        session.sent.set(event.partID, (session.sent.get(event.partID) ?? 0) + event.delta.length)
        send(session, chunk(session.kinds.get(event.partID) ?? "text", event.delta, event.messageID))
        return
      }
      case "tool.pending":
      case "tool.running":
      case "tool.completed":
      case "tool.error": {
        const part = { callID: event.callID, tool: event.tool, state: event.state }
        if (!session.calls.has(event.callID)) {
          session.calls.add(event.callID)
          send(session, toolCallUpdate(part, root))
        } else
          send(session, {
            sessionUpdate: "tool_call_update",
            toolCallId: event.callID,
            title: toolTitle(event.tool, event.state),
            kind: toolKind(event.tool),
            status: toolStatus(event.state),
            locations: toolLocations(event.tool, event.state, root),
            rawInput: event.state.input,
            ...(event.state.status === "completed" || event.state.status === "error"
              ? { content: [...terminalContent(session, event.callID), ...toolContent(event.tool, event.state, root)] }
              : {}),
            ...(event.state.status === "completed" ? { rawOutput: { output: event.state.output } } : {})
          })
        const plan = planOf(part)
        if (plan) send(session, plan)
        return
      }
      case "notice":
        send(session, {
          sessionUpdate: "notice",
          severity: event.level === "warn" ? "warning" : "info",
          title: event.message
        })
        return
      default:
        return
    }
  }

  /** A permission ask as `session/request_permission`; the editor's answer goes back as the person's reply. */
  const askPermission = async (session: Session, event: Extract<LatheEvent, { type: "permission.asked" }>) => {
    const to = client
    const backend = session.project.backend
    if (!to) {
      await backend.replyPermission(event.id, "reject", "No editor is connected to answer the permission ask.")
      return
    }
    const diff =
      typeof event.metadata.diff === "string" ? diffContent(event.metadata.diff, session.project.setup.root) : []
    const command = typeof event.metadata.command === "string" ? event.metadata.command : undefined
    const tool = typeof event.metadata.tool === "string" ? event.metadata.tool : event.permission
    const title = `${event.permission}${command ? `: ${command}` : event.patterns.length > 0 ? ` ${event.patterns.join(", ")}` : ""}`
    // An ask only a person may approve (a rerun outside the sandbox, a protected path) still goes to the editor, whose
    // person answers it; Lathe never answers it itself, and says so to the editor.
    const personOnly = event.metadata.requiresPerson === true
    await session.queue
    try {
      const answer = await to.request(acp.methods.client.session.requestPermission, {
        sessionId: session.id,
        toolCall: {
          toolCallId: event.callID ?? event.id,
          title,
          kind: toolKind(tool),
          status: "pending",
          ...(diff.length > 0 ? { content: diff } : {}),
          rawInput: { permission: event.permission, patterns: event.patterns, always: event.always }
        },
        options: [
          { optionId: "once", name: "Allow once", kind: "allow_once" },
          {
            optionId: "always",
            name: event.always.length > 0 ? `Always allow ${event.always.join(", ")}` : "Always allow",
            kind: "allow_always"
          },
          { optionId: "reject", name: "Reject", kind: "reject_once" }
        ],
        ...(personOnly ? { _meta: { "lathe/requiresPerson": true } } : {})
      })
      const picked = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "reject"
      const reply = picked === "once" || picked === "always" ? picked : "reject"
      await backend.replyPermission(event.id, reply, undefined)
    } catch (error) {
      io.stderr(`lathe acp: the permission ask could not be put to the editor: ${String(error)}\n`)
      await backend.replyPermission(event.id, "reject", "The editor did not answer the permission ask.")
    }
  }

  /** The backend for `cwd` with the editor's MCP servers: one per folder and server list, built on first use. */
  const projectFor = (cwd: string, servers: ReadonlyArray<acp.McpServer>): Promise<Project> => {
    const key = JSON.stringify([cwd, servers])
    const known = projects.get(key)
    if (known) return known
    const made = (async () => {
      // The agent's own `io.stdout` writes (none expected) go to stderr too: stdout is the protocol's.
      const here: CliIO = { ...io, cwd, stdout: io.stderr }
      const holder: { project?: Project } = {}
      const mcpServers = mcpBlock(servers)
      const side: ClientSideHost = {
        client: () => client,
        sessionOf: (sessionID) => (holder.project ? owner(holder.project, sessionID)?.id : undefined),
        onTerminal: (sessionID, callID, terminalId) => {
          const session = holder.project ? owner(holder.project, sessionID) : undefined
          if (!session) return
          session.terminals.set(callID, terminalId)
          send(session, {
            sessionUpdate: "tool_call_update",
            toolCallId: callID,
            content: [{ type: "terminal", terminalId }]
          })
        },
        warn: io.stderr
      }
      const files = clientFiles(capabilities, side)
      const terminal = clientTerminal(capabilities, side)
      const backend = LocalBackend.make(
        here,
        {
          onEvent: (event) => {
            if (holder.project) onEvent(holder.project, event)
          },
          onWarning: (title, text) => io.stderr(`lathe: ${title}: ${text}\n`)
        },
        {
          logger: cliLogger(here),
          ...(servers.length > 0 ? { mcpServers } : {}),
          ...(files || terminal ? { hostSide: { ...(files ? { files } : {}), ...(terminal ? { terminal } : {}) } } : {})
        }
      )
      const setup = await backend.setup()
      if (!setup.ok) {
        await backend.dispose()
        throw errorOf(`Lathe could not start in ${cwd}: ${setup.message}`)
      }
      for (const notice of setup.value.configNotices ?? setup.value.notices) io.stderr(`lathe: ${notice}\n`)
      const project: Project = { backend, setup: setup.value, sessions: new Set() }
      holder.project = project
      // An MCP server that connects later brings its prompts: the editor's command list follows.
      const plugins = await backend.plugins?.()
      if (plugins?.ok)
        plugins.value.watch(() => {
          for (const session of project.sessions) announceCommands(session)
        })
      return project
    })()
    projects.set(key, made)
    made.catch(() => projects.delete(key))
    return made
  }

  /** The primary agents, as session modes. */
  const modes = (session: Session): acp.SessionModeState => {
    const primary = session.project.setup.agents.filter((agent) => agent.mode !== "subagent" && agent.hidden !== true)
    return {
      currentModeId: session.agent,
      availableModes: primary.map((agent) => ({ id: agent.name, name: agent.name }))
    }
  }

  /** The mode and model pickers (`configOptions`: the protocol's model selector). */
  const configOptions = async (session: Session): Promise<Array<acp.SessionConfigOption>> => {
    const backend = session.project.backend
    const resolved = await backend.resolveModel(session.model, session.agent)
    const current = resolved.ok ? resolved.value.label : (session.model ?? "")
    const models = [...new Set([...(current ? [current] : []), ...(await backend.models())])]
    const mode = modes(session)
    return [
      {
        type: "select",
        id: "mode",
        name: "Agent",
        category: "mode",
        currentValue: mode.currentModeId,
        options: mode.availableModes.map((m) => ({ value: m.id, name: m.name }))
      },
      ...(current
        ? [
            {
              type: "select" as const,
              id: "model",
              name: "Model",
              category: "model",
              currentValue: current,
              options: models.map((model) => ({ value: model, name: model }))
            }
          ]
        : [])
    ]
  }

  /** The commands the session offers (custom command files, plugins' and MCP servers' prompts). */
  const commandsOf = async (project: Project): Promise<ReadonlyArray<ListedCommand>> => {
    const plugins = await project.backend.plugins?.()
    if (!plugins?.ok) return []
    return Effect.runPromise(plugins.value.commands)
  }

  const announceCommands = (session: Session) => {
    void commandsOf(session.project).then((commands) =>
      send(session, {
        sessionUpdate: "available_commands_update",
        availableCommands: commands.map((command) => ({
          name: command.name,
          description: command.description,
          ...(command.arguments.length > 0
            ? { input: { hint: command.arguments.map((a) => `<${a.name}>`).join(" ") } }
            : {})
        }))
      })
    )
  }

  const open = async (
    id: string,
    project: Project,
    agent: string | undefined
  ): Promise<{ session: Session; response: acp.NewSessionResponse }> => {
    const primary = project.setup.agents.filter((a) => a.mode !== "subagent" && a.hidden !== true)
    const session: Session = {
      id,
      project,
      agent: agent ?? project.setup.defaultAgent ?? primary[0]?.name ?? "build",
      model: undefined,
      turn: undefined,
      children: new Set(),
      sent: new Map(),
      kinds: new Map(),
      calls: new Set(),
      terminals: new Map(),
      assistant: new Set(),
      queue: Promise.resolve()
    }
    // Loaded again (the editor reopened it): the new view replaces the old one.
    const before = sessions.get(id)
    before?.project.sessions.delete(before)
    sessions.set(id, session)
    project.sessions.add(session)
    return { session, response: { sessionId: id, modes: modes(session), configOptions: await configOptions(session) } }
  }

  /** Fails `authenticate` and `session/new` with how to set a key when the model's provider has none. */
  const needsKey = async (project: Project, agent: string | undefined): Promise<void> => {
    const resolved = await project.backend.resolveModel(undefined, agent ?? project.setup.defaultAgent ?? "build")
    if (resolved.ok) return
    const tag = (resolved.error as { _tag?: string } | undefined)?._tag
    if (tag === "ProviderNotConfigured")
      throw new acp.RequestError(
        -32000,
        `${resolved.message} Run \`lathe auth login\` in a terminal, or set the provider's API key variable ` +
          "(e.g. ANTHROPIC_API_KEY) in the environment the editor starts Lathe with.",
        { authMethods: ["lathe-auth-login"] }
      )
  }

  const sessionOf = (sessionId: string): Session => {
    const session = sessions.get(sessionId)
    if (!session) throw acp.RequestError.sessionNotFound(sessionId)
    return session
  }

  const app = acp
    .agent({ name: "lathe" })
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      capabilities = params.clientCapabilities
      const project = await projectFor(io.cwd, [])
      const resolved = await project.backend.resolveModel(undefined, project.setup.defaultAgent ?? "build")
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "lathe", title: "Lathe", version: cliVersion() },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: {
            // Images when the default model takes them (the catalogue says); a session on another model is checked
            // again at each prompt.
            image: resolved.ok && resolved.value.takes?.image === true,
            embeddedContext: true
          },
          mcpCapabilities: { http: true, sse: true }
        },
        authMethods: [
          {
            type: "terminal",
            id: "lathe-auth-login",
            name: "Sign in or store an API key",
            description: "Runs `lathe auth login`: pick a provider, then sign in or paste its API key.",
            args: ["auth", "login"]
          }
        ]
      }
    })
    .onRequest(acp.methods.agent.authenticate, async () => {
      await needsKey(await projectFor(io.cwd, []), undefined)
      return {}
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const project = await projectFor(params.cwd, params.mcpServers)
      await needsKey(project, undefined)
      const created = await project.backend.createSession(undefined)
      if (!created.ok) throw errorOf(created.message)
      const { session, response } = await open(created.value.id, project, created.value.agent)
      setImmediate(() => announceCommands(session))
      return response
    })
    .onRequest(acp.methods.agent.session.load, async ({ params }) => {
      const project = await projectFor(params.cwd, params.mcpServers)
      const loaded = await project.backend.load(params.sessionId)
      if (!loaded.ok) throw errorOf(loaded.message)
      if (!loaded.value) throw acp.RequestError.sessionNotFound(params.sessionId)
      const { session, response } = await open(loaded.value.session.id, project, loaded.value.session.agent)
      for (const child of loaded.value.children.keys()) session.children.add(child)
      // The history is sent before the response, as the protocol asks, in order.
      for (const update of historyUpdates(loaded.value.messages, project.setup.root)) send(session, update)
      await session.queue
      setImmediate(() => announceCommands(session))
      return { modes: response.modes ?? null, configOptions: response.configOptions ?? null }
    })
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
      const session = sessionOf(params.sessionId)
      if (!modes(session).availableModes.some((mode) => mode.id === params.modeId))
        throw acp.RequestError.invalidParams(undefined, `There is no primary agent "${params.modeId}".`)
      session.agent = params.modeId
      return {}
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const session = sessionOf(params.sessionId)
      const value = String(params.value)
      if (params.configId === "mode") {
        if (!modes(session).availableModes.some((mode) => mode.id === value))
          throw acp.RequestError.invalidParams(undefined, `There is no primary agent "${value}".`)
        session.agent = value
      } else if (params.configId === "model") {
        const resolved = await session.project.backend.resolveModel(value, session.agent)
        if (!resolved.ok) throw acp.RequestError.invalidParams(undefined, resolved.message)
        session.model = value
      } else throw acp.RequestError.invalidParams(undefined, `There is no option "${params.configId}".`)
      return { configOptions: await configOptions(session) }
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
      const session = sessionOf(params.sessionId)
      if (session.turn) throw acp.RequestError.invalidRequest(undefined, "A prompt is already running in this session.")
      const { backend, setup } = session.project
      const prompt = await readPrompt(params.prompt, setup.root)
      if (typeof prompt === "string") throw acp.RequestError.invalidParams(undefined, prompt)
      const unsupported = await unsupportedAttachment(backend, prompt.files, session.model, session.agent)
      if (unsupported)
        throw acp.RequestError.invalidParams(undefined, unsupported.replace(/ \(-m\)/, " (the model picker)"))
      const refused = await refusedAttachment(backend, session.id, prompt.linked, session.agent)
      if (refused) throw acp.RequestError.invalidParams(undefined, refused.replace(/^-f /, ""))
      // `/name args`: a command of the session's (a command file's, a plugin's, an MCP prompt), as `lathe run --command`.
      const slash = /^\/(\S+)\s*([\s\S]*)$/.exec(prompt.text)
      const command =
        slash?.[1] !== undefined && (await commandsOf(session.project)).some((c) => c.name === slash[1])
          ? { command: slash[1], text: slash[2] ?? "" }
          : undefined
      const turn: Turn = { abort: new AbortController(), cancelled: false }
      session.turn = turn
      session.sent.clear()
      session.kinds.clear()
      try {
        const end = await backend.prompt({
          sessionID: session.id,
          text: command ? command.text : prompt.text,
          parts: prompt.parts,
          agent: session.agent,
          model: session.model,
          allowSubagents: false,
          expand: true,
          // The editor names its threads itself (from the first prompt): no model call for a title.
          title: false,
          ...(command ? { command: command.command } : {}),
          onNotice: (text) => send(session, { sessionUpdate: "notice", severity: "warning", title: text }),
          signal: turn.abort.signal
        })
        await session.queue
        if (!end.ok) {
          if (turn.cancelled) return { stopReason: "cancelled" as const }
          throw errorOf(end.message)
        }
        const answer = end.value?.answer
        const reason = stopReason(answer, turn.cancelled)
        if (reason === undefined)
          throw errorOf(answer?.error?.message ?? end.value?.error ?? "The turn failed.", answer?.error)
        return { stopReason: reason }
      } finally {
        session.turn = undefined
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const turn = sessions.get(params.sessionId)?.turn
      if (!turn) return
      turn.cancelled = true
      turn.abort.abort()
    })

  const connection = app.connect(stream)
  client = connection.client
  closing = connection.signal
  await connection.closed
  for (const session of sessions.values()) session.turn?.abort.abort()
  for (const project of projects.values()) await project.then((p) => p.backend.dispose()).catch(() => undefined)
}

/** The editor terminal a call's command ran in, as the call's first content (the editor keeps showing it). */
const terminalContent = (session: Session, callID: string): Array<acp.ToolCallContent> => {
  const terminalId = session.terminals.get(callID)
  return terminalId === undefined ? [] : [{ type: "terminal", terminalId }]
}

const chunk = (kind: "text" | "reasoning", text: string, messageId: string): acp.SessionUpdate => ({
  sessionUpdate: kind === "text" ? "agent_message_chunk" : "agent_thought_chunk",
  content: { type: "text", text },
  messageId
})
