import { parseArgs } from "node:util"
import { suggest } from "./suggest.js"

/**
 * The command kit: every command and subcommand of `lathe` declares its usage, options and positionals once here,
 * and the kit derives from that the parser (over `node:util` parseArgs), the `--help` text, the choices check, the
 * errors (one format, exit 2, never a stack trace) and the "did you mean" suggestions. It imports only `node:util`
 * and `./suggest.ts`, and only a command that parses its arguments loads it (`lathe --version` and `lathe --help` do
 * not).
 */

export { editDistance, suggest } from "./suggest.js"

/** One option of a command. */
export interface OptionSpec {
  readonly type: "string" | "boolean"
  /** A one-letter alias (`-m`). */
  readonly short?: string
  /** Whether the option may be given more than once (its value is then an array). */
  readonly multiple?: boolean
  /** What the option does, for `--help`; a line break starts an indented continuation line. */
  readonly description: string
  /** The value's placeholder in `--help` (`<n>`); default `<value>` for a string option. */
  readonly value?: string
  /** The only values the option takes; anything else is a usage error naming them. */
  readonly choices?: ReadonlyArray<string>
}

/** A command's options by long name (without `--`). */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>

/** A command or subcommand, declared once. */
export interface CommandSpec<O extends OptionSpecs = OptionSpecs> {
  /** The words after `lathe`: `run`, `session list`. */
  readonly name: string
  /**
   * One line, shown in the parent's list of commands; a subcommand's. A top-level command's summary lives in the
   * command table of `main.ts` (`lathe --help` lists them without loading any command).
   */
  readonly summary?: string
  /** The usage lines, each after `lathe <name> ` (`[options] <message...>`); default `[options]`. */
  readonly usage?: ReadonlyArray<string>
  /** Prose between the usage and the options. */
  readonly description?: string
  readonly options?: O
  /** The positionals it takes; without this, none (an argument is a usage error). */
  readonly positionals?: { readonly name: string; readonly min?: number; readonly max?: number }
  /** Its subcommands (each a full spec whose name starts with this one's). */
  readonly subcommands?: ReadonlyArray<CommandSpec>
  /** Prose after the options (exit codes, examples). */
  readonly footer?: string
}

type Single<S extends OptionSpec> = S["type"] extends "string"
  ? S extends { readonly choices: ReadonlyArray<infer C extends string> }
    ? C
    : string
  : S["type"] extends "boolean"
    ? boolean
    : string | boolean

/** An option's value: an array for `multiple`, else one. */
type ValueOf<S extends OptionSpec> = S extends { readonly multiple: true } ? Array<Single<S>> : Single<S>

/** The parsed values of a command's options (absent when not given). */
export type OptionValues<O extends OptionSpecs> = { -readonly [K in keyof O]?: ValueOf<O[K]> }

/** What {@link parseCommand} returns when the arguments are good and help was not asked for. */
export interface Parsed<O extends OptionSpecs> {
  readonly values: OptionValues<O>
  readonly positionals: Array<string>
}

/** Where the kit writes help (stdout) and errors (stderr). */
export interface KitIO {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

/** Declares a command; the identity, there to infer the option types (`choices` become unions). */
export const defineCommand = <const O extends OptionSpecs>(spec: CommandSpec<O>): CommandSpec<O> => spec

const HELP: OptionSpec = { type: "boolean", short: "h", description: "Show this help" }

const optionsOf = (spec: CommandSpec): OptionSpecs => ({ ...spec.options, help: spec.options?.help ?? HELP })

const optionLabel = (name: string, option: OptionSpec): string =>
  `${option.short ? `-${option.short}, ` : "    "}--${name}${option.type === "string" ? ` ${option.value ?? "<value>"}` : ""}`

/** How the person types the command: `lathe run`, or `lathe` for the interactive session (name ""). */
const invocation = (spec: CommandSpec): string => (spec.name ? `lathe ${spec.name}` : "lathe")

const subcommandWord = (spec: CommandSpec): string => spec.name.split(" ").at(-1) ?? spec.name

/** The `--help` text of a command: usage, description, subcommands, options, footer. */
export const helpText = (spec: CommandSpec): string => {
  const usage = spec.usage ?? ["[options]"]
  const lines = usage.map((line, i) => `${i === 0 ? "Usage: " : "       "}${invocation(spec)} ${line}`.trimEnd())
  if (spec.description) lines.push("", spec.description.trimEnd())
  if (spec.subcommands?.length) {
    const width = Math.max(...spec.subcommands.map((s) => subcommandWord(s).length)) + 2
    lines.push("", "Commands:")
    for (const sub of spec.subcommands) lines.push(`  ${subcommandWord(sub).padEnd(width)}${sub.summary ?? ""}`)
    lines.push("", `Run ${invocation(spec)} <command> --help for a command's options.`)
  }
  const options = Object.entries(optionsOf(spec))
  const width = Math.max(20, ...options.map(([name, option]) => optionLabel(name, option).length + 2))
  lines.push("", "Options:")
  for (const [name, option] of options) {
    const [first = "", ...more] = option.description.split("\n")
    lines.push(`  ${optionLabel(name, option).padEnd(width)} ${first}`)
    for (const line of more) lines.push(`  ${"".padEnd(width)} ${line.trim()}`)
  }
  if (spec.footer) lines.push("", spec.footer.trimEnd())
  return `${lines.join("\n")}\n`
}

/** Writes a usage error in the one format every command uses, and returns its exit code (2). */
export const usageError = (spec: CommandSpec, io: KitIO, problem: string, hint?: string): number => {
  const what = spec.subcommands?.length && !spec.options ? "the commands" : "the options"
  const command = invocation(spec)
  io.stderr(`${command}: ${problem}${hint ? ` ${hint}` : ""} Run ${command} --help for ${what}.\n`)
  return 2
}

const didYouMean = (near: string | undefined): string | undefined => (near ? `Did you mean ${near}?` : undefined)

const listed = (values: ReadonlyArray<string>): string => {
  const quoted = values.map((v) => JSON.stringify(v))
  return quoted.length <= 1 ? (quoted[0] ?? "") : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`
}

/**
 * Parses `args` against `spec`. `-h`/`--help` prints the help to stdout and returns 0; a bad argument (an unknown
 * option, with a suggestion; a missing value; a value outside `choices`; a positional too many or too few) prints
 * one line to stderr and returns 2. Otherwise returns the values and positionals.
 */
export const parseCommand = <O extends OptionSpecs>(
  spec: CommandSpec<O>,
  args: ReadonlyArray<string>,
  io: KitIO
): Parsed<O> | number => {
  const options = optionsOf(spec)
  const config = Object.fromEntries(
    Object.entries(options).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }
    ])
  )
  const { tokens } = parseArgs({
    args: [...args],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true
  })
  const stop = tokens.find((t) => t.kind === "option-terminator")?.index ?? Number.POSITIVE_INFINITY
  if (tokens.some((t) => t.kind === "option" && t.name === "help" && t.index < stop)) {
    io.stdout(helpText(spec))
    return 0
  }
  const values: Record<string, string | boolean | Array<string | boolean>> = {}
  const positionals: Array<string> = []
  const shorts = new Map(Object.entries(options).flatMap(([name, o]) => (o.short ? [[o.short, name] as const] : [])))
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue
    if (token.kind === "positional") {
      positionals.push(token.value)
      continue
    }
    const name = token.rawName.startsWith("--") ? token.name : (shorts.get(token.name) ?? token.name)
    const option = Object.hasOwn(options, name) ? options[name] : undefined
    if (option === undefined) {
      const near = token.rawName.startsWith("--") ? suggest(token.name, Object.keys(options)) : undefined
      return usageError(spec, io, `unknown option ${token.rawName}.`, didYouMean(near && `--${near}`))
    }
    let value: string | boolean = true
    if (option.type === "boolean") {
      if (token.inlineValue) return usageError(spec, io, `option --${name} takes no value (got "${token.value}").`)
    } else {
      // parseArgs takes the next argument as the value; one that looks like an option means the value was left out.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith("-") && token.value !== "-"))
        return usageError(spec, io, `option ${token.rawName} needs a value (${optionLabel(name, option).trim()}).`)
      value = token.value
      if (option.choices && !option.choices.includes(value)) {
        const near = didYouMean(suggest(value, option.choices))
        return usageError(spec, io, `${token.rawName} must be ${listed(option.choices)}, not "${value}".`, near)
      }
    }
    if (option.multiple) values[name] = [...((values[name] as Array<string | boolean> | undefined) ?? []), value]
    else values[name] = value
  }
  const max = spec.positionals?.max ?? (spec.positionals ? Number.POSITIVE_INFINITY : 0)
  if (positionals.length > max) {
    const extra = positionals[max] ?? ""
    const takes = max === 0 ? "it takes no arguments" : `it takes at most ${max}: ${spec.positionals?.name ?? ""}`
    const near = spec.subcommands?.length ? didYouMean(suggest(extra, spec.subcommands.map(subcommandWord))) : undefined
    return usageError(spec, io, `unexpected argument "${extra}" (${takes}).`, near)
  }
  const min = spec.positionals?.min ?? 0
  if (positionals.length < min) return usageError(spec, io, `missing ${spec.positionals?.name ?? "argument"}.`)
  return { values: values as OptionValues<O>, positionals }
}

/**
 * Picks the subcommand `args` starts with. `-h`/`--help` (or `help`) first prints the help and returns 0; an unknown
 * word is a usage error with the nearest subcommand. With no word (or an option first), `fallback` is the subcommand
 * when given; without one, the help goes to stderr and the exit code is 2.
 */
export const pickSubcommand = (
  spec: CommandSpec,
  args: ReadonlyArray<string>,
  io: KitIO,
  fallback?: string
): { readonly name: string; readonly rest: ReadonlyArray<string> } | number => {
  const [first, ...rest] = args
  const words = (spec.subcommands ?? []).map(subcommandWord)
  if (first === "-h" || first === "--help" || first === "help") {
    io.stdout(helpText(spec))
    return 0
  }
  if (first === undefined || first.startsWith("-")) {
    if (fallback !== undefined) return { name: fallback, rest: args }
    if (first === undefined) {
      io.stderr(helpText(spec))
      return 2
    }
    return usageError(spec, io, `unknown option ${first}; a command comes first.`)
  }
  if (words.includes(first)) return { name: first, rest }
  return usageError(spec, io, `unknown subcommand "${first}".`, didYouMean(suggest(first, words)))
}
