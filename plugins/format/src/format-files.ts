import { readFile, stat } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import type { PluginContext } from "@lathe/plugin"
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
  /** The project root: where config is detected, `node_modules/.bin` is looked in (trusted), and formatters run. */
  readonly root: string
  /** Relative paths in the list resolve against this directory. */
  readonly directory: string
  /** The environment whose PATH is searched for the formatters' binaries. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Runs a formatter: the plugin context's `run` (the sandbox, no secrets in its environment). */
  readonly run: PluginContext["run"]
  /** Whether the project is trusted; until it is, its `node_modules/.bin` is never run (see `findBinary`). */
  readonly trusted: boolean
  /** Executables the person named for formatters (the `bin` option), by binary name. */
  readonly bins?: Readonly<Record<string, string>>
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

/** Runs `bin args` in the root through `options.run`; resolves with an error text when it fails, never rejects. */
const run = async (
  bin: string,
  args: ReadonlyArray<string>,
  options: FormatFilesOptions
): Promise<string | undefined> => {
  try {
    const result = await options.run(bin, args, { cwd: options.root, timeoutMs: options.timeoutMs })
    if (result.timedOut) return `it did not finish within ${options.timeoutMs} ms and was stopped`
    if (result.exitCode === 0) return undefined
    const how = result.exitCode === null ? `killed by ${result.signal ?? "a signal"}` : `exit code ${result.exitCode}`
    return `${how}: ${reason(`${result.stderr}\n${result.stdout}`)}`
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * Formats the given files (absolute, or relative to `directory`) in place with the project's formatters, each run
 * through `run` (in the host's sandbox, with no secret in its environment):
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
      const bin = await findBinary(root, formatter.bin, options.env, {
        trusted: options.trusted,
        ...(options.bins ? { bins: options.bins } : {})
      })
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
