import { writeFileSync } from "node:fs"
import { resolve } from "node:path"
import type { LatheEvent } from "@lathe/plugin/schema"
import type { Backend, TurnEnd } from "../backend.js"
import type { CliIO } from "../io.js"
import { plainText } from "../terminal-text.js"
import { LocalBackend } from "../tui/local-backend.js"
import { type StreamJsonContext, streamJsonWriter } from "./run-stream-json.js"
import { type TurnSummary, turnTally } from "./run-tally.js"

/** `lathe run --format`: Lathe's text, Lathe's events (`json`), or Claude Code's line protocol (`stream-json`). */
export type RunFormat = "text" | "json" | "stream-json"

/**
 * The closing line of `--format json`: the last line of every turn, with the facts of stream-json's `result` line in
 * Lathe's own names. It is the CLI's line, not an event of the loop (no bus carries it), so it is not in `LatheEvent`.
 */
export interface RunResultLine {
  readonly type: "run.result"
  readonly sessionID: string
  readonly subtype: TurnSummary["subtype"]
  readonly isError: boolean
  readonly result: string
  readonly steps: number
  readonly durationMs: number
  readonly cost: number
  readonly tokens: TurnSummary["tokens"]
  readonly permissionDenials: TurnSummary["permissionDenials"]
  readonly structured?: unknown
  readonly error?: TurnSummary["error"]
  readonly exitCode: number
}

/** The `run.result` line of a turn. */
export const runResultLine = (summary: TurnSummary): RunResultLine => ({ type: "run.result", ...summary })

/**
 * What `lathe run` writes besides the text renderer: the JSON lines of `json` and `stream-json`, the closing line of
 * each turn, and `-o`'s file. Every format counts the turn (`run-tally.ts`), so the file and the exit code are the same
 * whatever stdout carries.
 */
export const runOutput = (format: RunFormat, io: CliIO, options: { readonly lastMessageFile?: string | undefined }) => {
  const tally = turnTally()
  const lines = format === "json" ? linesPerTick(io.stdout) : undefined
  // What the `init` line says of this process; a run that fails before the backend said it has no tools to list.
  let context: StreamJsonContext = { cwd: io.cwd, tools: [], permissionMode: "default" }
  const active = format === "stream-json" ? streamJsonWriter(io.stdout, () => context) : undefined
  return {
    /** Sets what the stream-json `init` line says of this process (call before the first turn). */
    describe: (described: StreamJsonContext) => {
      context = described
    },
    /** Starts a turn of `sessionID`. */
    begin: (sessionID: string) => {
      tally.begin(sessionID)
      active?.begin(sessionID)
    },
    /** The turn's session was removed again (its prompt failed before anything was stored): its lines name none. */
    forget: () => tally.forget(),
    /** One event: counted, and written as `--format json` or `stream-json` write it (text has its own renderer). */
    event: (event: LatheEvent) => {
      tally.see(event)
      if (lines) lines.write(`${JSON.stringify(event)}\n`)
      else active?.event(event)
    },
    /**
     * Ends the turn: `-o`'s file when the turn ran (its prompt was stored; not a run that failed before it), then its
     * closing line (json, stream-json); returns the exit code, 1 when the file could not be written on a turn that was
     * otherwise done.
     */
    close: (exitCode: number, error: TurnSummary["error"], closing: TurnClosing = {}): number => {
      let code = exitCode
      let failure = error
      // The file first: when it cannot be written the closing line says so, with the exit code the run ends with.
      if (options.lastMessageFile !== undefined && tally.ran()) {
        const written = writeLastMessage(resolve(io.cwd, options.lastMessageFile), tally.text(closing.structured))
        if (written !== undefined) {
          const message = `could not write the last message to ${options.lastMessageFile}: ${written}`
          io.stderr(`lathe run: ${plainText(message)}\n`)
          if (code === 0) {
            code = 1
            failure = { name: "OutputFileError", message }
          }
        }
      }
      const summary = tally.summary(code, failure, closing.structured)
      if (lines) {
        lines.flush()
        io.stdout(`${JSON.stringify(runResultLine(summary))}\n`)
      } else active?.result(summary, closing.model)
      return code
    }
  }
}

/**
 * `--format json`'s lines, written once per turn of the event loop: a step announces a dozen events at once, and a
 * write each (a system call on a pipe or a file) was ~0.5 ms of an edit step on a 2-core machine. The lines go out
 * in order, before anything else the run writes on stdout (`flush`), and at the latest when the process exits.
 */
export const linesPerTick = (write: (text: string) => void) => {
  let pending: Array<string> = []
  let scheduled = false
  const flush = () => {
    if (!scheduled) return
    scheduled = false
    process.removeListener("exit", flush)
    const text = pending.length === 1 ? (pending[0] as string) : pending.join("")
    pending = []
    write(text)
  }
  return {
    write: (line: string) => {
      pending.push(line)
      if (scheduled) return
      scheduled = true
      setImmediate(flush)
      process.once("exit", flush)
    },
    flush
  }
}

/** Writes `text` to `path`; returns why it could not, if it could not. */
const writeLastMessage = (path: string, text: string): string | undefined => {
  try {
    writeFileSync(path, text)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** What else `RunOutput.close` needs to know of the turn. */
export interface TurnClosing {
  /** The model asked for (`-m`), for an `init` line the turn never wrote (it failed before its prompt was stored). */
  readonly model?: string | undefined
  /** The answer's JSON value under `--output-schema`: it is then the result. */
  readonly structured?: unknown
}

/** The name of a backend's typed failure (its tag), for the closing line; `Unknown` without one. */
export const errorName = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : "Unknown"

/** Why a turn that ran failed, for its closing line, given its exit code and its asks rejected for want of a terminal. */
export const turnError = (
  end: TurnEnd | undefined,
  exitCode: number,
  noTerminal: number
): TurnSummary["error"] | undefined => {
  const error = end?.answer?.error
  if (error !== undefined) return { name: error.name, message: error.message }
  if (exitCode === 130) return { name: "Aborted", message: "The run was interrupted." }
  if (exitCode !== 0 && end?.answer === undefined)
    return { name: "Unknown", message: end?.error ?? "The server's event stream ended before the turn did." }
  if (noTerminal > 0)
    return {
      name: "PermissionRejected",
      message: "A permission ask was rejected: there was no terminal to answer it (--yes or --allow grants asks)."
    }
  return undefined
}

/**
 * What the stream-json `init` line says of this process: its tools (the in-process agent's plugins'; a server's are not
 * listed) and how asks are answered.
 */
export const streamContext = async (backend: Backend, io: CliIO, yes: boolean): Promise<StreamJsonContext> => {
  const plugins = backend instanceof LocalBackend ? await backend.plugins() : undefined
  return {
    cwd: io.cwd,
    tools: plugins?.ok ? [...new Set(plugins.value.tools.map((tool) => tool.id))] : [],
    permissionMode: yes ? "bypassPermissions" : "default"
  }
}

/** A run's output; see {@link runOutput}. */
export type RunOutput = ReturnType<typeof runOutput>
