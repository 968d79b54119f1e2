/**
 * Programs that run text as code: shells, `eval`, `source`, `trap`, `alias`, interpreters with inline code,
 * `parallel`, `find -exec`, `rsync -e`. Each either hands its inner command to the walker (a static string is
 * analysed recursively) or marks the line unknown, saying why.
 */
import type { Arg } from "./bash-word.js"
import { literal } from "./bash-word.js"

/** What a command reads on its standard input, as far as the line shows. */
export type Stdin =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "unknown"; readonly what: string }
  | undefined

/** What a program handler may do with the walker. */
export interface ProgramContext {
  readonly stdin: Stdin
  /** Analyses a command line this command runs; `isolate` when it runs in a child process (its `cd` stays there). */
  line(text: string, isolate: boolean): void
  /** Analyses an argv this command runs, with `{}` standing for `roots` when given (`find -exec`). */
  run(argv: ReadonlyArray<Arg>, roots?: ReadonlyArray<Arg>, execdir?: boolean): void
  /** Marks the line unknown. */
  unknown(reason: string): void
  /** A path this command writes. */
  write(arg: Arg): void
}

/** Handles one program; returns whether the command itself is recorded as a simple command. */
type Handler = (argv: ReadonlyArray<Arg>, context: ProgramContext) => boolean

const SHELLS = new Set("sh bash zsh dash ksh mksh ash yash fish posh tcsh csh rbash".split(" "))
const SHELL_VALUED = new Set(["--rcfile", "--init-file", "-o", "+o", "-O", "+O"])

const shell: Handler = (argv, context) => {
  const name = argv[0]?.value ?? "sh"
  let i = 1
  let command = false
  while (i < argv.length) {
    const arg = argv[i] as Arg
    if (arg.dynamic) {
      context.unknown(`the options of ${name} are computed at run time (${arg.value})`)
      return false
    }
    if (arg.value === "--" || arg.value === "-") {
      i++
      break
    }
    if (!/^[-+]./.test(arg.value)) break
    if (!arg.value.startsWith("--") && arg.value.slice(1).includes("c")) command = true
    const letters = arg.value.startsWith("--") ? "" : arg.value.slice(1)
    i += SHELL_VALUED.has(arg.value) || (letters.length > 1 && /[oO]$/.test(letters)) ? 2 : 1
  }
  const operand = argv[i]
  if (command) {
    if (!operand || operand.dynamic) context.unknown(`${name} -c runs a script computed at run time`)
    else context.line(operand.value, true)
    return false
  }
  if (operand) {
    context.unknown(`${name} runs the script file ${operand.value}, which Lathe does not read`)
    return true
  }
  if (argv.some((arg) => arg.value === "--version" || arg.value === "--help")) return true
  if (context.stdin?.kind === "text") context.line(context.stdin.text, true)
  else context.unknown(`${name} runs commands read from ${context.stdin?.what ?? "its standard input"}`)
  return false
}

const evaluate: Handler = (argv, context) => {
  const words = argv.slice(1)
  if (words.some((arg) => arg.dynamic)) context.unknown("eval runs a string computed at run time")
  else context.line(words.map((arg) => arg.value).join(" "), false)
  return false
}

const source: Handler = (argv, context) => {
  context.unknown(`${argv[0]?.value} runs the file ${argv[1]?.value ?? "(none)"}, which Lathe does not read`)
  return true
}

const trap: Handler = (argv, context) => {
  const operands = argv.slice(1).filter((arg) => arg.dynamic || !/^-[lp]$/.test(arg.value))
  const action = operands[0]
  if (!action || operands.length < 2 || /^(-|\d+)$/.test(action.value)) return true
  if (action.dynamic) context.unknown("trap sets a handler computed at run time")
  else context.line(action.value, false)
  return true
}

const alias: Handler = (argv, context) => {
  for (const arg of argv.slice(1)) {
    if (arg.dynamic) context.unknown("alias defines a command computed at run time")
    else if (arg.value.includes("=")) context.line(arg.value.slice(arg.value.indexOf("=") + 1), false)
  }
  return true
}

/** Interpreters and the option letters that take inline code (`python -c`, `node -e`, `perl -e` …). */
const INTERPRETERS: ReadonlyArray<readonly [RegExp, string, ReadonlyArray<string>]> = [
  [/^(python|pypy)[0-9.]*$/, "c", ["--command"]],
  [/^(node|nodejs)$/, "ep", ["--eval", "--print"]],
  [/^perl[0-9.]*$/, "eE", []],
  [/^ruby[0-9.]*$/, "e", []],
  [/^php[0-9.]*$/, "rRBE", []],
  [/^(lua[0-9.]*|luajit|Rscript|osascript)$/, "e", []]
]

const interpreter =
  (letters: string, long: ReadonlyArray<string>): Handler =>
  (argv, context) => {
    const name = argv[0]?.value ?? ""
    for (const arg of argv.slice(1)) {
      if (arg.dynamic) return unknownAnd(context, `${name} gets arguments computed at run time (${arg.value})`)
      if (arg.value === "-m" || arg.value === "-" || !arg.value.startsWith("-")) break
      const option = arg.value.split("=")[0] ?? ""
      const inline = arg.value.startsWith("--")
        ? long.includes(option)
        : [...arg.value.slice(1)].some((c) => letters.includes(c))
      if (inline) return unknownAnd(context, `${name} runs inline code, which Lathe cannot analyse`)
    }
    const operand = argv.slice(1).find((arg) => arg.value === "-m" || arg.value === "-" || !arg.value.startsWith("-"))
    const version = argv.some((arg) => /^(--version|-V|-v|--help|-h)$/.test(arg.value))
    if ((!operand || operand.value === "-") && !version) {
      const from = context.stdin?.kind === "unknown" ? context.stdin.what : "its standard input"
      return unknownAnd(context, `${name} runs code read from ${from}`)
    }
    return true
  }

const unknownAnd = (context: ProgramContext, reason: string): boolean => {
  context.unknown(reason)
  return true
}

const AWK_CODE = /system|\||>>|>\s*["(]|print[^;}]*>|getline|@load|ENVIRON\[/

const awk: Handler = (argv, context) => {
  const name = argv[0]?.value ?? "awk"
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as Arg
    if (arg.dynamic) return unknownAnd(context, `${name} runs a program computed at run time (${arg.value})`)
    if (/^(-f|--file|-E|--exec)/.test(arg.value)) return unknownAnd(context, `${name} runs a program file`)
    if (/^-[vF]$/.test(arg.value) || arg.value === "--assign") {
      i++
      continue
    }
    if (arg.value.startsWith("-") && arg.value !== "-") continue
    if (AWK_CODE.test(arg.value)) context.unknown(`${name} runs commands or writes files from its program`)
    return true
  }
  return true
}

/** `parallel 'cmd {}' ::: a b`: the command words run through a shell, with `{…}` replaced by inputs. */
const parallel: Handler = (argv, context) => {
  let i = 1
  const valued = new Set(
    "-j --jobs -N -n -S --sshlogin -a --arg-file -d --delimiter --colsep -I -E --joblog".split(" ")
  )
  while (i < argv.length && argv[i]?.value.startsWith("-")) i += valued.has(argv[i]?.value ?? "") ? 2 : 1
  const end = argv.findIndex((arg, j) => j >= i && /^:::[:+]*$/.test(arg.value))
  const words = argv.slice(i, end < 0 ? undefined : end)
  if (words.length === 0) return unknownAnd(context, "parallel runs commands read from its input")
  if (words.some((arg) => arg.dynamic)) return unknownAnd(context, "parallel runs a command computed at run time")
  const text = words.map((arg) => arg.value).join(" ")
  const marked = text.replace(/\{[^}\s]*\}/g, '"$__input"')
  context.line(marked === text ? `${text} $__input` : marked, true)
  return true
}

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const FIND_FILES = new Set(["-fprint", "-fprint0", "-fprintf", "-fls"])

const find: Handler = (argv, context) => {
  const first = argv.findIndex((arg, j) => j > 0 && !arg.dynamic && /^[-(!]/.test(arg.value))
  const listed = argv.slice(1, first < 0 ? undefined : first)
  const roots = listed.length > 0 ? listed : [literal(".")]
  for (let i = 1; i < argv.length; i++) {
    const option = argv[i]?.value ?? ""
    if (option === "-delete") for (const root of roots) context.write(root)
    if (FIND_FILES.has(option) && argv[i + 1]) context.write(argv[i + 1] as Arg)
    if (!FIND_EXEC.has(option)) continue
    const end = argv.findIndex((arg, j) => j > i && (arg.value === ";" || arg.value === "+"))
    context.run(argv.slice(i + 1, end < 0 ? undefined : end), roots, option.endsWith("dir"))
    if (end < 0) break
    i = end
  }
  return true
}

const rsync: Handler = (argv, context) => {
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as Arg
    const value = arg.value.startsWith("--rsh=") ? literal(arg.value.slice(6)) : undefined
    const shellCommand = value ?? (arg.value === "-e" || arg.value === "--rsh" ? argv[i + 1] : undefined)
    if (!shellCommand) continue
    if (shellCommand.dynamic || arg.dynamic) context.unknown("rsync -e runs a command computed at run time")
    else context.line(shellCommand.value, true)
  }
  return true
}

const HANDLERS: ReadonlyMap<string, Handler> = new Map([
  ["eval", evaluate],
  ["source", source],
  [".", source],
  ["trap", trap],
  ["alias", alias],
  ["awk", awk],
  ["gawk", awk],
  ["mawk", awk],
  ["nawk", awk],
  ["parallel", parallel],
  ["find", find],
  ["rsync", rsync]
])

/** The handler of a program that runs text as code or other commands, if it is one. */
export const programOf = (name: string): Handler | undefined => {
  if (SHELLS.has(name)) return shell
  const known = HANDLERS.get(name)
  if (known) return known
  const entry = INTERPRETERS.find(([pattern]) => pattern.test(name))
  return entry ? interpreter(entry[1], entry[2]) : undefined
}
