/**
 * Reading one config file: JSONC parsing, schema errors with `file:line:col`, `{env:}` / `{file:}` substitution.
 * What an untrusted file may set is decided in `config-untrusted.ts`; `config.ts` merges the results.
 */
import { readFile } from "node:fs/promises"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { parseOnce } from "@lathe/plugin/host"
import { Effect, Schema } from "effect"
import { findNodeAtLocation, type Node, type ParseError, parse, parseTree, printParseErrorCode } from "jsonc-parser"
import { z } from "zod"
import { StoreConfig } from "./config-schema.js"

/** Why a config could not be loaded. */
export const ConfigErrorReason = Schema.Literals([
  "InvalidJson",
  "InvalidSchema",
  "Unreadable",
  "InvalidEnv",
  "MissingFile"
])
/** Why a config could not be loaded. */
export type ConfigErrorReason = typeof ConfigErrorReason.Type

/**
 * A config file (or variable) is broken. `message` is the whole text for a person: it starts with
 * `<file>:<line>:<col>:` when the problem has a place, and lists every schema problem, one per line.
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  reason: ConfigErrorReason,
  message: Schema.String
}) {}

/** A path into a config value: object keys and array indexes. */
export type ConfigPath = ReadonlyArray<string | number>

/** A config file's text and its parse. Without `tree` (a config built from an object) places are just the file. */
export interface ParsedConfig {
  readonly file: string
  readonly text: string
  readonly tree: Node | undefined
  readonly value: unknown
}

/** A plain JSON object. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Reads a file as UTF-8; `undefined` when it does not exist. */
export const readText = Effect.fn("Config.readFile")(function* (file: string) {
  return yield* Effect.tryPromise({
    try: () =>
      readFile(file, "utf8").catch((error: NodeJS.ErrnoException) =>
        error.code === "ENOENT" ? undefined : Promise.reject(error)
      ),
    catch: (error) =>
      new ConfigError({ file, reason: "Unreadable", message: `${file}: cannot read: ${message(error)}` })
  })
})

const lineCol = (text: string, offset: number): string => {
  const before = text.slice(0, offset)
  return `${before.split("\n").length}:${offset - before.lastIndexOf("\n")}`
}

const syntaxHint = "fix the syntax, comments and trailing commas are allowed"

/**
 * How deep objects and arrays may nest in a config file. Lathe's own configs need a handful of levels; the parser and
 * every walk after it recurse, so a file nested thousands deep would overflow the stack instead of being named.
 */
export const MAX_CONFIG_DEPTH = 64

/**
 * The offset of the first `{` or `[` that opens a level deeper than `max`, or undefined when none does. One linear
 * pass with no recursion; brackets inside strings and comments do not count.
 */
export const tooDeepAt = (text: string, max: number): number | undefined => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++
    } else if (c === 0x2f /* / */ && text.charCodeAt(i + 1) === 0x2f) {
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a /* * */) {
      const end = text.indexOf("*/", i + 2)
      i = end === -1 ? text.length : end + 1
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return i
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth = Math.max(0, depth - 1)
  }
  return undefined
}

/**
 * Parses JSONC (comments and trailing commas allowed); a syntax error names its line and column, and so does a file
 * nested deeper than {@link MAX_CONFIG_DEPTH} (checked before parsing, so it never overflows the stack).
 */
export const parseJsonc = (file: string, raw: string): Effect.Effect<ParsedConfig, ConfigError> => {
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw
  const deep = tooDeepAt(text, MAX_CONFIG_DEPTH)
  if (deep !== undefined)
    return Effect.fail(
      new ConfigError({
        file,
        reason: "InvalidJson",
        message:
          `${file}:${lineCol(text, deep)}: objects and arrays are nested more than ${MAX_CONFIG_DEPTH} levels deep ` +
          "here; a Lathe config needs only a few levels. Fix or remove this file (nothing in it was applied)."
      })
    )
  const errors: Array<ParseError> = []
  const value: unknown = parse(text, errors, { allowTrailingComma: true })
  const first = errors[0]
  if (first) {
    const what = printParseErrorCode(first.error)
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
    return Effect.fail(
      new ConfigError({
        file,
        reason: "InvalidJson",
        message: `${file}:${lineCol(text, first.offset)}: invalid JSON: ${what} (${syntaxHint})`
      })
    )
  }
  return Effect.succeed({ file, text, tree: parseTree(text, [], { allowTrailingComma: true }), value })
}

/** `provider.local.baseURL`, `plugin[1]`, `permission.read["*.env"]`. */
export const dotted = (path: ConfigPath): string =>
  path
    .map((segment, index) =>
      typeof segment === "number"
        ? `[${segment}]`
        : /^[A-Za-z_$][\w$-]*$/.test(segment)
          ? `${index === 0 ? "" : "."}${segment}`
          : `[${JSON.stringify(segment)}]`
    )
    .join("")

/** Where a path is in the file: its value, or (for keys, and for missing values) the nearest existing key. */
const locate = (parsed: ParsedConfig, path: ConfigPath, key: boolean): number => {
  for (let n = path.length; n >= 0 && parsed.tree; n--) {
    const node = findNodeAtLocation(parsed.tree, path.slice(0, n))
    if (!node) continue
    return (key || n < path.length) && node.parent?.type === "property" ? node.parent.offset : node.offset
  }
  return 0
}

/** `<file>:<line>:<col>` of a path (just `<file>` without a parse tree). */
const place = (parsed: ParsedConfig, path: ConfigPath, key: boolean): string =>
  parsed.tree ? `${parsed.file}:${lineCol(parsed.text, locate(parsed, path, key))}` : parsed.file

const valueAt = (value: unknown, path: ConfigPath): { readonly found: boolean; readonly value: unknown } => {
  let current = value
  for (const segment of path) {
    if (!(isObject(current) || Array.isArray(current)) || !Object.hasOwn(current, segment))
      return { found: false, value: undefined }
    current = (current as Record<string | number, unknown>)[segment]
  }
  return { found: true, value: current }
}

const describe = ({ found, value }: { readonly found: boolean; readonly value: unknown }): string => {
  if (!found) return "nothing"
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "object") return "object"
  if (typeof value === "string")
    return `string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)}`
  return `${typeof value} ${String(value)}`
}

const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length] ?? 0
}

const hintFor = (path: ConfigPath, known: ReadonlyArray<string> | undefined): string | undefined => {
  const last = String(path[path.length - 1] ?? "")
  if (known) {
    const close = known.find((key) => distance(key, last) <= 2)
    return close === undefined ? undefined : `did you mean "${close}"?`
  }
  const at = dotted(path)
  if (/^(model|small_model|agent\.[^.]+\.model)$/.test(at)) return 'for example "anthropic/claude-sonnet-4-5"'
  if (/^provider\.[^.]+\.type$/.test(at))
    return (
      'use "openai-compatible" for vLLM, llama.cpp and other OpenAI-style servers; leave "type" out when the ' +
      'provider id is a type ("ollama", "google", …); lathe models lists every provider'
    )
  if (/^provider\.[^.]+\.baseURL$/.test(at)) return 'for example "http://localhost:11434/v1"'
  if (/\.cost\.\w+$/.test(at)) return "USD per million tokens"
  return undefined
}

/** One schema problem in a file. */
export interface ConfigProblem {
  readonly path: ConfigPath
  /** Human text after "expected". */
  readonly expected: string
  /** For an unknown key: the keys that are allowed there. */
  readonly known?: ReadonlyArray<string>
}

/** Formats problems as `<file>:<line>:<col>: <path>: expected <x>, got <y> (<hint>)`, in file order. */
export const schemaError = (
  parsed: ParsedConfig,
  value: unknown,
  problems: ReadonlyArray<ConfigProblem>
): ConfigError => {
  const lines = problems.map(({ path, expected, known }) => {
    const got = known ? `unknown key ${JSON.stringify(path[path.length - 1])}` : describe(valueAt(value, path))
    const hint = hintFor(path, known)
    const at = `${place(parsed, path, known !== undefined)}: ${path.length > 0 ? `${dotted(path)}: ` : ""}`
    return {
      offset: locate(parsed, path, known !== undefined),
      line: `${at}expected ${expected}, got ${got}${hint ? ` (${hint})` : ""}`
    }
  })
  const unique = [...new Map(lines.sort((a, b) => a.offset - b.offset).map((l) => [l.line, l])).keys()]
  return new ConfigError({ file: parsed.file, reason: "InvalidSchema", message: unique.join("\n") })
}

const article: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array"
}

// The "expected" text for issues whose schema gave none; `known` remembers the keys each unknown-key text lists.
const expectedText =
  (known: Map<string, ReadonlyArray<string>>) =>
  (issue: z.core.$ZodRawIssue): string | undefined => {
    switch (issue.code) {
      case "invalid_type":
        return article[issue.expected] ?? `a ${issue.expected}`
      case "invalid_value":
        return `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`
      case "unrecognized_keys": {
        const keys = issue.inst instanceof z.ZodObject ? Object.keys(issue.inst.shape) : []
        const text = `one of the keys ${keys.map((k) => JSON.stringify(k)).join(", ")}`
        known.set(text, keys)
        return text
      }
      case "too_small":
        return `a number >= ${String(issue.minimum)}`
      case "too_big":
        return `a number <= ${String(issue.maximum)}`
      default:
        return undefined
    }
  }

// Unions report the branch that got furthest into the value, else their own message.
const problemsOf = (
  issues: ReadonlyArray<z.core.$ZodIssue>,
  base: ConfigPath,
  known: ReadonlyMap<string, ReadonlyArray<string>>
): Array<ConfigProblem> =>
  issues.flatMap((issue): Array<ConfigProblem> => {
    const path = [...base, ...issue.path.filter((s): s is string | number => typeof s !== "symbol")]
    if (issue.code === "invalid_union") {
      const depth = (branch: ReadonlyArray<z.core.$ZodIssue>) => Math.max(0, ...branch.map((i) => i.path.length))
      const best = [...issue.errors].sort((a, b) => depth(b) - depth(a))[0]
      return best && depth(best) > 0 ? problemsOf(best, path, known) : [{ path, expected: issue.message }]
    }
    if (issue.code === "unrecognized_keys") {
      const keys = known.get(issue.message) ?? []
      return issue.keys.map((key) => ({ path: [...path, key], expected: issue.message, known: keys }))
    }
    return [{ path, expected: issue.message }]
  })

/** Validates a value against a schema; a failure lists every problem with its place in the file. */
export const validate = <S extends z.ZodType>(
  parsed: ParsedConfig,
  value: unknown,
  schema: S
): Effect.Effect<z.output<S>, ConfigError> => {
  const known = new Map<string, ReadonlyArray<string>>()
  const result = schema.safeParse(value, { error: expectedText(known), ...parseOnce })
  return result.success
    ? Effect.succeed(result.data)
    : Effect.fail(schemaError(parsed, value, problemsOf(result.error.issues, [], known)))
}

const TOKEN = /\{(env|file):([^}]*)\}/g

/** One `{env:NAME}` placeholder a trusted config file used, and what it was replaced with. */
export interface ResolvedEnv {
  readonly name: string
  readonly value: string
}

/** The names the `{env:NAME}` placeholders in a config value refer to, in order, without duplicates. */
export const envReferences = (value: unknown): Array<string> => {
  const names = new Set<string>()
  const walk = (node: unknown): void => {
    if (typeof node === "string") {
      for (const [, kind, name = ""] of node.matchAll(TOKEN)) if (kind === "env") names.add(name.trim())
    } else if (Array.isArray(node)) node.forEach(walk)
    else if (isObject(node)) Object.values(node).forEach(walk)
  }
  walk(value)
  return [...names]
}

/**
 * Replaces `{env:NAME}` (empty when unset) and `{file:path}` (trimmed contents; relative to the config file,
 * `~/` is home) in every string value. In an untrusted file each is replaced by "" and listed in `ignored`.
 */
export const substitute = Effect.fnUntraced(function* (
  parsed: ParsedConfig,
  value: unknown,
  options: {
    readonly env: Readonly<Record<string, string | undefined>>
    readonly home: string
    readonly trusted: boolean
  }
) {
  const ignored: Array<string> = []
  const readReferenced = (reference: string, path: ConfigPath) => {
    const name = reference.trim()
    const file = name.startsWith("~/") ? join(options.home, name.slice(2)) : resolve(dirname(parsed.file), name)
    const at = `${place(parsed, path, false)}: ${dotted(path)}: {file:${reference}}`
    return readText(file).pipe(
      Effect.mapError(
        (error) => new ConfigError({ file: parsed.file, reason: error.reason, message: `${at}: ${error.message}` })
      ),
      Effect.flatMap((text) =>
        text === undefined
          ? Effect.fail(
              new ConfigError({
                file: parsed.file,
                reason: "MissingFile",
                message: `${at} refers to ${file}, which does not exist`
              })
            )
          : Effect.succeed(text.trim())
      )
    )
  }
  const replace = Effect.fnUntraced(function* (text: string, path: ConfigPath) {
    let out = ""
    let last = 0
    for (const match of text.matchAll(TOKEN)) {
      out += text.slice(last, match.index)
      last = match.index + match[0].length
      const [token, kind = "", reference = ""] = match
      if (!options.trusted) ignored.push(`${token} in ${dotted(path)}`)
      else out += kind === "env" ? (options.env[reference.trim()] ?? "") : yield* readReferenced(reference, path)
    }
    return out + text.slice(last)
  })
  const walk = (node: unknown, path: ConfigPath): Effect.Effect<unknown, ConfigError> => {
    if (typeof node === "string") return node.includes("{") ? replace(node, path) : Effect.succeed(node)
    if (Array.isArray(node)) return Effect.forEach(node, (item, index) => walk(item, [...path, index]))
    if (!isObject(node)) return Effect.succeed(node)
    return Effect.forEach(Object.entries(node), ([key, item]) =>
      Effect.map(walk(item, [...path, key]), (next) => [key, next] as const)
    ).pipe(Effect.map((entries) => Object.fromEntries(entries)))
  }
  return { value: yield* walk(value, []), ignored }
})

/** True when `path` is `dir` or inside it. */
export const isWithin = (dir: string, path: string): boolean => {
  const rel = relative(dir, path)
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
}

/**
 * The store `LATHE_STORE` picks for one run: `sqlite`, or a `postgres://` URL. Unset or empty gives `undefined`;
 * anything else is a message for the person (the URL's password masked).
 */
export const storeFromEnv = (value: string | undefined): { readonly store?: StoreConfig; readonly error?: string } => {
  const text = value?.trim() ?? ""
  if (text === "") return {}
  if (text === "sqlite") return { store: { type: "sqlite" } }
  const parsed = StoreConfig.safeParse({ type: "postgres", url: text }, parseOnce)
  if (parsed.success) return { store: parsed.data }
  const shown = text.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@")
  return {
    error:
      `LATHE_STORE must be "sqlite" or a postgres:// URL (for example ` +
      `LATHE_STORE=postgres://lathe:secret@db.internal:5432/lathe), got "${shown}".`
  }
}
