import { closeSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Logger, References } from "effect"

/**
 * Lathe's log: JSON lines written to `<data>/logs/` (one file a day, rotated by size) and, when asked, to stderr;
 * never to stdout, which carries the answer or the JSON events. Off unless `LATHE_LOG` (or `--log-level`) names a
 * level: then nothing of it is built, so a run without it pays nothing.
 */

/** The levels a person can ask for: `info` (steps, tool calls, retries, compactions) or `debug` (and their starts). */
export type LogLevelName = "debug" | "info"

/** Where and what Lathe logs. */
export interface LogSettings {
  readonly level: LogLevelName
  /** The folder of the log files: `<data>/logs`. */
  readonly dir: string
  /** Also writes each line here (stderr) when set: `LATHE_LOG_STDERR=1`. */
  readonly stderr?: (text: string) => void
}

/** The most one log file holds before the next one starts: 10 MiB. */
export const MAX_LOG_FILE_BYTES = 10 * 1024 * 1024

/** How many log files are kept: the newest 10 (older ones are deleted when a process starts logging). */
export const KEEP_LOG_FILES = 10

/**
 * The log settings of an environment: undefined when logging is off (`LATHE_LOG` unset, empty or `off`); an error
 * text for a value that is not a level.
 */
export const logSettingsFromEnv = (
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
  stderr: (text: string) => void
): LogSettings | { readonly error: string } | undefined => {
  const value = env.LATHE_LOG?.trim().toLowerCase()
  if (value === undefined || value === "" || value === "off") return undefined
  if (value !== "debug" && value !== "info")
    return { error: `LATHE_LOG=${env.LATHE_LOG} is not a log level (debug, info or off): logging stays off.` }
  const toStderr = env.LATHE_LOG_STDERR === "1" || env.LATHE_LOG_STDERR === "true"
  return { level: value, dir: join(dataDir, "logs"), ...(toStderr ? { stderr } : {}) }
}

/** The effect log level a setting lets through. */
export const minimumLevel = (level: LogLevelName): "Debug" | "Info" => (level === "debug" ? "Debug" : "Info")

const FILE = /^lathe-\d{4}-\d{2}-\d{2}(\.\d+)?\.log$/

/** The day's file name: `lathe-<YYYY-MM-DD>.log`, then `lathe-<date>.1.log`, `.2.log` once one is full. */
const fileName = (day: string, part: number) => `lathe-${day}${part === 0 ? "" : `.${part}`}.log`

/** Deletes all but the newest {@link KEEP_LOG_FILES} log files of `dir` (by modification time). */
export const pruneLogFiles = (dir: string, keep = KEEP_LOG_FILES): void => {
  let names: Array<string>
  try {
    names = readdirSync(dir).filter((name) => FILE.test(name))
  } catch {
    return
  }
  if (names.length <= keep) return
  const dated = names.map((name) => ({
    name,
    mtime: statSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0
  }))
  dated.sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name))
  for (const { name } of dated.slice(keep)) {
    try {
      unlinkSync(join(dir, name))
    } catch {
      // Another process removed it first.
    }
  }
}

/**
 * Appends lines to the day's log file, starting the next part when one reaches {@link MAX_LOG_FILE_BYTES}.
 * Synchronous on purpose: a line is on disk when the call returns, so a crash keeps the lines that led to it (a
 * write costs a few microseconds; a step costs milliseconds).
 */
export const makeLogWriter = (dir: string, now: () => Date = () => new Date(), max = MAX_LOG_FILE_BYTES) => {
  let fd: number | undefined
  let day = ""
  let part = 0
  let size = 0
  let broken = false
  const open = () => {
    if (fd !== undefined) closeSync(fd)
    for (;;) {
      const file = join(dir, fileName(day, part))
      size = statSync(file, { throwIfNoEntry: false })?.size ?? 0
      if (size < max) break
      part++
    }
    fd = openSync(join(dir, fileName(day, part)), "a")
  }
  return (line: string): void => {
    if (broken) return
    try {
      const today = now().toISOString().slice(0, 10)
      if (today !== day) {
        day = today
        part = 0
        mkdirSync(dir, { recursive: true })
        open()
      } else if (size >= max) {
        part++
        open()
      }
      const bytes = Buffer.from(`${line}\n`)
      writeSync(fd as number, bytes)
      size += bytes.length
    } catch {
      // A log that cannot be written must not stop the run: it stops logging to the file instead.
      broken = true
    }
  }
}

/** One writer per log folder in a process (the CLI's logger and the loop's share it): one open file, one size count. */
const writers = new Map<string, (line: string) => void>()
const writerFor = (dir: string) => {
  let write = writers.get(dir)
  if (write === undefined) {
    pruneLogFiles(dir)
    write = makeLogWriter(dir)
    writers.set(dir, write)
  }
  return write
}

/** A value as JSON (an error as its message; a bigint as a string), never throwing. */
const plain = (value: unknown): unknown =>
  value instanceof Error ? { error: value.message } : typeof value === "bigint" ? String(value) : value

/**
 * The JSON-lines logger: `{"time","level","message",...fields}` per entry, the fields from an object logged after the
 * message and from the log annotations. Written to the log file and, with `stderr`, there as well.
 */
export const jsonLogger = (settings: LogSettings) => {
  const write = writerFor(settings.dir)
  return Logger.make((options) => {
    const parts = Array.isArray(options.message) ? options.message : [options.message]
    const [message, ...rest] = parts
    const fields: Record<string, unknown> = {}
    for (const part of rest)
      if (typeof part === "object" && part !== null && !(part instanceof Error)) Object.assign(fields, part)
      else if (part !== undefined) fields.detail = plain(part)
    const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
    const entry = {
      time: options.date.toISOString(),
      level: options.logLevel.toLowerCase(),
      message: typeof message === "string" ? message : plain(message),
      ...annotations,
      ...fields
    }
    let line: string
    try {
      line = JSON.stringify(entry)
    } catch {
      line = JSON.stringify({ time: entry.time, level: entry.level, message: String(message) })
    }
    write(line)
    settings.stderr?.(`${line}\n`)
  })
}
