import { createRequire } from "node:module"
import { posix } from "node:path"
import { Language, type Node, Parser } from "web-tree-sitter"
import { type Arg, alwaysPattern, commandWrites, renderArgv, stripWrappers } from "./bash-normalize.js"

/** One simple command found in a command line. */
export interface SimpleCommand {
  /** The normalised argv: wrappers, env assignments and escapes removed; dynamic words as written. */
  readonly argv: ReadonlyArray<string>
  /** The argv as one shell-quoted line: what bash rules match against. */
  readonly text: string
  /** The pattern an "always" reply remembers: `git push *`, `ls *`. */
  readonly always: string
}

/** What a command line does, as far as can be known without running it. */
export interface CommandAnalysis {
  /** Every simple command, including those in pipes, lists, subshells, substitutions, `bash -c` and `find -exec`. */
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Why the line cannot be analysed statically (a syntax error, a computed command name); then ask it whole. */
  readonly unparsable?: string
  /** Paths the line writes to (redirections, `rm`, `cp` targets …), relative to the cwd the line starts in. */
  readonly writes: ReadonlyArray<string>
}

const require = createRequire(import.meta.url)
let loading: Promise<Parser> | undefined

/** Loads the tree-sitter bash grammar (WASM, shipped in the `tree-sitter-bash` package) once per process. */
export const loadBashParser = (): Promise<Parser> => {
  loading ??= (async () => {
    await Parser.init()
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))
    const parser = new Parser()
    parser.setLanguage(language)
    return parser
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh"])
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const WRITE_OPS = new Set([">", ">>", ">|", "&>", "&>>", ">&"])
const DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"])
const MAX_DEPTH = 8

const unescapeWord = (text: string): string => text.replace(/\\(.)/gs, "$1")

/** An argument word's static value, or its source text marked dynamic (expansions, substitutions). */
const wordOf = (node: Node): Arg => {
  switch (node.type) {
    case "word":
    case "number":
      return { value: unescapeWord(node.text), dynamic: false }
    case "raw_string":
      return { value: node.text.slice(1, -1), dynamic: false }
    case "string": {
      const parts = node.namedChildren.filter((child) => child !== null)
      if (parts.every((part) => part.type === "string_content")) {
        return { value: parts.map((part) => part.text.replace(/\\([$`"\\\n])/g, "$1")).join(""), dynamic: false }
      }
      return { value: node.text, dynamic: true }
    }
    case "concatenation": {
      const parts = node.namedChildren.filter((child) => child !== null).map(wordOf)
      return parts.some((part) => part.dynamic)
        ? { value: node.text, dynamic: true }
        : { value: parts.map((part) => part.value).join(""), dynamic: false }
    }
    default:
      return { value: node.text, dynamic: true }
  }
}

class Walker {
  readonly commands: Array<SimpleCommand> = []
  readonly writes: Array<string> = []
  unparsable: string | undefined
  private cwd = ""
  /** While inside `find ROOTS -exec …`, what `{}` stands for. */
  private placeholder: ReadonlyArray<string> | undefined

  constructor(private readonly parser: Parser) {}

  private fail(reason: string) {
    this.unparsable ??= reason
  }

  private write(path: string) {
    if (DEVICES.has(path) || path === "") return
    if (this.placeholder && path.includes("{}")) {
      for (const root of this.placeholder) this.write(path.replaceAll("{}", root))
      return
    }
    const absolute = path.startsWith("/") || path.startsWith("~") || this.cwd === ""
    if (!absolute && this.cwd === "?")
      return this.fail(`writes "${path}" after a cd to a directory computed at run time`)
    this.writes.push(absolute ? path : posix.join(this.cwd, path))
  }

  line(text: string, depth: number) {
    if (depth > MAX_DEPTH) return this.fail(`shell commands are nested more than ${MAX_DEPTH} levels deep`)
    const tree = this.parser.parse(text)
    if (!tree) return this.fail("the shell parser gave no result")
    try {
      if (tree.rootNode.hasError) this.fail(syntaxError(tree.rootNode, text))
      this.node(tree.rootNode, depth)
    } finally {
      tree.delete()
    }
  }

  private node(node: Node, depth: number) {
    if (node.type === "command") return this.command(node, depth)
    if (node.type === "file_redirect") this.redirect(node)
    for (const child of node.namedChildren) if (child) this.node(child, depth)
  }

  private redirect(node: Node) {
    const op = node.children.find((child) => child !== null && !child.isNamed)?.type ?? ""
    const target = node.namedChildren.filter((child) => child !== null && child.type !== "file_descriptor").at(-1)
    if (!WRITE_OPS.has(op) || !target) return
    const arg = wordOf(target)
    if (op === ">&" && /^\d+$|^-$/.test(arg.value)) return
    if (arg.dynamic) return this.fail(`a redirection writes to a path computed at run time (${arg.value})`)
    this.write(arg.value)
  }

  private command(node: Node, depth: number) {
    const words: Array<Arg> = []
    for (const child of node.namedChildren) {
      if (!child) continue
      // Substitutions anywhere in the command (assignments, arguments, redirects) are commands too.
      this.node(child, depth)
      if (child.type === "command_name") {
        const name = child.namedChildren[0]
        if (name) words.push(wordOf(name))
      } else if (child.type !== "variable_assignment" && !child.type.endsWith("redirect")) {
        words.push(wordOf(child))
      }
    }
    this.argv(words, depth)
  }

  /** Records one argv after stripping wrappers, descending into `bash -c`, `eval` and `find -exec`. */
  argv(raw: ReadonlyArray<Arg>, depth: number) {
    const argv = stripWrappers(raw)
    const name = argv[0]
    if (!name || (name.value === "" && !name.dynamic)) return // a MISSING name the parser invented
    if (name.dynamic) return this.fail(`the command name is computed at run time (${name.value})`)
    // A name with blanks (`env -S 'rm -rf x'`, `"rm -rf" x`) is a string some wrapper may split again.
    if (/\s/.test(name.value)) return this.fail(`the command name "${name.value}" contains blanks`)
    const record = () => {
      this.commands.push({ argv: argv.map((arg) => arg.value), text: renderArgv(argv), always: alwaysPattern(argv) })
      for (const path of commandWrites(argv)) this.write(path)
    }
    if (SHELLS.has(name.value)) {
      const flag = argv.findIndex((arg, i) => i > 0 && !arg.dynamic && /^-[a-z]*c[a-z]*$/.test(arg.value))
      if (flag > 0) {
        const script = argv[flag + 1]
        if (!script || script.dynamic) return this.fail(`${name.value} -c runs a script computed at run time`)
        return this.line(script.value, depth + 1)
      }
    }
    if (name.value === "eval") {
      if (argv.slice(1).some((arg) => arg.dynamic)) return this.fail("eval runs a string computed at run time")
      return this.line(
        argv
          .slice(1)
          .map((arg) => arg.value)
          .join(" "),
        depth + 1
      )
    }
    if (name.value === "cd") {
      const dir = argv[1]
      if (!dir) this.cwd = "~"
      else if (dir.dynamic || dir.value === "-" || this.cwd === "?") this.cwd = "?"
      else if (dir.value.startsWith("/") || dir.value.startsWith("~")) this.cwd = dir.value
      else this.cwd = posix.join(this.cwd || ".", dir.value)
    }
    record()
    if (name.value === "find") {
      for (let i = 1; i < argv.length; i++) {
        if (!FIND_EXEC.has(argv[i]?.value ?? "")) continue
        const end = argv.findIndex((arg, j) => j > i && (arg.value === ";" || arg.value === "+"))
        const first = argv.findIndex((arg, j) => j > 0 && /^[-(!]/.test(arg.value))
        this.placeholder = argv.slice(1, first < 0 ? undefined : first).map((arg) => arg.value)
        if (this.placeholder.length === 0) this.placeholder = ["."]
        this.argv(argv.slice(i + 1, end < 0 ? undefined : end), depth + 1)
        this.placeholder = undefined
        if (end < 0) break
        i = end
      }
    }
  }
}

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

/** Analyses a command line with an already loaded parser (synchronous; see `loadBashParser`). */
export const analyzeWith = (parser: Parser, line: string): CommandAnalysis => {
  const walker = new Walker(parser)
  walker.line(line, 0)
  return {
    commands: walker.commands,
    ...(walker.unparsable ? { unparsable: walker.unparsable } : {}),
    writes: [...new Set(walker.writes)]
  }
}

/**
 * Splits a command line into its simple commands (pipes, `;`, `&&`, `||`, subshells, `$(…)`, backticks,
 * `bash -c '…'`, `eval`, `find -exec`, wrappers such as `sudo`, `env X=1`, `timeout`, `xargs`), each with its
 * normalised argv, and collects the paths it writes. Fails closed: what cannot be known statically sets
 * `unparsable`.
 */
export const analyzeCommand = async (line: string): Promise<CommandAnalysis> =>
  analyzeWith(await loadBashParser(), line)
