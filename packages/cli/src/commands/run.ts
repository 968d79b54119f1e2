import { createInterface } from "node:readline/promises"
import { parseArgs } from "node:util"
import {
  Bus,
  Config,
  createSession,
  discardIfEmpty,
  type LatheEvent,
  Paths,
  type PendingAsk,
  PermissionNext,
  type PermissionReply,
  Plugins,
  ProviderNotConfigured,
  Question,
  ReasoningLevel,
  resolveAgents,
  SessionPrompt,
  SessionStore
} from "@lathe/core"
import { mcpConnections, resourceParts, runPrompt } from "@lathe/mcp/host"
import { describeAsk, personOnlyMessage } from "@lathe/permission"
import { Effect, Exit, Layer } from "effect"
import { appLayer, cliLogger, failureText } from "../app.js"
import type { CliIO, Command } from "../io.js"
import { emptyTotals, type TextRenderer, type Totals, textRenderer, totalsLine } from "../render.js"
import { colorEnabled, createStyle } from "../tui/style.js"

const usage = `Usage: lathe run [options] <message...>
       lathe run [options] --command <server>:<prompt> [key=value | value]...

Runs one turn of the agent on this directory's project: the model answers, calls tools (asking you for
permission where the rules say so), and stops when the task is done. The message may also come on stdin.
With --command, an MCP server's prompt is the message; the words after it are its arguments. In a message,
@<server>:<uri> attaches that MCP resource. A message that starts with @<subagent> (lathe agents lists them) runs
that subagent for this prompt only; the session keeps its own agent. A subagent with no model of its own runs on
the model of the turn that calls it (-m, else its caller's).

Options:
  --agent <name>       The agent to run (default: the configured default_agent, else build)
  -m, --model <p/m>    The model, as provider/model (default: the agent's, else the configured model)
  --variant <level>    How hard a reasoning model thinks for this run: low, medium or high (default: the
                       agent's or the model's "reasoning" in lathe.json, else the provider's default)
  -s, --session <id>   Continue this session
  -c, --continue       Continue the most recent session of this project
  --command <s>:<p>    Run the MCP prompt <p> of server <s> (arguments as key=value, or in the prompt's order)
  --format <fmt>       text (default) or json: every event as one JSON object per line on stdout
  -y, --yes            Allow every permission ask (deny rules still hold); without a terminal, asks are
                       rejected unless --yes is given
  --attach <url>       Drive a running server (lathe serve) instead of running the agent here; sessions run
                       in the server's directory, asks are answered here over HTTP
  --token <token>      The server's bearer token (default: LATHE_SERVER_TOKEN, else, for a server on this
                       machine, the one it saved in the data dir)
  -h, --help           Show this help

A turn stops after max_steps model calls (default 200; lathe.json): lathe run -c "continue" goes on.

Exit codes: 0 done, 1 failed or stopped short (the error is printed), 2 bad usage, 130 aborted (Ctrl-C).
`

const readAll = async (stream: NodeJS.ReadableStream): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString("utf8")
}

/** The events `lathe run` answers: a permission ask, or a tool's questions. */
type AskEvent = Extract<LatheEvent, { type: "permission.asked" | "question.asked" }>

const errorText = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/** `lathe run`: one turn, rendered as text or as JSON events. */
export const runCommand: Command = async (args, io: CliIO) => {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    io.stderr(`lathe run: ${errorText(error)}\nRun \`lathe run --help\` for the options.\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help) {
    io.stdout(usage)
    return 0
  }
  const format = values.format ?? "text"
  if (format !== "text" && format !== "json") {
    io.stderr(`lathe run: --format must be "text" or "json", not "${format}".\n`)
    return 2
  }
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
  const variant = values.variant === undefined ? undefined : ReasoningLevel.safeParse(values.variant)
  if (variant?.success === false) {
    io.stderr(`lathe run: --variant must be "low", "medium" or "high", not "${values.variant}".\n`)
    return 2
  }
  if (variant !== undefined && values.attach !== undefined) {
    io.stderr("lathe run: --variant applies to a run on this machine; it cannot be used with --attach.\n")
    return 2
  }

  const totals = emptyTotals()
  let noTerminal = 0
  /** Set when `--command` names a prompt that cannot run as asked: a usage error (exit 2), said on stderr. */
  let badCommand: string | undefined
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

  if (values.attach !== undefined) {
    if (values.command) {
      io.stderr("lathe run: --command runs an MCP prompt of this machine's servers; it cannot be used with --attach.\n")
      return 2
    }
    const { runAttached } = await import("./run-attach.js")
    const { localServerToken } = await import("../server-token.js")
    const token =
      values.token || io.env.LATHE_SERVER_TOKEN || (await localServerToken(io.env, values.attach)) || undefined
    const code = await runAttached({ ...values, url: values.attach, token, message, yes: values.yes === true }, shown, {
      render,
      signal: controller.signal
    })
    removeInterrupt?.()
    closing()
    return code
  }

  // Asks and questions are answered one at a time, in the order they were published, from the synchronous event hook
  // rather than a bus subscription (which would wake a fiber for every event of the loop); set once services exist.
  let answer: ((event: AskEvent) => Promise<void>) | undefined
  let answering: Promise<void> = Promise.resolve()
  // The notice naming what an untrusted project's config lost waits until the model is resolved (the prompt is stored
  // only then): when the run fails for want of those very settings, its error names them, and one message says it all.
  const held: Array<string> = []
  const flushHeld = () => {
    for (const notice of held.splice(0)) shown.stderr(`lathe: ${notice}\n`)
  }
  const onEvent = (event: LatheEvent) => {
    if (event.type === "message.updated") flushHeld()
    render(event)
    if ((event.type === "permission.asked" || event.type === "question.asked") && answer !== undefined) {
      const reply = answer
      answering = answering
        .then(() => reply(event))
        .catch((error: unknown) => io.stderr(`lathe: cannot answer ${event.type}: ${errorText(error)}\n`))
    }
  }
  // Events are rendered as they are published (synchronously), so nothing is lost when the process exits.
  // In text mode the renderer prints plugin failures on stderr: the logger leaves out its own copy of them.
  const logger = cliLogger(shown, { showsEvents: format === "text" })
  const layer = appLayer(shown, { onEvent }).pipe(Layer.provideMerge(logger))

  const program = Effect.gen(function* () {
    const config = yield* Config
    for (const notice of config.notices)
      if (config.untrusted !== undefined && notice.startsWith("Ignored from untrusted")) held.push(notice)
      else shown.stderr(`lathe: ${notice}\n`)
    const store = yield* SessionStore
    const paths = yield* Paths
    const permission = yield* PermissionNext
    const question = yield* Question
    answer = async (event) => {
      if (event.type === "question.asked")
        return answerQuestions(event, io, {
          reply: (answers) => Effect.runPromise(question.reply(event.id, answers)),
          dismiss: (reason) => Effect.runPromise(question.dismiss(event.id, reason))
        })
      const reply = (value: PermissionReply) => Effect.runPromise(permission.reply(event.id, value))
      if ((await answerAsk(event, reply, io, values.yes === true)) === "rejected-no-terminal") noTerminal++
    }
    const plugins = yield* Plugins
    // The MCP plugin has loaded (it waits for its servers), so its connections serve prompts and resources now.
    const connections = mcpConnections(paths.root)
    if (values.command) {
      const name = values.command
      const expanded = yield* Effect.promise(() =>
        runPrompt(connections, name, positionals).then(
          (text) => ({ text }),
          (error: unknown) => ({ error: errorText(error) })
        )
      )
      if ("error" in expanded) {
        badCommand = expanded.error
        return undefined
      }
      message = expanded.text
    }
    const attached = yield* Effect.promise(() => resourceParts(message, connections))
    for (const problem of attached.problems) io.stderr(`lathe: ${problem}\n`)
    let sessionID: string
    // A session this run made, removed again if the prompt fails before anything is stored in it (an unknown agent
    // or model, no provider): otherwise every mistyped command left an empty "New session" behind.
    let created: string | undefined
    const latest = values.continue
      ? (yield* store.listSessions({ projectID: paths.projectID, parentID: null, limit: 1 }))[0]
      : undefined
    if (values.session) sessionID = (yield* store.getSession(values.session)).id
    else if (latest) sessionID = latest.id
    else {
      sessionID = (yield* createSession(values.agent ? { agent: values.agent } : {})).id
      created = sessionID
    }
    const discardCreated = Effect.gen(function* () {
      if (created === undefined || !(yield* discardIfEmpty(created))) return
      yield* (yield* Bus).publish({ type: "session.deleted", sessionID: created })
    }).pipe(Effect.ignore)
    const prompt = yield* SessionPrompt
    // "@explore find the parser" runs that subagent directly (no task permission: the person asked for it), for this
    // prompt only; without a model of its own it runs on the model --agent's agent (or the session's) would have used.
    const direct = /^@([a-z][a-z0-9_-]*)\s+([\s\S]+)$/.exec(message)
    const agents = resolveAgents(plugins.agents, config.info.agent)
    const named = direct ? agents.get(direct[1] ?? "") : undefined
    const subagent = named && !named.hidden && named.mode !== "primary" ? named.name : undefined
    const callerModel = values.agent ? agents.get(values.agent)?.model : undefined
    return yield* prompt
      .prompt({
        sessionID,
        parts: [{ type: "text", text: subagent && direct ? (direct[2] ?? message) : message }, ...attached.parts],
        ...(subagent
          ? { agent: subagent, allowSubagents: true, ...(callerModel ? { inheritedModel: callerModel } : {}) }
          : values.agent
            ? { agent: values.agent }
            : {}),
        ...(values.model ? { model: values.model } : {}),
        ...(variant?.success ? { variant: variant.data } : {}),
        abort: controller.signal,
        title: false
      })
      .pipe(Effect.onError(() => discardCreated))
  })

  const exit = await Effect.runPromiseExit(program.pipe(Effect.scoped, Effect.provide(layer)))
  removeInterrupt?.()
  closing()
  if (Exit.isFailure(exit)) {
    const reason = exit.cause.reasons[0]
    const error = reason?._tag === "Fail" ? reason.error : undefined
    // The failure says what the held notice would: the model's settings were in the untrusted config, ignored.
    if (!(error instanceof ProviderNotConfigured && error.untrusted === true)) flushHeld()
    if (controller.signal.aborted) return 130
    io.stderr(`lathe: ${failureText(exit.cause)}\n`)
    return 1
  }
  flushHeld()
  if (badCommand !== undefined || exit.value === undefined) {
    io.stderr(`lathe run: ${badCommand ?? "the --command prompt did not run"}\n`)
    return 2
  }
  const info = exit.value.info
  if (info.role === "assistant" && info.error) {
    if (info.error.name === "Aborted") return 130
    io.stderr(`lathe: ${info.error.message}\n`)
    return 1
  }
  if (controller.signal.aborted) return 130
  // Without a terminal, a rejected ask means the task could not be done as asked: say so in the exit code.
  return noTerminal > 0 ? 1 : 0
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
    live: io.isTTY && io.env.TERM !== "dumb",
    sanitize: io.isTTY,
    columns: () => process.stdout.columns || 80
  })
}

const parse = (args: ReadonlyArray<string>) =>
  parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      agent: { type: "string" },
      model: { type: "string", short: "m" },
      variant: { type: "string" },
      session: { type: "string", short: "s" },
      continue: { type: "boolean", short: "c" },
      command: { type: "string" },
      format: { type: "string" },
      yes: { type: "boolean", short: "y" },
      attach: { type: "string" },
      token: { type: "string" },
      help: { type: "boolean", short: "h" }
    },
    strict: true
  })

/**
 * Answers one permission ask through `send` (the local engine, or a server over HTTP): `--yes` allows it, a terminal
 * asks the person, anything else rejects it. An ask marked `metadata.requiresPerson` (a rerun outside the sandbox, a
 * command Lathe cannot know statically while deny rules exist, …) is never allowed by `--yes`: a terminal asks the
 * person; without one it is rejected and the model is told why and what to do instead.
 */
export const answerAsk = async (
  event: Extract<LatheEvent, { type: "permission.asked" }>,
  send: (reply: PermissionReply) => Promise<void>,
  io: CliIO,
  yes: boolean
): Promise<"answered" | "rejected-no-terminal"> => {
  const reply = async (value: PermissionReply) => {
    await send(value)
    return "answered" as const
  }
  const needsPerson = event.metadata?.requiresPerson === true
  if (yes && !needsPerson) return reply({ type: "once", by: "yes" })
  const ask: PendingAsk = {
    id: event.id,
    sessionID: event.sessionID,
    permission: event.permission,
    patterns: event.patterns,
    always: event.always,
    metadata: event.metadata,
    ...(event.callID ? { callID: event.callID } : {})
  }
  if ((!io.stdin || !io.stdinIsTTY) && needsPerson) {
    io.stderr(
      `lathe: rejected a ${event.permission} ask (${event.patterns.join(", ")}): only a person may approve it ` +
        "(--yes does not), and there is no terminal.\n"
    )
    const why = personOnlyMessage(ask, "no-terminal")
    await reply({ type: "reject", message: why, ...(yes ? { by: "yes" as const } : {}) })
    return "rejected-no-terminal"
  }
  if (!io.stdin || !io.stdinIsTTY) {
    io.stderr(
      `lathe: rejected a ${event.permission} ask (${event.patterns.join(", ")}): no terminal to ask you. ` +
        "Re-run with --yes to allow asks (deny rules still apply), or allow it in lathe.json.\n"
    )
    await reply({ type: "reject" })
    return "rejected-no-terminal"
  }
  const rl = createInterface({ input: io.stdin, output: process.stderr })
  try {
    const text = (await rl.question(`\n${describeAsk(ask)}> `)).trim()
    const lower = text.toLowerCase()
    if (lower === "o" || lower === "once" || lower === "y" || lower === "yes") return reply({ type: "once" })
    if (lower === "a" || lower === "always") return reply({ type: "always" })
    if (lower === "r" || lower === "reject" || lower === "n" || lower === "no" || text === "")
      return reply({ type: "reject" })
    return reply({ type: "reject", message: text })
  } finally {
    rl.close()
  }
}

/**
 * Asks the person a tool's questions at the terminal (numbers pick options, anything else is the answer) and sends
 * the answers through `send`; without a terminal the questions are dismissed and the model told to decide.
 */
export const answerQuestions = async (
  event: Extract<LatheEvent, { type: "question.asked" }>,
  io: CliIO,
  send: {
    readonly reply: (answers: Array<Array<string>>) => Promise<void>
    readonly dismiss: (reason: string) => Promise<void>
  }
): Promise<void> => {
  if (!io.stdin || !io.stdinIsTTY) {
    io.stderr("lathe: the model asked questions, but there is no terminal to answer them; it was told to decide.\n")
    await send.dismiss("There is no terminal to ask the user; decide yourself and say what you chose.")
    return
  }
  const rl = createInterface({ input: io.stdin, output: process.stderr })
  try {
    const answers: Array<Array<string>> = []
    for (const item of event.questions) {
      const options = item.options ?? []
      const lines = [
        `\n${item.header ? `[${item.header}] ` : ""}${item.question}`,
        ...options.map((o, i) => `  ${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ""}`),
        options.length > 0
          ? `  answer with ${item.multiple ? "numbers (e.g. 1,3)" : "a number"}, or type your own answer`
          : "  type your answer"
      ]
      const text = (await rl.question(`${lines.join("\n")}\n> `)).trim()
      const picks = /^\d+(\s*,\s*\d+)*$/.test(text)
        ? text.split(",").map((n) => options[Number(n.trim()) - 1]?.label)
        : undefined
      answers.push(picks?.every((label) => label !== undefined) ? (picks as Array<string>) : text ? [text] : [])
    }
    await send.reply(answers)
  } finally {
    rl.close()
  }
}
