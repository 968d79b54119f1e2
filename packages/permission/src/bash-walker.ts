/**
 * Walks a bash parse tree: finds every simple command, follows `cd`, collects written paths, and records
 * why anything cannot be known statically. Used by `analyzeWith`; not exported from the package.
 */
import { posix } from "node:path"
import type { Node, Parser } from "web-tree-sitter"
import type { ProgramContext, SimpleCommand, Stdin, ThroughCreated, UnknownWrite } from "./bash-analysis.js"
import { builtinNode, storedCode } from "./bash-builtins.js"
import { joinContinuations } from "./bash-continuations.js"
import { alwaysPattern, basename, renderArgv, stripGitGlobals, unwrap } from "./bash-normalize.js"
import { programOf } from "./bash-programs.js"
import { type Arg, braceWords, hasBraces, lexWord, literal } from "./bash-word.js"
import { commandCreates, commandWrites } from "./bash-writes.js"
import { codeVariable } from "./code-runners.js"

const WRITE_OPS = new Set([">", ">>", ">|", "&>", "&>>", ">&", "<>"])
const DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"])
const MAX_DEPTH = 8
const LOOPS = new Set(["for_statement", "c_style_for_statement", "while_statement", "function_definition"])
/** Reserved words: as a command name they mean the parser misread a compound command (`! if …`, `! { … }`). */
const RESERVED = new Set(
  "if then else elif fi do done case esac while until for in select function { } [[ ]] !".split(" ")
)
const ISOLATED = new Set(["subshell", "command_substitution", "process_substitution"])

/** The first syntax error of a parse tree, described for the person and the model. */
const syntaxError = (root: Node, text: string): string => {
  const stack: Array<Node> = [root]
  while (stack.length > 0) {
    const node = stack.pop() as Node
    if (node.isError || node.isMissing) {
      const near = text.slice(node.startIndex, node.startIndex + 20) || "the end of the line"
      return `the shell parser found a syntax error near "${near}"`
    }
    for (const child of [...node.children].reverse()) if (child?.hasError || child?.isMissing) stack.push(child)
  }
  return "the shell parser found a syntax error"
}

const SYSTEM_DIRS = new Set(["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"])

/** A PATH that only lists system folders, or only appends to the PATH it had (`$PATH:./bin`). */
const safePath = (value: string): boolean => {
  if (/^"?\$\{?PATH\}?(:|"?$)/.test(value)) return true
  const word = lexWord(value)
  return !word.dynamic && word.value.split(":").every((dir) => SYSTEM_DIRS.has(dir.replace(/\/$/, "")))
}

/** The walker's state for one analysed line (and the lines nested in it). */
export class Walker {
  readonly commands: Array<SimpleCommand> = []
  readonly writes: Array<string> = []
  readonly globWrites: Array<string> = []
  readonly unknownWrites: Array<UnknownWrite> = []
  readonly reasons: Array<string> = []
  /** The cwd relative to where the line starts ("" there, "?" when a `cd` cannot be followed). */
  private cwd = ""
  private loops = 0
  /** While inside `find ROOTS -exec …`, what `{}` stands for. */
  private roots: ReadonlyArray<Arg> | undefined
  /** The simple command being analysed (numbered from 1; 0 while outside one: a redirection). */
  private current = 0
  private count = 0
  /** Every static write (plain or glob) with the command that makes it. */
  private readonly located: Array<{ readonly path: string; readonly command: number }> = []
  /** What commands may create or replace (`path` undefined: anywhere), with whether they may run again (a loop). */
  private readonly created: Array<{
    readonly path: string | undefined
    readonly command: number
    readonly again: boolean
    readonly by: string
  }> = []

  constructor(private readonly parser: Parser) {}

  private unknown(reason: string) {
    this.reasons.push(reason)
  }

  line(raw: string, depth: number) {
    if (depth > MAX_DEPTH) return this.unknown(`shell commands are nested more than ${MAX_DEPTH} levels deep`)
    const text = joinContinuations(this.parser, raw)
    const tree = this.parser.parse(text)
    if (!tree) return this.unknown("the shell parser gave no result")
    try {
      if (tree.rootNode.hasError) this.unknown(syntaxError(tree.rootNode, text))
      this.node(tree.rootNode, depth, undefined)
    } finally {
      tree.delete()
    }
  }

  private isolated(run: () => void) {
    const cwd = this.cwd
    run()
    this.cwd = cwd
  }

  private node(node: Node, depth: number, stdin: Stdin) {
    const type = node.type
    const evaluated = builtinNode(node)
    if (evaluated) this.unknown(evaluated)
    if (type === "command") return this.command(node, depth, stdin)
    if (type === "redirected_statement") return this.redirected(node, depth, stdin)
    if (type === "file_redirect") return this.redirect(node)
    if (type === "variable_assignment") this.assignment(node)
    if (type === "heredoc_redirect") this.heredoc(node)
    if (type === "pipeline") {
      node.namedChildren.forEach((child, i) => {
        if (child) this.node(child, depth, i === 0 ? stdin : { kind: "unknown", what: "the output of a pipe" })
      })
      return
    }
    const visit = () => {
      for (const child of node.namedChildren) if (child) this.node(child, depth, undefined)
    }
    if (ISOLATED.has(type)) return this.isolated(visit)
    if (!LOOPS.has(type)) return visit()
    this.loops++
    visit()
    this.loops--
  }

  private assignment(node: Node) {
    const name = node.namedChildren[0]?.text ?? ""
    const value = node.text.slice(node.text.indexOf("=") + 1)
    this.assigned(name, value)
  }

  private assigned(name: string, value: string) {
    const stored = storedCode(lexWord(value))
    if (stored) this.unknown(stored)
    const why = codeVariable(name)
    if (why && !(name === "PATH" && safePath(value))) this.unknown(why)
  }

  /** A here-document's text as the command reads it, or undefined when the shell expands it at run time. */
  private heredoc(node: Node): string | undefined {
    const startNode = node.children.find((child) => child?.type === "heredoc_start")
    const start = startNode?.text ?? ""
    const body = node.children.find((child) => child?.type === "heredoc_body")?.text ?? ""
    // tree-sitter-bash reads a body line starting with `\` (`\rm x`) as words of the redirect, not as the body.
    const row = startNode?.endPosition.row ?? 0
    const misread = node.namedChildren.some(
      (child) => child && child.startPosition.row > row && !child.type.startsWith("heredoc_")
    )
    if (misread) {
      this.unknown("the shell parser misread a here-document")
      return undefined
    }
    const quoted = /['"\\]/.test(start)
    if (!quoted && body.includes("`")) this.unknown("a here-document runs a backtick command substitution")
    if (!quoted && /[$`\\]/.test(body)) return undefined
    const strip = node.children.some((child) => child?.type === "<<-")
    return strip ? body.replace(/^\t+/gm, "") : body
  }

  private redirected(node: Node, depth: number, stdin: Stdin) {
    let input = stdin
    let body: Node | undefined
    const later: Array<Node> = []
    const redirects: Array<Node> = []
    const before = this.cwd
    for (const child of node.namedChildren) {
      if (!child) continue
      if (child.type === "heredoc_redirect") {
        const text = this.heredoc(child)
        input =
          text === undefined
            ? { kind: "unknown", what: "a here-document expanded at run time" }
            : { kind: "text", text }
        for (const part of child.namedChildren) if (part) this.node(part, depth, undefined)
      } else if (child.type === "file_redirect") {
        if (child.children.some((part) => part?.type === "<")) input = { kind: "unknown", what: "a file" }
        this.redirect(child)
        redirects.push(child)
      } else if (child.type === "herestring_redirect") {
        input = this.herestring(child, depth)
      } else body ??= child
    }
    if (body) this.node(body, depth, input)
    // The parser may attach a redirection to a whole list (`cd d && echo > f`): count it from both cwds.
    if (this.cwd !== before) for (const redirect of redirects) this.redirect(redirect)
    for (const heredoc of later) for (const part of heredoc.namedChildren) if (part) this.node(part, depth, undefined)
  }

  private herestring(node: Node, depth: number): Stdin {
    for (const part of node.namedChildren) if (part) this.node(part, depth, undefined)
    const word = node.namedChildren.at(-1)
    const arg = word ? lexWord(word.text) : undefined
    return arg && !arg.dynamic ? { kind: "text", text: `${arg.value}\n` } : { kind: "unknown", what: "a here-string" }
  }

  private redirect(node: Node) {
    const op = node.children.find((child) => child !== null && !child.isNamed)?.type ?? ""
    const target = node.namedChildren.filter((child) => child !== null && child.type !== "file_descriptor").at(-1)
    for (const child of node.namedChildren) if (child) this.node(child, 0, undefined)
    if (!WRITE_OPS.has(op) || !target) return
    const arg = lexWord(target.text)
    if (op === ">&" && /^\d+-?$|^-$/.test(arg.value)) return
    // A redirection belongs to no command: what a command creates may redirect it.
    const outer = this.current
    this.current = 0
    this.write(arg)
    this.current = outer
  }

  private command(node: Node, depth: number, stdin: Stdin) {
    const words: Array<Arg> = []
    let input = stdin
    for (const child of node.namedChildren) {
      if (!child) continue
      // Substitutions anywhere in the command (assignments, arguments, redirects) are commands too.
      if (child.type === "herestring_redirect") {
        input = this.herestring(child, depth)
        continue
      }
      if (child.type === "heredoc_redirect") {
        const text = this.heredoc(child)
        input =
          text === undefined
            ? { kind: "unknown", what: "a here-document expanded at run time" }
            : { kind: "text", text }
        for (const part of child.namedChildren) if (part) this.node(part, depth, undefined)
        continue
      }
      this.node(child, depth, undefined)
      if (child.type === "command_name") {
        const name = child.namedChildren[0]
        if (name) words.push(lexWord(name.text))
      } else if (child.type !== "variable_assignment" && !child.type.endsWith("redirect")) {
        words.push(lexWord(child.text))
      }
    }
    this.argv(words, depth, input)
  }

  /** Analyses one argv: strips wrappers, follows `cd`, hands text-as-code programs their inner commands. */
  private argv(raw: ReadonlyArray<Arg>, depth: number, stdin: Stdin, openEnded = false) {
    const first = raw[0]
    if (!first || (first.value === "" && !first.dynamic)) return // a MISSING name the parser invented
    const misread = raw.find((arg) => arg.misparsed)
    if (misread) this.unknown(`the shell parser misread the word ${JSON.stringify(misread.value)}`)
    const expanded = [first, ...raw.slice(1).flatMap(braceWords)]
    const unwrapped = unwrap(expanded)
    if (unwrapped.unknown) this.unknown(unwrapped.unknown)
    for (const assignment of unwrapped.assigned) {
      const eq = assignment.indexOf("=")
      this.assigned(assignment.slice(0, eq), assignment.slice(eq + 1))
    }
    const cwd = this.cwd
    if (unwrapped.chdir) this.cd(unwrapped.chdir, false)
    try {
      if (unwrapped.script) {
        if (unwrapped.script.some((arg) => arg.dynamic))
          this.unknown("a wrapper runs a command line computed at run time")
        else this.isolated(() => this.line(unwrapped.script?.map((arg) => arg.value).join(" ") ?? "", depth + 1))
        return
      }
      const replace = unwrapped.replace
      const argv = replace
        ? unwrapped.argv.map((arg) => (arg.value.includes(replace) ? { ...arg, dynamic: true } : arg))
        : unwrapped.argv
      this.simple(argv, depth, stdin, openEnded || unwrapped.openEnded === true)
    } finally {
      if (unwrapped.chdir) this.cwd = cwd
    }
  }

  private simple(input: ReadonlyArray<Arg>, depth: number, stdin: Stdin, openEnded: boolean) {
    const head = input[0]
    if (!head) return
    const why = head.dynamic
      ? `the command name is computed at run time (${head.value})`
      : head.placeholder
        ? "find -exec runs the names of found files as commands"
        : head.glob || hasBraces(head)
          ? `the command name "${head.value}" is a pattern the shell expands at run time`
          : /\s/.test(head.value)
            ? `the command name "${head.value}" contains blanks`
            : undefined
    if (why) return this.unknown(why)
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(head.value)) return this.unknown(`a wrapper runs "${head.value}" as a command`)
    if (RESERVED.has(head.value)) return this.unknown(`the shell parser read the keyword "${head.value}" as a command`)
    const outer = this.current
    this.current = ++this.count
    try {
      this.recorded(head, input, depth, stdin, openEnded)
    } finally {
      this.current = outer
    }
  }

  /** The body of `simple` for a command whose name is known: records it, its writes and what it may create. */
  private recorded(head: Arg, input: ReadonlyArray<Arg>, depth: number, stdin: Stdin, openEnded: boolean) {
    const name = basename(head.value) || head.value
    let argv: ReadonlyArray<Arg> = [{ ...head, value: name }, ...input.slice(1)]
    if (name === "git") {
      const git = stripGitGlobals(argv)
      if (git.unknown) this.unknown(git.unknown)
      argv = git.argv
    }
    if (name === "cd" || name === "pushd" || name === "popd")
      this.cd(
        argv.slice(1).find((arg) => !/^-[LPe@]+$/.test(arg.value)),
        name === "popd"
      )
    const handler = programOf(name)
    const context: ProgramContext = {
      stdin,
      line: (text, isolate) => (isolate ? this.isolated(() => this.line(text, depth + 1)) : this.line(text, depth + 1)),
      run: (inner, roots, execdir) => this.exec(inner, depth, roots, execdir),
      unknown: (reason) => this.unknown(reason),
      write: (arg) => this.write(arg)
    }
    if (handler && !handler(argv, context)) return
    const cut = argv.findIndex((arg) => arg.dynamic || arg.glob || arg.placeholder)
    const end = cut < 0 ? (openEnded ? argv.length : -1) : cut
    const prefix = end < 0 ? undefined : end === 0 ? "" : `${renderArgv(argv.slice(0, end))} `
    this.commands.push({
      argv: argv.map((arg) => arg.value),
      text: renderArgv(argv),
      always: alwaysPattern(argv),
      ...(prefix !== undefined ? { prefix } : {})
    })
    const writes = commandWrites(argv)
    for (const target of writes.targets) this.write(target)
    for (const arg of writes.unknown)
      this.unknownWrites.push({ target: arg.value, reason: `${name} writes to a path computed at run time` })
    if (openEnded && (writes.targets.length > 0 || commandWrites([...argv, literal("x")]).targets.length > 0)) {
      this.unknownWrites.push({ target: renderArgv(argv), reason: `${name} writes to paths read at run time` })
    }
    const creates = commandCreates(argv)
    const appended = openEnded && commandCreates([...argv, literal("x")]).paths.length > 0
    if (creates.anywhere !== undefined || appended) this.create(undefined, name)
    for (const path of creates.paths) this.create(path, name)
  }

  /** Records a path the current command may create or replace (undefined: any path). */
  private create(arg: Arg | undefined, by: string) {
    if (arg?.placeholder && this.roots) {
      for (const root of this.roots) this.create({ ...root, value: arg.value.replaceAll("{}", root.value) }, by)
      return
    }
    const full = arg === undefined ? undefined : this.locate(arg)
    const path = typeof full === "string" ? full : undefined
    if (full === null) return
    this.created.push({ path, command: this.current, again: this.loops > 0, by })
  }

  /**
   * Pairs every static write with each path another command of the line (or the same one, run again in a loop) may
   * create or replace; order is ignored, since pipes, loops, functions and traps run commands in another order.
   */
  throughCreated(): Array<ThroughCreated> {
    const pairs: Array<ThroughCreated> = []
    for (const write of this.located)
      for (const created of this.created) {
        if (created.command === write.command && !created.again) continue
        pairs.push({
          write: write.path,
          by: created.by,
          ...(created.path === undefined ? {} : { created: created.path })
        })
      }
    return pairs
  }

  /** `find -exec CMD {} ;`: `{}` stands for the roots (and what is under them). */
  private exec(inner: ReadonlyArray<Arg>, depth: number, roots: ReadonlyArray<Arg> | undefined, execdir?: boolean) {
    const saved = this.roots
    const cwd = this.cwd
    this.roots = roots
    if (execdir && roots?.length === 1 && roots[0]) this.cd(roots[0], false)
    else if (execdir) this.cwd = "?"
    const marked = inner.map((arg) => (roots && arg.value.includes("{}") ? { ...arg, placeholder: true } : arg))
    this.argv(marked, depth + 1, { kind: "unknown", what: "find" })
    this.roots = saved
    this.cwd = cwd
  }

  private cd(dir: Arg | undefined, pop: boolean) {
    if (this.cwd === "?") return
    if (pop || this.loops > 0 || (dir && (dir.dynamic || dir.glob || dir.value === "-" || /^[+-]\d/.test(dir.value)))) {
      this.cwd = "?"
    } else if (!dir) this.cwd = "~"
    else if (dir.value.startsWith("~") && !/^~(\/|$)/.test(dir.value)) this.cwd = "?"
    else if (dir.value.startsWith("/") || dir.value.startsWith("~")) this.cwd = posix.normalize(dir.value)
    else this.cwd = posix.join(this.cwd || ".", dir.value)
  }

  private write(arg: Arg) {
    if (arg.placeholder && this.roots) {
      for (const root of this.roots) this.write({ ...root, value: arg.value.replaceAll("{}", root.value) })
      return
    }
    const full = this.locate(arg)
    if (full === null) return
    if (typeof full !== "string") return void this.unknownWrites.push({ target: arg.value, reason: full.unknown })
    ;(arg.glob ? this.globWrites : this.writes).push(full)
    this.located.push({ path: full, command: this.current })
  }

  /** Where a path word points: absolute, `~…` or relative to the line's cwd; null for a device; or why unknown. */
  private locate(arg: Arg): string | null | { readonly unknown: string } {
    if (arg.dynamic) return { unknown: "the path is computed at run time" }
    const path = arg.value
    if (DEVICES.has(path) || path === "" || /^\/dev\/fd\/\d+$/.test(path)) return null
    const tilde = arg.pattern?.startsWith("~") ?? path.startsWith("~")
    if (tilde && !/^~(\/|$)/.test(path))
      return { unknown: "the path starts in another user's home or a directory stack" }
    const absolute = path.startsWith("/") || (tilde && path.startsWith("~"))
    if (!absolute && this.cwd === "?") return { unknown: "it follows a cd Lathe cannot follow" }
    return absolute || this.cwd === "" ? path : `${this.cwd}/${path}`
  }
}
