import { type LatheEvent, type PromptPart, ProviderNotConfigured } from "@lathe/core"
import { cliLogger } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import { attachResources, expandCommand } from "../contributions.js"
import type { CliIO, Command } from "../io.js"
import { emptyTotals, type TextRenderer, type Totals, textRenderer, totalsLine } from "../render.js"
import { plainText } from "../terminal-text.js"
import type { Backend, Outcome, TurnEnd } from "../tui/backend.js"
import { LocalBackend } from "../tui/local-backend.js"
import { colorEnabled, createStyle } from "../tui/style.js"
import { askAnswerer } from "./asks.js"

/** `lathe run`, declared once: its parser, `--help` and usage errors come from the command kit. */
export const runSpec = defineCommand({
  name: "run",
  usage: ["[options] <message...>", "[options] --command <server>:<prompt> [key=value | value]..."],
  description: `Runs one turn of the agent on this directory's project: the model answers, calls tools (asking you for
permission where the rules say so), and stops when the task is done. The message may also come on stdin.
With --command, an MCP server's prompt is the message; the words after it are its arguments. In a message,
@<server>:<uri> attaches that MCP resource. A message that starts with @<subagent> (lathe agents lists them) runs
that subagent for this prompt only; the session keeps its own agent. A subagent with no model of its own runs on
the model of the turn that calls it (-m, else its caller's).`,
  options: {
    agent: {
      type: "string",
      value: "<name>",
      description: "The agent to run (default: the configured default_agent, else build)"
    },
    model: {
      type: "string",
      short: "m",
      value: "<p/m>",
      description: "The model, as provider/model (default: the agent's, else the configured model)"
    },
    variant: {
      type: "string",
      value: "<level>",
      choices: ["low", "medium", "high"],
      description: `How hard a reasoning model thinks for this run: low, medium or high (default: the
agent's or the model's "reasoning" in lathe.json, else the provider's default)`
    },
    session: { type: "string", short: "s", value: "<id>", description: "Continue this session" },
    continue: { type: "boolean", short: "c", description: "Continue the most recent session of this work tree" },
    command: {
      type: "string",
      value: "<s>:<p>",
      description: "Run the MCP prompt <p> of server <s> (arguments as key=value, or in the prompt's order)"
    },
    format: {
      type: "string",
      value: "<fmt>",
      choices: ["text", "json"],
      description: "text (default) or json: every event as one JSON object per line on stdout"
    },
    yes: {
      type: "boolean",
      short: "y",
      description: `Allow every permission ask (deny rules still hold); without a terminal, asks are
rejected unless --yes is given`
    },
    attach: {
      type: "string",
      value: "<url>",
      description: `Drive a running server (lathe serve) instead of running the agent here; sessions run
in the server's directory, asks are answered here over HTTP`
    },
    token: {
      type: "string",
      value: "<token>",
      description: `The server's bearer token (default: LATHE_SERVER_TOKEN, else, for a server on this
machine, the one it saved in the data dir)`
    }
  },
  positionals: { name: "<message...>" },
  footer: `A turn stops after max_steps model calls (default 200; lathe.json): lathe run -c "continue" goes on.

Exit codes: 0 done, 1 failed or stopped short (the error is printed), 2 bad usage, 130 aborted (Ctrl-C).`
})

const readAll = async (stream: NodeJS.ReadableStream): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString("utf8")
}

const errorText = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/** How long a run stopped on a server waits for the server to report the turn over before it exits anyway. */
const ABORT_GRACE_MS = 5_000

/** What the prompt is: the person's message, or a command's text, and what goes with it (resources, files). */
interface Message {
  readonly text: string
  readonly attached: ReadonlyArray<PromptPart>
  /** The agent and model a command names (`--agent` and `-m` win). */
  readonly agent?: string
  readonly model?: string
}

/**
 * `lathe run`: one turn, rendered as text or as JSON events, on a {@link Backend}: the agent in this process, or a
 * `lathe serve` server with `--attach` (the interactive session's two backends). Asks are answered by `./asks.ts`.
 */
export const runCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(runSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values, positionals } = parsed
  const format = values.format ?? "text"
  let message = values.command ? "" : positionals.join(" ").trim()
  if (!message && !values.command && io.stdin && !io.stdinIsTTY) message = (await readAll(io.stdin)).trim()
  if (!message && !values.command) {
    io.stderr('lathe run: no message. Give the task as arguments (lathe run "fix the failing test") or on stdin.\n')
    return 2
  }
  if (values.session && values.continue) {
    io.stderr("lathe run: use either --session or --continue, not both.\n")
    return 2
  }
  const variant = values.variant
  if (variant !== undefined && values.attach !== undefined) {
    io.stderr("lathe run: --variant applies to a run on this machine; it cannot be used with --attach.\n")
    return 2
  }
  if (values.attach !== undefined && values.command) {
    io.stderr("lathe run: --command runs an MCP prompt of this machine's servers; it cannot be used with --attach.\n")
    return 2
  }

  const totals = emptyTotals()
  const text = format === "text" ? await textRendererFor(io, totals) : undefined
  const render: (event: LatheEvent) => void = text ?? ((event) => io.stdout(`${JSON.stringify(event)}\n`))
  // Everything written to the terminal outside the renderer (notices, the logger, asks) erases its live line first.
  const shown: CliIO = text ? { ...io, stdout: text.around(io.stdout), stderr: text.around(io.stderr) } : io
  const closing = () => {
    text?.finish()
    if (text && totals.steps > 0) io.stderr(`${totalsLine(totals)}\n`)
  }

  const controller = new AbortController()
  const removeInterrupt = io.onInterrupt?.(() => {
    if (controller.signal.aborted) {
      text?.finish() // erases the live line
      process.exit(130) // a second Ctrl-C does not wait
    }
    // The calls this stops say "interrupted" on their own lines: this says only what happens now.
    shown.stderr("\nlathe: stopping (Ctrl-C again to quit at once)...\n")
    controller.abort()
  })

  // The notice naming what an untrusted project's config lost waits until the model is resolved (the prompt is stored
  // only then): when the run fails for want of those very settings, its error names them, and one message says it all.
  const held: Array<string> = []
  const flushHeld = () => {
    for (const notice of held.splice(0)) shown.stderr(`lathe: ${plainText(notice)}\n`)
  }
  const turn = turnWatch()
  // Asks and questions are answered one at a time, in the order they were published, from the synchronous event hook
  // (the in-process backend calls it as events are published; no bus subscription wakes a fiber for every event).
  let answers: ReturnType<typeof askAnswerer> | undefined
  const onEvent = (event: LatheEvent) => {
    if (event.type === "message.updated") flushHeld()
    render(event)
    turn.see(event)
    if (event.type === "permission.asked" || event.type === "question.asked") answers?.answer(event)
  }
  const backend = await openBackend(values.attach, values.token, shown, onEvent, format === "text")
  if (typeof backend === "string") {
    removeInterrupt?.()
    closing()
    io.stderr(`lathe: ${backend}\n`)
    return 1
  }
  answers = askAnswerer(backend, shown, values.yes === true)
  // A failure from a server says which server; the local agent's says only what went wrong.
  const failure = (outcome: { readonly message: string }) =>
    values.attach === undefined ? outcome.message : `the server at ${values.attach}: ${outcome.message}`

  /** Ends the run after a failed step: the exit code, with the error said after the held notices. */
  const failed = async (outcome: Extract<Outcome<unknown>, { ok: false }>): Promise<number> => {
    await backend.dispose()
    removeInterrupt?.()
    closing()
    // The failure says what the held notice would: the model's settings were in the untrusted config, ignored.
    if (!(outcome.error instanceof ProviderNotConfigured && outcome.error.untrusted === true)) flushHeld()
    if (controller.signal.aborted) return 130
    io.stderr(`lathe: ${plainText(failure(outcome))}\n`)
    return 1
  }

  const setup = await backend.setup()
  if (!setup.ok) return failed(setup)
  for (const notice of setup.value.configNotices ?? [])
    if (setup.value.untrusted === true && notice.startsWith("Ignored from untrusted")) held.push(notice)
    else shown.stderr(`lathe: ${plainText(notice)}\n`)

  const local = backend.attached === undefined
  let prompt: Message = { text: message, attached: [] }
  if (backend instanceof LocalBackend) {
    const plugins = await backend.plugins()
    if (!plugins.ok) return failed(plugins)
    const expanded = await localMessage(plugins.value, message, values.command, positionals, io)
    if (typeof expanded === "string") {
      await backend.dispose()
      removeInterrupt?.()
      closing()
      flushHeld()
      io.stderr(`lathe run: ${expanded}\n`)
      return 2
    }
    prompt = expanded
  }

  let sessionID: string | undefined
  // A session this run made, removed again if the prompt fails before anything is stored in it (an unknown agent
  // or model, no provider): otherwise every mistyped command left an empty "New session" behind.
  let created: string | undefined
  if (values.session || values.continue) {
    const loaded = await backend.load(values.session)
    if (!loaded.ok) return failed(loaded)
    sessionID = loaded.value?.session.id
  }
  if (sessionID === undefined) {
    const made = await backend.createSession(values.agent)
    if (!made.ok) return failed(made)
    sessionID = made.value.id
    created = sessionID
  }
  turn.follow(sessionID)

  // "@explore find the parser" runs that subagent directly (no task permission: the person asked for it), for this
  // prompt only; without a model of its own it runs on the model --agent's agent (or the session's) would have used.
  // A server takes the message as typed (its prompt route names primary agents only).
  const direct = local ? /^@([a-z][a-z0-9_-]*)\s+([\s\S]+)$/.exec(prompt.text) : null
  const agents = setup.value.agents
  const named = direct ? agents.find((agent) => agent.name === direct[1]) : undefined
  const subagent = named && !named.hidden && named.mode !== "primary" ? named.name : undefined
  const callerModel = values.agent ? agents.find((agent) => agent.name === values.agent)?.model : undefined
  const outcome = await backend.prompt({
    sessionID,
    text: prompt.text,
    parts: [{ type: "text", text: subagent && direct ? (direct[2] ?? prompt.text) : prompt.text }, ...prompt.attached],
    agent: subagent ?? values.agent ?? prompt.agent,
    model: values.model ?? prompt.model,
    ...(variant === undefined ? {} : { variant }),
    allowSubagents: subagent !== undefined,
    ...(subagent && callerModel ? { inheritedModel: callerModel } : {}),
    title: false,
    signal: controller.signal
  })
  // A server's turn ends with its last events (an aborted call, the idle) after the prompt returns: print them too.
  if (!local && (outcome.ok || controller.signal.aborted)) await turn.ended(ABORT_GRACE_MS)
  if (!outcome.ok) {
    if (created !== undefined) await backend.discardIfEmpty(created)
    return failed(outcome)
  }
  if (!controller.signal.aborted) await answers.settled()
  await backend.dispose()
  removeInterrupt?.()
  closing()
  flushHeld()
  return exitCode(outcome.value, local, controller.signal.aborted, answers.rejectedForNoTerminal(), io)
}

/** The exit code of a turn that ran: 1 for an error (said on stderr) or an ask no one could answer, 130 aborted. */
const exitCode = (
  end: TurnEnd | undefined,
  local: boolean,
  aborted: boolean,
  noTerminal: number,
  io: CliIO
): number => {
  const answer = end?.answer
  if (answer?.error) {
    if (answer.error.name === "Aborted") return 130
    io.stderr(`lathe: ${plainText(answer.error.message)}\n`)
    return 1
  }
  if (aborted) return 130
  // A server's stream that ended before the turn's answer: what the server said, if anything.
  if (!local && answer === undefined) {
    io.stderr(`lathe: ${plainText(end?.error ?? "the server's event stream ended before the turn did.")}\n`)
    return 1
  }
  // Without a terminal, a rejected ask means the task could not be done as asked: say so in the exit code.
  return noTerminal > 0 ? 1 : 0
}

/**
 * The backend `lathe run` drives: the agent in this process (its log lines on stderr, start-up waiting for the MCP
 * servers), or the server at `attach`; a string says why there is none (a malformed address).
 */
const openBackend = async (
  attach: string | undefined,
  tokenFlag: string | undefined,
  io: CliIO,
  onEvent: (event: LatheEvent) => void,
  textMode: boolean
): Promise<Backend | string> => {
  // In text mode the renderer prints plugin failures on stderr: the logger leaves out its own copy of them.
  if (attach === undefined)
    return LocalBackend.make(
      io,
      { onEvent, onWarning: () => undefined },
      { logger: cliLogger(io, { showsEvents: textMode }), mcpWait: true }
    )
  const [{ localServerToken }, { AttachError, RemoteBackend, serverConnection }] = await Promise.all([
    import("../server-token.js"),
    import("../tui/remote-backend.js")
  ])
  const token = tokenFlag || io.env.LATHE_SERVER_TOKEN || (await localServerToken(io.env, attach)) || undefined
  try {
    // A failed stream settles the turn with its error, which the run reports: no warning of its own.
    return RemoteBackend.factory(io, serverConnection(attach, token))({ onEvent, onWarning: () => undefined })
  } catch (error) {
    if (error instanceof AttachError) return error.message
    throw error
  }
}

/**
 * The message on this machine: `--command`'s plugin command expanded (an MCP server's prompt among them; the one
 * place `lathe run` expands one), and the plugin resources its `@<uri>` mentions attach (problems with them said on
 * stderr); a string is a usage error. The plugins have loaded (MCP servers waited for), so they serve both now.
 */
const localMessage = async (
  plugins: Parameters<typeof expandCommand>[0],
  message: string,
  command: string | undefined,
  words: ReadonlyArray<string>,
  io: CliIO
): Promise<Message | string> => {
  const expanded = command
    ? await expandCommand(plugins, command, words).then(
        (expansion) => expansion,
        (error: unknown) => errorText(error)
      )
    : { text: message, parts: [] }
  if (typeof expanded === "string") return expanded
  const attached = await attachResources(plugins, expanded.text)
  for (const problem of attached.problems) io.stderr(`lathe: ${plainText(problem)}\n`)
  return {
    text: expanded.text,
    attached: [...expanded.parts, ...attached.parts],
    ...("agent" in expanded && expanded.agent !== undefined ? { agent: expanded.agent } : {}),
    ...("model" in expanded && expanded.model !== undefined ? { model: expanded.model } : {})
  }
}

/** Follows one session's events, to wait for its turn's end (`session.idle`) where the prompt returns before it. */
const turnWatch = () => {
  let sessionID: string | undefined
  let idle = false
  let wake: () => void = () => undefined
  return {
    follow: (id: string) => {
      sessionID = id
      idle = false
    },
    see: (event: LatheEvent) => {
      if (sessionID === undefined || !("sessionID" in event) || event.sessionID !== sessionID) return
      idle = event.type === "session.idle"
      if (idle) wake()
    },
    /** Resolves at the session's idle (at once when its last event was one), or after `graceMs`. */
    ended: (graceMs: number): Promise<void> =>
      idle
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, graceMs)
            wake = () => {
              clearTimeout(timer)
              resolve()
            }
          })
  }
}

/**
 * The text renderer for this output: on a terminal a live line while a tool runs (unless TERM=dumb), colour and the
 * answer as terminal Markdown (unless NO_COLOR); piped, the plain lines a script can rely on, byte for byte.
 */
const textRendererFor = async (io: CliIO, totals: Totals): Promise<TextRenderer> => {
  const color = io.isTTY && colorEnabled(io.env, io.isTTY)
  const style = createStyle(color)
  return textRenderer(io.stdout, io.stderr, totals, {
    style,
    ...(color ? { markdown: (await import("../answer-markdown.js")).answerMarkdown(style) } : {}),
    ...(io.isTTY && io.env.TERM !== "dumb" ? { live: (await import("../live-line.js")).liveLine } : {}),
    columns: () => process.stdout.columns || 80
  })
}
