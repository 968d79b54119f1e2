import { createInterface } from "node:readline"
import type { BackendFactory } from "../backend.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { Attachment } from "../file-attachments.js"
import type { CliIO, Command } from "../io.js"
import { emptyTotals, textRenderer } from "../render.js"
import { colorEnabled, createStyle } from "../style.js"
import { plainText, visibleText } from "../terminal-text.js"
import type { ControllerOptions } from "../tui/controller.js"

/** `lathe` itself (the interactive session), declared once for the command kit. */
export const interactiveSpec = defineCommand({
  name: "",
  usage: ["[options] [prompt]"],
  description: `Opens an interactive session on this directory's project: type a task, watch the agent work, answer its permission
asks, interrupt with Esc, undo with /undo. Type / for the commands and /help for the keys. A prompt given here
(lathe "fix the failing test") is sent as soon as the session opens. A single word within 2 letters of a command
(lathe rn) is taken for a typo of it and refused; to send such a word, write lathe -- "word".`,
  options: {
    continue: { type: "boolean", short: "c", description: "Resume the most recent session of this work tree" },
    session: { type: "string", short: "s", value: "<id>", description: "Resume this session" },
    agent: { type: "string", value: "<name>", description: "Start with this primary agent (Tab cycles them)" },
    model: { type: "string", short: "m", value: "<p/m>", description: "Use this model, as provider/model" },
    file: {
      type: "string",
      short: "f",
      multiple: true,
      value: "<path>",
      description: `Attach a file to the first prompt (repeatable): text with its path, a PNG, JPEG, GIF or
WebP image or a PDF as itself; read under the read tool's rules`
    },
    attach: {
      type: "string",
      value: "<url>",
      description: `Drive a running \`lathe serve\` at this address instead of an agent in this process;
-c and -s then mean the server's sessions`
    },
    token: {
      type: "string",
      value: "<token>",
      description: `The server's bearer token (default: $LATHE_SERVER_TOKEN, else, for a server on this
machine, the one it saved in the data dir)`
    }
  },
  positionals: { name: "[prompt]" },
  footer: `Without a terminal (a pipe, or TERM=dumb), Lathe runs in plain line mode: each input line is a prompt, a /command or
an answer to the pending ask, and the output has no escape codes; a prompt given as an argument is the first line. It exits 1 if anything failed (a turn, a command,
no model configured), else 0; \`lathe run\` is the command made for scripts.`
})

/** Whether the full-screen UI can run: both ends are terminals and the terminal is not dumb. */
export const canDrawScreen = (io: CliIO): boolean => io.isTTY && io.stdinIsTTY === true && io.env.TERM !== "dumb"

/** `lathe` with no command: the interactive session (full screen, or plain lines without a terminal). */
export const interactiveCommand: Command = async (args, io) => {
  const parsed = parseCommand(interactiveSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const prompt = parsed.positionals.join(" ").trim()
  if (values.session && values.continue) {
    io.stderr("lathe: use either --session or --continue, not both.\n")
    return 2
  }
  if (values.token !== undefined && !values.attach) {
    io.stderr("lathe: --token is for --attach <url> (the token of the server you attach to).\n")
    return 2
  }
  if (values.file !== undefined && values.attach !== undefined) {
    io.stderr(
      "lathe: -f applies to a session on this machine (its rules decide what may be read); not with --attach.\n"
    )
    return 2
  }
  // Read before anything opens: a missing or unreadable file ends here, with exit 2.
  const { readAttachments } = await import("../file-attachments.js")
  const files = await readAttachments(values.file ?? [], io.cwd)
  if (typeof files === "string") {
    io.stderr(`lathe: ${files}\n`)
    return 2
  }
  const options: ControllerOptions = {
    ...(values.agent ? { agent: values.agent } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values.session ? { session: values.session } : {}),
    ...(values.continue ? { continue: true } : {})
  }
  let backend: BackendFactory | undefined
  if (values.attach !== undefined) {
    // Checked before the screen opens: an unreachable server or a refused token ends here, with what to do.
    const { localServerToken } = await import("../server-token.js")
    const token =
      values.token || io.env.LATHE_SERVER_TOKEN || (await localServerToken(io.env, values.attach)) || undefined
    const attached = await attach(io, values.attach, token)
    if (typeof attached === "string") {
      io.stderr(`lathe: ${attached}\n`)
      return 1
    }
    backend = attached
  }
  return canDrawScreen(io)
    ? screenMode(io, options, backend, values.attach, prompt, files)
    : lineMode(io, options, backend, prompt, files)
}

/** Connects to the server at `url`; the backend factory, or what went wrong (for the person). */
const attach = async (io: CliIO, url: string, token: string | undefined): Promise<BackendFactory | string> => {
  const { AttachError, connectServer, RemoteBackend } = await import("../tui/remote-backend.js")
  try {
    return RemoteBackend.factory(io, await connectServer(url, token || undefined))
  } catch (error) {
    if (error instanceof AttachError) return error.message
    throw error
  }
}

/** The full-screen Ink UI in the alternate screen. */
const screenMode = async (
  io: CliIO,
  options: ControllerOptions,
  backend: BackendFactory | undefined,
  attachUrl: string | undefined,
  prompt: string,
  files: ReadonlyArray<Attachment>
): Promise<number> => {
  const [{ Box, Text, render }, react] = await Promise.all([import("ink"), import("react")])
  // React is CommonJS: in the bundle its lazily loaded chunk has only a default export (no named ones), so take
  // createElement from the default, which is module.exports both there and when run from source.
  const { createElement } = react.default
  const style = createStyle(colorEnabled(io.env, true))
  // The first frame goes up before the services and the app's modules load (they take most of start-up): the screen
  // and its footer appear at once, and keys typed meanwhile wait in stdin for the editor.
  const starting = createElement(
    Box,
    { flexDirection: "column", height: process.stdout.rows || 24, justifyContent: "flex-end" },
    createElement(Text, { dimColor: style.color }, "starting Lathe…")
  )
  const inkOptions = { exitOnCtrlC: false, patchConsole: false, alternateScreen: true, interactive: true, maxFps: 60 }
  const instance = render(starting, inkOptions)
  const [{ Controller }, { App }] = await Promise.all([import("../tui/controller.js"), import("../tui/app.js")])
  const controller = await Controller.start(io, options, backend)
  controller.attachFiles(files)
  let exit: () => void = () => undefined
  const done = new Promise<void>((resolve) => {
    exit = resolve
  })
  // Ctrl-C is a key here (twice quits), not a signal.
  const removeInterrupt = io.onInterrupt?.(() => exit())
  instance.rerender(createElement(App, { controller, style, onExit: () => exit() }))
  // A prompt from the command line goes in as if typed; its turn streams on the screen like any other.
  // With no model yet it waits for /connect, as a typed prompt does, instead of failing and being lost.
  if (prompt && controller.waitsForModel && !prompt.trim().startsWith("/")) controller.holdPrompt(prompt)
  else if (prompt) void controller.submit(prompt)
  // A render error unmounts Ink (it shows the error); the session ends then too.
  const crashed = instance.waitUntilExit().then(
    () => 0,
    () => 1
  )
  const code = await Promise.race([done.then(() => 0), crashed])
  instance.unmount()
  removeInterrupt?.()
  await controller.dispose()
  const session = controller.session
  const where = attachUrl ? ` --attach ${attachUrl}` : ""
  if (session) io.stdout(`Session ${session.id} — resume with: lathe${where} --session ${session.id}\n`)
  return code
}

/**
 * Plain lines: each input line is a prompt or command; asks are answered by the next line; no escape codes. A
 * `prompt` from the command line is the first line.
 */
const lineMode = async (
  io: CliIO,
  options: ControllerOptions,
  backend: BackendFactory | undefined,
  prompt: string,
  files: ReadonlyArray<Attachment>
): Promise<number> => {
  const { Controller } = await import("../tui/controller.js")
  const controller = await Controller.start(io, options, backend)
  controller.attachFiles(files)
  const totals = emptyTotals()
  const render = textRenderer(io.stdout, io.stdout, totals)
  controller.onEvents((event) => {
    render(event)
    if (event.type === "permission.asked")
      io.stdout(
        `\nPermission needed: ${event.permission} ${visibleText(event.patterns.join(", "))}\n` +
          "Answer with once, always, or reject (anything else rejects with your words as the reason).\n"
      )
    if (event.type === "question.asked")
      for (const item of event.questions)
        io.stdout(
          `\nQuestion: ${plainText(item.question)}\n${(item.options ?? []).map((o, i) => `  ${i + 1}. ${plainText(o.label)}\n`).join("")}Answer on one line.\n`
        )
  })
  // Anything that failed (a turn, a command, no model configured) makes the exit status 1, for scripts.
  let failed = false
  controller.onNotes((note) => {
    if (note.level === "error") failed = true
    io.stdout(`\n[${plainText(note.title)}]\n${note.lines.map((l) => `  ${plainText(l)}\n`).join("")}`)
  })
  for (const item of controller.transcript.timeline)
    if (item.kind === "local") {
      if (item.level === "error") failed = true
      io.stdout(`[${plainText(item.title)}]\n${item.lines.map((l) => `  ${plainText(l)}\n`).join("")}`)
    }
  // No trust prompt without a screen: what the folder's config asks for, and how to grant it.
  if (controller.trustPrompt)
    io.stdout(
      `[trust]\n${[...controller.trustPrompt, `Ignored until you run \`lathe trust\` in ${controller.root}.`].map((l) => `  ${l}\n`).join("")}`
    )
  if (controller.session)
    io.stdout(`Resumed session ${controller.session.id}: ${plainText(controller.session.title)}\n`)
  const input = io.stdin
  if (!input && !prompt) return 0
  const rl = input ? createInterface({ input, terminal: false }) : undefined
  const removeInterrupt = io.onInterrupt?.(() => {
    if (!controller.interrupt()) rl?.close()
  })
  const lines = rl?.[Symbol.asyncIterator]()
  const nextLine = async () => {
    const next = await lines?.next()
    return next === undefined || next.done ? undefined : next.value
  }
  /** Answers asks from the next input lines while `work` runs (a prompt's turn). */
  const answerAsksDuring = async (work: Promise<void>) => {
    let settled = false
    void work.finally(() => {
      settled = true
    })
    while (!settled) {
      const ask = controller.transcript.permissions[0]
      const question = controller.transcript.questions[0]
      if (!ask && !question) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      const line = await nextLine()
      if (ask) {
        const word = (line ?? "").trim().toLowerCase()
        const reply =
          word === "once" || word === "o" || word === "y" || word === "yes"
            ? "once"
            : word === "always" || word === "a"
              ? "always"
              : "reject"
        const reason = reply === "reject" && word && word !== "reject" && word !== "r" ? line?.trim() : undefined
        await controller.replyPermission(ask.id, reply, reason)
      } else if (question)
        await controller.replyQuestion(
          question.id,
          line === undefined ? undefined : question.questions.map(() => [line.trim()])
        )
    }
    await work
  }
  if (prompt) await answerAsksDuring(controller.submit(prompt))
  for (let line = await nextLine(); line !== undefined; line = await nextLine()) {
    if (/^\/(exit|quit)\s*$/.test(line.trim())) break
    await answerAsksDuring(controller.submit(line))
  }
  await controller.idle()
  removeInterrupt?.()
  await controller.dispose()
  return failed ? 1 : 0
}
