import { afterNextRequestSent, messageCommand, ProviderNotConfigured } from "@lathe/core"
import { startupMark } from "@lathe/core/startup-marks"
import type { LatheEvent } from "@lathe/plugin/schema"
import { cliLogger } from "../app.js"
import type { Backend, Outcome, TurnEnd } from "../backend.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import { refusedAttachment, unsupportedAttachment } from "../file-attachments.js"
import type { CliIO, Command } from "../io.js"
import { emptyTotals, type TextRenderer, type Totals, textRenderer, totalsLine } from "../render.js"
import { colorEnabled, createStyle } from "../style.js"
import { plainText } from "../terminal-text.js"
import { LocalBackend } from "../tui/local-backend.js"
import { askAnswerer } from "./asks.js"
import { type RunInput, runInput } from "./run-input.js"
import { hasLimits, runLimits } from "./run-limits.js"
import { errorName, runOutput, streamContext, turnError } from "./run-output.js"
import { streamInputRefusal, turnsOf } from "./run-stream-input.js"

/** `lathe run`, declared once: its parser, `--help` and usage errors come from the command kit. */
export const runSpec = defineCommand({
  name: "run",
  usage: ["[options] <message...>", "[options] --command <server>:<prompt> [key=value | value]..."],
  description: `Runs one turn of the agent on this directory's project: the model answers, calls tools (asking you for
permission where the rules say so), and stops when the task is done. The message may also come on stdin;
with a message, piped stdin goes with it as the material (git diff | lathe run "review"; at most 1 MiB of text).
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
    "max-cost": {
      type: "string",
      value: "<usd>",
      description: `Stop before a model call the turn's remaining budget cannot cover: USD for the turn and
every subagent it starts together (over budget.max_cost in lathe.json); exit code 3`
    },
    "max-steps": {
      type: "string",
      value: "<n>",
      description: "The most model calls this turn may make (over max_steps in lathe.json; 0 = no cap)"
    },
    "output-schema": {
      type: "string",
      value: "<file>",
      description: `The final answer must be one JSON value valid against this JSON Schema; in text format
stdout holds only that value (a non-conforming answer fails the run, exit 1)`
    },
    session: { type: "string", short: "s", value: "<id>", description: "Continue this session" },
    continue: { type: "boolean", short: "c", description: "Continue the most recent session of this work tree" },
    command: {
      type: "string",
      value: "<s>:<p>",
      description: "Run the MCP prompt <p> of server <s> (arguments as key=value, or in the prompt's order)"
    },
    file: {
      type: "string",
      short: "f",
      multiple: true,
      value: "<path>",
      description: `Attach a file (repeatable): text goes in with its path, a PNG, JPEG, GIF or WebP image
or a PDF as itself for a model that takes it; read under the read tool's rules`
    },
    allow: {
      type: "string",
      multiple: true,
      value: "<rule>",
      description: `Allow what the rule names for this run, over the config's rules (repeatable):
<permission>[:<pattern>], e.g. --allow "bash:git *"; asks only a person may answer stay so`
    },
    deny: {
      type: "string",
      multiple: true,
      value: "<rule>",
      description: "Deny what the rule names for this run, over the config's rules (repeatable), e.g. --deny edit"
    },
    format: {
      type: "string",
      value: "<fmt>",
      choices: ["text", "json", "stream-json"],
      description: `text (default); json: every event as one JSON object per line, then run.result;
stream-json: the lines claude -p --output-format stream-json writes (docs/headless.md)`
    },
    "input-format": {
      type: "string",
      value: "<fmt>",
      choices: ["text", "stream-json"],
      description: `text (default); stream-json: user messages as JSON lines on stdin, a turn
each, in one session (then give no message)`
    },
    "output-last-message": {
      type: "string",
      short: "o",
      value: "<file>",
      description: "Also write the turn's final text to <file> (any format)"
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

Exit codes: 0 done, 1 failed or stopped short (the error is printed), 2 bad usage, 3 cost budget exhausted,
130 interrupted (Ctrl-C). The same in every format (docs/headless.md).`
})

/** How long a run stopped on a server waits for the server to report the turn over before it exits anyway. */
const ABORT_GRACE_MS = 5_000

/** A failure of the in-process agent that is the command's, not the turn's: `lathe run --command`'s usage error. */
const isCommandRefusal = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  (error._tag === "UnknownCommand" || error._tag === "PluginRequestError")

/**
 * `lathe run`: one turn, rendered as text or as JSON events, on a {@link Backend}: the agent in this process, or a
 * `lathe serve` server with `--attach` (the interactive session's two backends). Asks are answered by `./asks.ts`.
 */
export const runCommand: Command = async (args, io: CliIO) => {
  startupMark("run start")
  const parsed = parseCommand(runSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values, positionals } = parsed
  const format = values.format ?? "text"
  // With --input-format stream-json the messages are stdin's lines, read one turn at a time (see `turnsOf`).
  const streamInput = values["input-format"] === "stream-json"
  const inputRefused = streamInput ? streamInputRefusal(values, positionals, io) : undefined
  if (inputRefused !== undefined) {
    io.stderr(`lathe run: ${inputRefused}\n`)
    return 2
  }
  // The message, piped text, -f files and --allow/--deny rules, all checked before anything starts (run-input.ts).
  const input = await runInput(values, positionals, io, !streamInput)
  if (typeof input === "number") return input
  const { message } = input
  if (values.session && values.continue) {
    io.stderr("lathe run: use either --session or --continue, not both.\n")
    return 2
  }
  const variant = values.variant
  const limits = runLimits(values, io.cwd)
  if (typeof limits === "string") {
    io.stderr(`lathe run: ${plainText(limits)}\n`)
    return 2
  }
  if (hasLimits(values) && values.attach !== undefined) {
    io.stderr("lathe run: --max-cost, --max-steps and --output-schema apply to a run on this machine, not --attach.\n")
    return 2
  }
  if (variant !== undefined && values.attach !== undefined) {
    io.stderr("lathe run: --variant applies to a run on this machine; it cannot be used with --attach.\n")
    return 2
  }

  const totals = emptyTotals()
  // With --output-schema, text format's stdout holds only the answer's JSON value: the rest goes to stderr.
  const schemaOnly = format === "text" && limits.outputSchema !== undefined
  const textOut =
    format === "text" ? textRendererFor(schemaOnly ? { ...io, stdout: io.stderr } : io, totals) : undefined
  const text = textOut?.renderer
  // Every format counts the turn for its closing line and -o's file; json and stream-json write their lines here.
  const output = runOutput(format, io, { lastMessageFile: values["output-last-message"] })
  const render = (event: LatheEvent) => {
    text?.(event)
    output.event(event)
  }
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
    if (event.type === "part.delta" || event.type === "tool.running") textOut?.load()
    if (event.type === "message.updated") flushHeld()
    render(event)
    turn.see(event)
    if (event.type === "permission.asked" || event.type === "question.asked") answers?.answer(event)
  }
  const backend = await openBackend(values.attach, values.token, shown, onEvent, format === "text", input.rules)
  if (typeof backend === "string") {
    removeInterrupt?.()
    closing()
    io.stderr(`lathe: ${backend}\n`)
    return output.close(1, { name: "Unknown", message: backend })
  }
  startupMark("run backend")
  answers = askAnswerer(backend, shown, values.yes === true)
  // A failure from a server says which server; the local agent's says only what went wrong.
  const failure = (outcome: { readonly message: string }) =>
    values.attach === undefined ? outcome.message : `the server at ${values.attach}: ${outcome.message}`

  /** Ends the run after a failed step: the exit code, with the error said after the held notices. */
  const failed = async (outcome: Extract<Outcome<unknown>, { ok: false }>): Promise<number> => {
    await backend.dispose()
    removeInterrupt?.()
    await textOut?.settled()
    closing()
    // The failure says what the held notice would: the model's settings were in the untrusted config, ignored.
    if (!(outcome.error instanceof ProviderNotConfigured && outcome.error.untrusted === true)) flushHeld()
    // The closing line says it too (json, stream-json): a script reads every failure from the same line.
    const error = { name: errorName(outcome.error), message: failure(outcome) }
    if (controller.signal.aborted) return output.close(130, error, { model: values.model })
    io.stderr(`lathe: ${plainText(error.message)}\n`)
    return output.close(1, error, { model: values.model })
  }

  /** Ends the run on a command that does not expand here (no such command, a missing argument): a usage error. */
  const refused = async (text: string): Promise<number> => {
    await backend.dispose()
    removeInterrupt?.()
    closing()
    flushHeld()
    io.stderr(`lathe run: ${plainText(text)}\n`)
    return output.close(2, { name: "UsageError", message: text }, { model: values.model })
  }

  const setup = await backend.setup()
  if (!setup.ok) return failed(setup)
  startupMark("run app built")
  for (const notice of setup.value.configNotices ?? [])
    if (setup.value.untrusted === true && notice.startsWith("Ignored from untrusted")) held.push(notice)
    else shown.stderr(`lathe: ${plainText(notice)}\n`)

  const local = backend.attached === undefined
  // An image or PDF for a model that does not take it ends the run here, before a session exists.
  const agent = values.agent ?? setup.value.defaultAgent ?? "build"
  const unsupported = await unsupportedAttachment(backend, input.files, values.model, agent)
  if (unsupported !== undefined) return refused(unsupported)
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
  startupMark("run session")
  turn.follow(sessionID)
  // -f files are read under the read tool's rules: asks are answered as the turn's are, a refusal ends the run.
  const unreadable = await refusedAttachment(backend, sessionID, input.files, values.agent)
  if (unreadable !== undefined) {
    if (created !== undefined) await backend.discardIfEmpty(created)
    return refused(unreadable)
  }
  // Piped text and -f files go with the first message.
  let attached = input.parts
  if (format === "stream-json") output.describe(await streamContext(backend, io, values.yes === true))

  let code = 0
  let rejected = 0
  for await (const next of turnsOf(streamInput, message, io)) {
    if ("error" in next) {
      io.stderr(`lathe run: ${plainText(next.error)}\n`)
      code = 2
      break
    }
    output.begin(sessionID)
    // The backend makes the message the prompt where the agent runs: `--command`'s plugin command expanded (an MCP
    // server's prompt among them), the plugin resources `@<uri>` mentions attach (what cannot be read is said on
    // stderr), and, on this machine, "@explore find the parser" runs that subagent directly (no task permission: the
    // person asked for it) for this prompt only. A server takes the message as typed (its prompt route names primary
    // agents only).
    // "/review src" runs the command review with "src", as the interactive session does (an unknown name is refused
    // like --command's); a message starting with a path goes as typed.
    const slash = values.command ? undefined : messageCommand(next.text)
    startupMark("run prompt")
    const outcome = await backend.prompt({
      sessionID,
      text: values.command ? positionals.join(" ") : (slash?.args ?? next.text),
      parts: [{ type: "text", text: next.text }, ...attached],
      agent: values.agent,
      model: values.model,
      ...(values.command ? { command: values.command, arguments: positionals } : slash ? { command: slash.name } : {}),
      expand: true,
      onNotice: (notice) => shown.stderr(`lathe: ${plainText(notice)}\n`),
      ...(variant === undefined ? {} : { variant }),
      limits,
      allowSubagents: false,
      title: false,
      signal: controller.signal
    })
    attached = []
    // A server's turn ends with its last events (an aborted call, the idle) after the prompt returns: print them too.
    if (!local && (outcome.ok || controller.signal.aborted)) await turn.ended(ABORT_GRACE_MS)
    if (!outcome.ok) {
      if (created !== undefined && (await backend.discardIfEmpty(created))) output.forget()
      if (isCommandRefusal(outcome.error)) return refused(outcome.message)
      return failed(outcome)
    }
    created = undefined
    if (!controller.signal.aborted) await answers.settled()
    // Asks rejected for want of a terminal in this turn (the answerer counts the run's).
    const noTerminal = answers.rejectedForNoTerminal() - rejected
    rejected += noTerminal
    code = exitCode(outcome.value, local, controller.signal.aborted, noTerminal, io)
    code = output.close(code, turnError(outcome.value, code, noTerminal), {
      model: values.model,
      structured: outcome.value?.answer?.structured
    })
    const structured = outcome.value?.answer?.structured
    if (schemaOnly && code === 0 && structured !== undefined) io.stdout(`${JSON.stringify(structured)}\n`)
    if (controller.signal.aborted) break
  }
  await backend.dispose()
  removeInterrupt?.()
  // The terminal renderer loads while the first request is out: text held for it is shown once it has.
  await textOut?.settled()
  closing()
  flushHeld()
  return code
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
    // The cost budget ran out: its own code, so a script can tell "too dear" from "failed".
    return answer.error.name === "BudgetExhausted" ? 3 : 1
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
  textMode: boolean,
  rules: RunInput["rules"]
): Promise<Backend | string> => {
  // In text mode the renderer prints plugin failures on stderr: the logger leaves out its own copy of them.
  if (attach === undefined)
    return LocalBackend.make(
      io,
      { onEvent, onWarning: () => undefined },
      { logger: cliLogger(io, { showsEvents: textMode }), mcpWait: true, ...(rules.length > 0 ? { rules } : {}) }
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
/**
 * The text renderer of a run, and `load`, which starts loading what a terminal needs of it if that has not started.
 * At a terminal the Markdown renderer and the live line (with the text measuring, and ICU with it) cost more than the
 * rest of a run's start-up and are needed only once the model answers, so they load after the first request has gone
 * out, while the model thinks (`afterNextRequestSent`), or at the first event that shows the model's output.
 */
const textRendererFor = (io: CliIO, totals: Totals): TextOut => {
  const color = io.isTTY && colorEnabled(io.env, io.isTTY)
  const style = createStyle(color)
  const columns = () => process.stdout.columns || 80
  const wantsLive = io.isTTY && io.env.TERM !== "dumb"
  if (!color && !wantsLive) {
    const renderer = textRenderer(io.stdout, io.stderr, totals, { style, columns })
    return { renderer, load: () => {}, settled: async () => {} }
  }
  // Resolved once: true to load, false when the run ends before anything needed loading.
  let begin: (load: boolean) => void = () => {}
  const started = new Promise<boolean>((resolve) => {
    begin = resolve
  })
  const later = started.then(async (load) =>
    load
      ? {
          ...(color ? { markdown: (await import("../tui/answer-markdown.js")).answerMarkdown(style) } : {}),
          ...(wantsLive ? { live: (await import("../live-line.js")).liveLine } : {})
        }
      : {}
  )
  const renderer = textRenderer(io.stdout, io.stderr, totals, { style, columns, later })
  return {
    renderer,
    load: afterNextRequestSent(() => begin(true)),
    settled: async () => {
      begin(false)
      await renderer.ready
    }
  }
}

/** A run's text renderer; see `textRendererFor`. */
interface TextOut {
  readonly renderer: TextRenderer
  /** Starts loading the terminal's renderer now, if it has not started. */
  readonly load: () => void
  /** Settles once the held text has been shown (at once when nothing was held). Call before `finish`. */
  readonly settled: () => Promise<void>
}
