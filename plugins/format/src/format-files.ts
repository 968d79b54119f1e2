import { spawn } from "node:child_process"
import { readFile, stat } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { configuredFormatters, type Formatter, type FormatterName, findBinary, formatterFor } from "./formatters.js"

/** What one formatter did to the files of one tool call. */
export interface FormatOutcome {
  readonly formatter: FormatterName
  /** The files it changed, relative to the project root with `/` separators (unchanged files are not listed). */
  readonly changed: ReadonlyArray<string>
  /** Why it failed (a non-zero exit, a crash, or the time limit), if it did; files it changed anyway stay listed. */
  readonly error?: string
}

/** How {@link formatFiles} runs. */
export interface FormatFilesOptions {
  /** The project root: where config is detected, `node_modules/.bin` is looked in, and formatters run. */
  readonly root: string
  /** Relative paths in the list resolve against this directory. */
  readonly directory: string
  /** The environment the formatters see; its PATH is searched for their binaries. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Each formatter run is killed after this long. */
  readonly timeoutMs: number
  /** Formatters never to run. */
  readonly disabled: ReadonlySet<FormatterName>
}

const isFile = (path: string) =>
  stat(path).then(
    (info) => info.isFile(),
    () => false
  )
const contents = (path: string) => readFile(path).catch(() => undefined)
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

/** A one-line reason from a formatter's output: its first line flagged as an error, else its first line. */
const reason = (text: string): string => {
  const lines = text
    .replace(ANSI, "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^[━─]+$/.test(line))
  const flagged = lines.find((line) => /^(?:×|error)/i.test(line))
  return (flagged ?? lines[0] ?? "no output").slice(0, 300)
}

/**
 * Runs `bin args` in the root; resolves with an error text when it fails or outlives `timeoutMs`, never rejects.
 * It runs in its own process group, so the time limit kills whatever it started too (a shell wrapper's children).
 */
const run = (bin: string, args: ReadonlyArray<string>, options: FormatFilesOptions): Promise<string | undefined> =>
  new Promise((resolvePromise) => {
    let output = ""
    let settled = false
    const done = (error: string | undefined) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolvePromise(error)
    }
    const child = spawn(bin, args, {
      cwd: options.root,
      env: { ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
      child.stdout.destroy()
      child.stderr.destroy()
      done(`it did not finish within ${options.timeoutMs} ms and was stopped`)
    }, options.timeoutMs)
    const collect = (chunk: Buffer) => {
      if (output.length < 16_384) output += chunk.toString("utf8")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    child.on("error", (error) => done(error.message))
    child.on("close", (code, signal) => {
      done(code === 0 ? undefined : `${signal ? `killed by ${signal}` : `exit code ${code}`}: ${reason(output)}`)
    })
  })

/**
 * Formats the given files (absolute, or relative to `directory`) in place with the project's own formatters:
 * each existing file inside the root goes to the first configured formatter for its extension, one run per
 * formatter, runs in parallel. Files outside the root, missing files, files no formatter takes and formatters whose
 * binary is missing are skipped without a word. Never rejects: a failed run is an outcome with `error`.
 */
export const formatFiles = async (
  paths: ReadonlyArray<string>,
  options: FormatFilesOptions
): Promise<Array<FormatOutcome>> => {
  const root = resolve(options.root)
  const inside = [...new Set(paths.map((path) => resolve(options.directory, path)))].filter((path) => {
    const rel = relative(root, path)
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)
  })
  const existing = (await Promise.all(inside.map(async (path) => ((await isFile(path)) ? path : undefined)))).filter(
    (path): path is string => path !== undefined
  )
  if (existing.length === 0) return []
  const available = (await configuredFormatters(root)).filter((name) => !options.disabled.has(name))
  const groups = new Map<Formatter, Array<string>>()
  for (const path of existing) {
    const formatter = formatterFor(path, available)
    if (formatter) groups.set(formatter, [...(groups.get(formatter) ?? []), path])
  }
  const outcomes = await Promise.all(
    [...groups].map(async ([formatter, files]): Promise<FormatOutcome | undefined> => {
      const bin = await findBinary(root, formatter.bin, options.env)
      if (bin === undefined) return undefined
      const labels = files.map((path) => relative(root, path).split(sep).join("/"))
      const before = await Promise.all(files.map(contents))
      // Absolute paths, so a file named like an option (`-x.ts`) is never read as one.
      const error = await run(bin, formatter.args(files), options)
      const after = await Promise.all(files.map(contents))
      const changed = labels.filter((_, index) => {
        const [was, now] = [before[index], after[index]]
        return was !== undefined && now !== undefined && !was.equals(now)
      })
      return { formatter: formatter.name, changed, ...(error === undefined ? {} : { error }) }
    })
  )
  return outcomes.filter((outcome): outcome is FormatOutcome => outcome !== undefined)
}
