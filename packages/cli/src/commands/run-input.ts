import { fstatSync } from "node:fs"
import { RUN_FLAGS_SOURCE } from "@lathe/permission"
import type { Rule } from "@lathe/plugin"
import type { PromptPart } from "@lathe/plugin/schema"
import { type Attachment, attachmentParts, MiB, readAttachments, utf8 } from "../file-attachments.js"
import type { CliIO } from "../io.js"

// What a script hands `lathe run` besides its message: text piped on stdin, files named with `-f`, and permission
// rules for this run (`--allow`, `--deny`). Each is read and checked here, before anything starts, so a mistake ends
// the run with exit 2 and a message, never a request with part of the input or a session left behind.

/** Piped input (stdin) past this many bytes is refused, never cut: 1 MiB, about 250,000 tokens of text. */
export const PIPED_LIMIT = 1024 * 1024
/**
 * How long a socket on stdin (a program's child-process pipe: Node's spawn and execFile make one, and leave it open
 * unless told otherwise) may stay silent before the run goes on without it. A shell pipe (a FIFO) is waited for.
 */
export const SOCKET_WAIT_MS = 3_000

/** What stdin is: a terminal or nothing to read (`none`: /dev/null, a closed descriptor), a file, a pipe or a socket. */
type StdinKind = "none" | "file" | "pipe" | "socket"

const stdinKind = (stream: NodeJS.ReadableStream): StdinKind => {
  // Another stream than the process's (a test's) is a pipe.
  if (stream !== process.stdin) return "pipe"
  try {
    const info = fstatSync(0)
    return info.isFile() ? "file" : info.isFIFO() ? "pipe" : info.isSocket() ? "socket" : "none"
  } catch {
    return "none" // a closed descriptor
  }
}

type Drained =
  | { readonly kind: "bytes"; readonly bytes: Buffer }
  | { readonly kind: "too-large" }
  | { readonly kind: "silent" }
  | { readonly kind: "error"; readonly message: string }

/**
 * Reads `stream` to its end, up to `limit` bytes (one more ends the read: `too-large`); with `waitMs`, a stream that
 * sends nothing (not even its end) in that time is `silent`. A read that stops early lets go of the stream, so an
 * open pipe does not keep the process alive.
 */
const drain = (stream: NodeJS.ReadableStream, limit: number, waitMs?: number): Promise<Drained> =>
  new Promise((done) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    const finish = (result: Drained, release: boolean) => {
      if (timer !== undefined) clearTimeout(timer)
      stream.off("data", onData)
      stream.off("end", onEnd)
      stream.off("error", onError)
      if (release) {
        stream.pause()
        ;(stream as { destroy?: () => void }).destroy?.()
      }
      done(result)
    }
    const onData = (chunk: Buffer | string) => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
      size += buffer.length
      if (size > limit) finish({ kind: "too-large" }, true)
      else chunks.push(buffer)
    }
    const onEnd = () => finish({ kind: "bytes", bytes: Buffer.concat(chunks) }, false)
    const onError = (error: Error) => finish({ kind: "error", message: error.message }, true)
    stream.on("data", onData)
    stream.on("end", onEnd)
    stream.on("error", onError)
    if (waitMs !== undefined) timer = setTimeout(() => size === 0 && finish({ kind: "silent" }, true), waitMs)
  })

/** What stdin gave: its text (empty when nothing came), or the usage error that ends the run. */
export type Piped = { readonly text: string; readonly notice?: string } | { readonly error: string }

/**
 * Reads stdin for `lathe run`. With no `message`, stdin is the message (read to its end, as before). With one, stdin
 * is read only when it is a file, a pipe or a socket (never /dev/null or a terminal), a socket only if it sends
 * something within {@link SOCKET_WAIT_MS}. Text past {@link PIPED_LIMIT} or that is not UTF-8 is an error.
 */
export const readPiped = async (
  stdin: NodeJS.ReadableStream | undefined,
  stdinIsTTY: boolean,
  hasMessage: boolean
): Promise<Piped> => {
  if (stdin === undefined || stdinIsTTY) return { text: "" }
  const kind = hasMessage ? stdinKind(stdin) : "pipe"
  if (kind === "none") return { text: "" }
  const drained = await drain(stdin, PIPED_LIMIT, kind === "socket" ? SOCKET_WAIT_MS : undefined)
  if (drained.kind === "silent")
    return {
      text: "",
      notice:
        `nothing arrived on stdin within ${SOCKET_WAIT_MS / 1000} s, so the message goes alone ` +
        "(a program that starts lathe with a pipe it never writes to should close it, or give </dev/null)."
    }
  if (drained.kind === "error") return { error: `stdin could not be read: ${drained.message}` }
  if (drained.kind === "too-large")
    return {
      error:
        `stdin holds more than ${MiB(PIPED_LIMIT)} (${PIPED_LIMIT} bytes), the limit for piped input; nothing was ` +
        "sent. Send less (git diff --stat, a narrower path, head -c), or save it to a file in the project and name " +
        'the file in the message (lathe run "review changes.diff"), so the agent reads the parts it needs.'
    }
  const text = utf8(drained.bytes)
  if (text === undefined)
    return {
      error:
        "stdin is not text (it holds NUL bytes or is not valid UTF-8); nothing was sent. Piped input must be UTF-8 " +
        "text; attach an image or a PDF with -f <file>."
    }
  return { text }
}

/**
 * The part that carries piped text beside the message: the message is the instruction, this the material it is about,
 * in a block named as stdin. Synthetic: transcripts show the person's message, the model gets both.
 */
export const pipedPart = (text: string): PromptPart => ({
  type: "text",
  synthetic: true,
  text: `The user piped this text into the command (stdin), as the material for the request above:\n<stdin>\n${text.replace(/\n$/, "")}\n</stdin>`
})

// --allow / --deny

/** How a rule is written on the command line, for the error that names it. */
export const RULE_SYNTAX =
  '<permission>[:<pattern>], as in lathe.json\'s "permission" (e.g. --allow "bash:git *", --deny edit, --allow "read:*.env")'

// A permission is a tool's or an ask's name (`bash`, `edit`, `external_directory`, an MCP tool's `server_tool`).
const PERMISSION = /^[A-Za-z0-9_.*?-]+$/

/**
 * The rules `--allow` and `--deny` give, in the order given, deny after allow (so `--deny` wins a tie); a string names
 * the rule that is not written as {@link RULE_SYNTAX}.
 */
export const runRules = (
  allow: ReadonlyArray<string> = [],
  deny: ReadonlyArray<string> = []
): ReadonlyArray<Rule> | string => {
  const rules: Array<Rule> = []
  for (const [flag, values, action] of [
    ["--allow", allow, "allow"],
    ["--deny", deny, "deny"]
  ] as const)
    for (const value of values) {
      const colon = value.indexOf(":")
      const permission = (colon === -1 ? value : value.slice(0, colon)).trim()
      const pattern = colon === -1 ? "*" : value.slice(colon + 1).trim()
      if (!PERMISSION.test(permission) || pattern === "")
        return `${flag} "${value}" is not a permission rule. Write ${RULE_SYNTAX}.`
      rules.push({ permission, pattern, action, source: RUN_FLAGS_SOURCE })
    }
  return rules
}

// The run's input, put together

/** What `lathe run` sends besides the message's words, and the rules it runs under. */
export interface RunInput {
  /** The message: the words given, or stdin when none were. */
  readonly message: string
  /** The parts after the message's text: piped text, then the attached files. */
  readonly parts: ReadonlyArray<PromptPart>
  readonly files: ReadonlyArray<Attachment>
  /** `--allow` and `--deny`, over the config's rules for this run. */
  readonly rules: ReadonlyArray<Rule>
}

/** The options of `lathe run` this file reads. */
export interface RunInputOptions {
  readonly command?: string | undefined
  readonly attach?: string | undefined
  readonly file?: ReadonlyArray<string> | undefined
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * The message, the piped text and the files of a `lathe run`, read and checked before anything starts; a number is the
 * exit code of a usage error (said on stderr). `readStdin` false leaves stdin alone (another option reads it).
 */
export const runInput = async (
  values: RunInputOptions,
  positionals: ReadonlyArray<string>,
  io: CliIO,
  readStdin = true
): Promise<RunInput | number> => {
  const usage = (text: string) => {
    io.stderr(`lathe run: ${text}\n`)
    return 2
  }
  const words = values.command ? "" : positionals.join(" ").trim()
  const hasMessage = words !== "" || values.command !== undefined
  const piped = readStdin ? await readPiped(io.stdin, io.stdinIsTTY === true, hasMessage) : { text: "" }
  if ("error" in piped) return usage(piped.error)
  if (piped.notice !== undefined) io.stderr(`lathe: ${piped.notice}\n`)
  const stdin = piped.text.trim()
  const message = hasMessage ? words : stdin
  if (!message && !values.command && readStdin)
    return usage('no message. Give the task as arguments (lathe run "fix the failing test") or on stdin.')
  const rules = runRules(values.allow, values.deny)
  if (typeof rules === "string") return usage(rules)
  const local = values.attach === undefined
  if (!local && rules.length > 0)
    return usage("--allow and --deny apply to a run on this machine; a server's rules are its own (no --attach).")
  if (!local && (values.file?.length ?? 0) > 0)
    return usage(
      "-f applies to a run on this machine (its rules decide what may be read); it cannot be used with --attach."
    )
  const files = await readAttachments(values.file ?? [], io.cwd)
  if (typeof files === "string") return usage(files)
  const parts = [...(hasMessage && stdin ? [pipedPart(piped.text)] : []), ...attachmentParts(files)]
  return { message, parts, files, rules }
}
