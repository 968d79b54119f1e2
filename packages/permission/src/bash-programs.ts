/**
 * The handlers of programs that run text as code, driven by the table in `code-runners.ts`: each either hands its
 * inner command to the walker (a static shell string is analysed recursively) or marks the line unknown, saying
 * why. A program fed a here-document that the table does not list as reading data only is unknown.
 */
import { posix } from "node:path"
import type { ProgramContext, Stdin } from "./bash-analysis.js"
import { builtinArgv } from "./bash-builtins.js"
import { git } from "./bash-git.js"
import { hasOption, type ParsedArgs, parseOptions, valuesOf } from "./bash-options.js"
import { sedCode } from "./bash-sed.js"
import type { Arg } from "./bash-word.js"
import { literal } from "./bash-word.js"
import { type CodeRunner, codeRunner, DATA_STDIN, type Special } from "./code-runners.js"

/** Handles one program; returns whether the command itself is recorded as a simple command. */
type Handler = (argv: ReadonlyArray<Arg>, context: ProgramContext) => boolean

const unknownAnd = (context: ProgramContext, reason: string): boolean => {
  context.unknown(reason)
  return true
}

/** Whether the command's standard input is a here-document or here-string (the walker's two `Stdin` forms). */
const isHere = (stdin: Stdin): boolean =>
  stdin?.kind === "text" || (stdin?.kind === "unknown" && stdin.what.startsWith("a here-"))

/** Paths that are the standard input: a script read from one of them is code from the line or a pipe. */
const STDIN_PATH = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|thread-self|\d+)\/(task\/\d+\/)?fd\/\d+)$/

/** Whether a script or code-file argument is the standard input, a `data:` URL, or unknown until run time. */
const fromInput = (arg: Arg): boolean =>
  arg.dynamic || arg.value.startsWith("data:") || STDIN_PATH.test(arg.value === "-" ? "-" : posix.normalize(arg.value))

const stdinWhat = (stdin: Stdin): string =>
  stdin?.kind === "unknown" ? stdin.what : stdin?.kind === "text" ? "a here-document" : "its standard input"

/** Analyses a shell line a program runs, or marks it unknown when it is computed at run time. */
const shellLine = (context: ProgramContext, who: string, value: Arg) => {
  if (value.dynamic) context.unknown(`${who} runs a command computed at run time (${value.value})`)
  else context.line(value.value, true)
}

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

const AWK_CODE = /system|\||>>|>\s*["(]|print[^;}]*>|getline|@load|ENVIRON\[/

const awk: Handler = (argv, context) => {
  const name = argv[0]?.value ?? "awk"
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as Arg
    if (arg.dynamic) return unknownAnd(context, `${name} runs a program computed at run time (${arg.value})`)
    if (/^(-f|--file|-E|--exec|-i|--include|-l|--load)/.test(arg.value)) {
      return unknownAnd(context, `${name} runs a program file or extension`)
    }
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

const sed: Handler = (argv, context) => {
  const parsed = parseOptions(argv.slice(1), {
    valued: "efl",
    attached: "i",
    flags: "nrEsuzb",
    long: ["--expression", "--file", "--line-length"],
    permute: true,
    abbreviate: true
  })
  if (parsed.unknown) context.unknown(`sed: ${parsed.unknown}`)
  if (hasOption(parsed, ["--sandbox"])) return true
  for (const file of valuesOf(parsed, ["-f", "--file"])) {
    if (fromInput(file)) context.unknown(`sed reads its script from ${file.value}`)
  }
  const given = valuesOf(parsed, ["-e", "--expression"])
  const scripts = given.length > 0 || hasOption(parsed, ["-f", "--file"]) ? given : parsed.operands.slice(0, 1)
  for (const script of scripts) {
    if (script.dynamic) {
      context.unknown(`sed runs a script computed at run time (${script.value})`)
      continue
    }
    const code = sedCode(script.value)
    if (code.dynamic) context.unknown(code.dynamic)
    for (const line of code.lines) context.line(line, true)
  }
  return true
}

const ssh = (parsed: ParsedArgs, context: ProgramContext) => {
  for (const option of valuesOf(parsed, ["-o"])) {
    if (option.dynamic) {
      context.unknown(`ssh -o ${option.value} is computed at run time`)
      continue
    }
    const match = /^\s*(\w+)\s*(?:=|\s)\s*([\s\S]*)$/.exec(option.value)
    const key = match?.[1]?.toLowerCase() ?? ""
    if (["proxycommand", "localcommand", "knownhostscommand"].includes(key)) context.line(match?.[2] ?? "", true)
    else if (["pkcs11provider", "securitykeyprovider", "match", "include"].includes(key)) {
      context.unknown(`ssh -o ${match?.[1]} loads code or configuration Lathe does not read`)
    }
  }
}

const tar = (parsed: ParsedArgs, context: ProgramContext, argv: ReadonlyArray<Arg>) => {
  const first = argv[1]
  if (
    first &&
    !first.dynamic &&
    !first.value.startsWith("-") &&
    /[IF]/.test(first.value) &&
    /^[A-Za-z]+$/.test(first.value)
  ) {
    context.unknown("tar's old-style option I or F runs a program")
  }
  for (const action of valuesOf(parsed, ["--checkpoint-action"])) {
    const exec = /^exec=([\s\S]*)$/.exec(action.value)
    if (action.dynamic) context.unknown("tar --checkpoint-action is computed at run time")
    else if (exec) context.line(exec[1] ?? "", true)
  }
}

const perl = (parsed: ParsedArgs, context: ProgramContext) => {
  for (const module of valuesOf(parsed, ["-M", "-m"])) {
    if (!/^-?[A-Za-z_][\w:]*(=[\w,:.-]*)?$/.test(module.value)) context.unknown("perl -M runs code given with it")
  }
}

const php = (parsed: ParsedArgs, context: ProgramContext) => {
  for (const setting of valuesOf(parsed, ["-d"])) {
    if (setting.dynamic || /^\s*(auto_prepend_file|auto_append_file)/i.test(setting.value)) {
      context.unknown("php -d sets a file of code to run")
    }
  }
}

const deno = (parsed: ParsedArgs, context: ProgramContext) => {
  const [sub, ...rest] = parsed.operands
  if (sub?.value === "eval" || sub?.value === "repl") context.unknown(`deno ${sub.value} runs code given with it`)
  if (sub?.value === "run" && rest.some((arg) => fromInput(arg))) context.unknown("deno run runs code read from input")
}

const npm = (parsed: ParsedArgs, context: ProgramContext, argv: ReadonlyArray<Arg>) => {
  if (hasOption(parsed, ["--script-shell"]))
    context.unknown(`${argv[0]?.value} --script-shell runs scripts with another program`)
  const at = argv.findIndex((arg, i) => i > 0 && !arg.value.startsWith("-"))
  if (at < 0 || !["exec", "x", "dlx"].includes(argv[at]?.value ?? "")) return
  if (hasOption(parsed, ["-c", "--call"])) return
  // `npm exec [--package=p] [--] cmd args`: the command runs like one written on the line.
  const words = argv.slice(at + 1)
  const parsedExec = parseOptions(words, { valued: "p", long: ["--package"] })
  if (parsedExec.operands.length > 0) context.run(parsedExec.operands)
}

const sqlite = (parsed: ParsedArgs, context: ProgramContext) => {
  if (parsed.operands.length > 1) context.unknown("sqlite3 runs SQL and dot-commands (.shell) given with it")
}

const socat: Handler = (argv, context) => {
  for (const arg of argv.slice(1)) {
    const match = /^(exec|system):([\s\S]*)$/i.exec(arg.value)
    if (arg.dynamic && /exec|system/i.test(arg.value)) context.unknown("socat runs a command computed at run time")
    if (!match) continue
    context.line((match[2] ?? "").split(",")[0] ?? "", true)
  }
  return true
}

const TMUX_QUIET = new Set(
  "ls list-sessions list-windows list-panes list-clients list-buffers list-commands lsk list-keys has-session has capture-pane capturep show-options show show-buffer kill-session kill-server kill-window kill-pane display-message display -V".split(
    " "
  )
)

const tmux: Handler = (argv, context) => {
  const parsed = parseOptions(argv.slice(1), { valued: "cfLST", flags: "2CDlNuvV" })
  for (const line of valuesOf(parsed, ["-c"])) shellLine(context, "tmux -c", line)
  if (hasOption(parsed, ["-f"])) context.unknown("tmux -f reads a configuration that runs commands")
  const sub = parsed.operands[0]
  const chained = argv.some((arg) => arg.value === ";" || arg.value.endsWith("\\;"))
  if (sub && (sub.dynamic || !TMUX_QUIET.has(sub.value) || chained)) {
    context.unknown(`tmux ${sub.value} can run commands in another shell`)
  }
  return true
}

const builtin: Handler = (argv, context) => {
  const why = builtinArgv(argv, context.stdin?.kind === "text" ? context.stdin.text : undefined)
  if (why) context.unknown(why)
  return true
}

/** Handlers that replace the table-driven one. */
const OWN: Partial<Record<Special, Handler>> = {
  shell,
  eval: evaluate,
  source,
  trap,
  alias,
  awk,
  sed,
  find,
  parallel,
  git,
  socat,
  tmux,
  builtin
}

/** Checks that add to the table-driven one. */
const EXTRA: Partial<Record<Special, (parsed: ParsedArgs, context: ProgramContext, argv: ReadonlyArray<Arg>) => void>> =
  { ssh, tar, perl, php, deno, npm, sqlite }

/** The table-driven handler of one row of `code-runners.ts`. */
const runner =
  (row: CodeRunner): Handler =>
  (argv, context) => {
    const name = argv[0]?.value ?? ""
    const parsed = parseOptions(argv.slice(1), row.options)
    if (parsed.unknown) context.unknown(`${name}: ${parsed.unknown}`)
    const inert = row.inert !== undefined && hasOption(parsed, row.inert)
    const code = parsed.options.filter((option) => row.code?.includes(option.name))
    for (const option of code) context.unknown(`${name} ${option.name} runs code Lathe cannot analyse`)
    for (const value of valuesOf(parsed, row.shell ?? [])) shellLine(context, name, value)
    const files = parsed.options.filter((option) => row.codeFile?.includes(option.name))
    for (const { name: option, value } of files) {
      if (!value || fromInput(value))
        context.unknown(`${name} ${option} loads code from ${value?.value ?? "its input"}`)
    }
    const script = row.script ? parsed.operands[0] : undefined
    if (script && fromInput(script)) context.unknown(`${name} runs code read from ${script.value}`)
    EXTRA[row.special as Special]?.(parsed, context, argv)
    // A code file given with an option does not stop a program reading code from stdin too (`vim -es`, `-s` silent).
    const gave = code.length > 0 || valuesOf(parsed, row.shell ?? []).length > 0
    const interactive = row.interactive !== undefined && hasOption(parsed, row.interactive)
    const readsCode =
      !inert && ((row.stdin === "code" && !gave) || (row.stdin === "script" && ((!script && !gave) || interactive)))
    if (readsCode) context.unknown(`${name} runs code read from ${stdinWhat(context.stdin)}`)
    else if (row.stdin !== "data" && isHere(context.stdin)) {
      context.unknown(`${name} reads a here-document, and Lathe does not know it reads only data`)
    }
    return true
  }

/** Any other program: a here-document fed to it is unknown unless the table lists it as reading data only. */
const plain: Handler = (argv, context) => {
  const name = argv[0]?.value ?? ""
  if (isHere(context.stdin) && !DATA_STDIN.has(name)) {
    context.unknown(`${name} reads a here-document, and Lathe does not know it reads only data`)
  }
  return true
}

/** `git-push`, `/usr/lib/git-core/git-push`: a git subcommand run by its own name. */
const dashed: Handler = (argv, context) => {
  const name = argv[0]?.value ?? ""
  context.run([literal("git"), literal(name.slice(4)), ...argv.slice(1)])
  return true
}

const handlers = new Map<string, Handler>()

/** The handler of a program: its row of the table, or the here-document rule for any other program. */
export const programOf = (name: string): Handler => {
  const cached = handlers.get(name)
  if (cached) return cached
  const row = codeRunner(name)
  const own = row?.special ? OWN[row.special] : undefined
  const handler = own ?? (row ? runner(row) : name.startsWith("git-") && name.length > 4 ? dashed : plain)
  if (handlers.size < 4096) handlers.set(name, handler)
  return handler
}
