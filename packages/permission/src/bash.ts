import { createRequire } from "node:module"
import type { Parser } from "web-tree-sitter"
import { Walker } from "./bash-walker.js"

/** One simple command found in a command line. */
export interface SimpleCommand {
  /** The normalised argv: wrappers, env assignments, escapes and program directories removed. */
  readonly argv: ReadonlyArray<string>
  /** The argv as one shell-quoted line: what bash rules match against. */
  readonly text: string
  /** The pattern an "always" reply remembers: `git push *`, `ls *`. */
  readonly always: string
  /**
   * Present when the command's tail is not known statically (a word expanded at run time, a glob, arguments
   * `xargs` appends): the text before the first such word. Rules that could match a completion of it decide.
   */
  readonly prefix?: string
}

/** A path a command line writes to that cannot be known statically. */
export interface UnknownWrite {
  /** The target as written (`$OUT`, `~bob/x`), or the program that writes (`xargs rm`). */
  readonly target: string
  readonly reason: string
}

/**
 * A write that a path made by another command of the line may redirect: `ln -s /etc x && echo > x/f`. The checks
 * turn a write that goes through `created` (or any write, when `created` is absent) into an unknown write.
 */
export interface ThroughCreated {
  /** The written path, as in `writes` or `globWrites`. */
  readonly write: string
  /**
   * A path the other command may create or replace (a link, a moved, copied or extracted file), in the same form;
   * absent when its destinations are not known statically.
   */
  readonly created?: string
  /** The program that may create it. */
  readonly by: string
}

/** What a command line does, as far as can be known without running it. */
export interface CommandAnalysis {
  /** Every simple command, including those in pipes, lists, subshells, substitutions, `bash -c` and `find -exec`. */
  readonly commands: ReadonlyArray<SimpleCommand>
  /**
   * Why some command of the line cannot be known statically (a syntax error, a computed command name, a shell
   * reading its standard input, `python -c` …); the line is then checked as a whole, as an unknown command.
   */
  readonly unparsable?: string
  /** Paths the line writes to (redirections, `rm`, `cp` targets …): absolute, `~…`, or relative to its cwd. */
  readonly writes: ReadonlyArray<string>
  /** Written paths holding an unquoted glob: the shell writes whatever files match (same forms as `writes`). */
  readonly globWrites: ReadonlyArray<string>
  /** Writes whose target cannot be known statically. */
  readonly unknownWrites: ReadonlyArray<UnknownWrite>
  /** Writes that a link or other path made by another command of the line may redirect. */
  readonly throughCreated: ReadonlyArray<ThroughCreated>
}

const require = createRequire(import.meta.url)
let loading: Promise<Parser> | undefined

/**
 * Loads the tree-sitter bash grammar (WASM, shipped in the `tree-sitter-bash` package) once per process. The
 * `web-tree-sitter` package itself is imported here too, not at start-up: a turn without a shell command never needs it.
 */
export const loadBashParser = (): Promise<Parser> => {
  loading ??= (async () => {
    const { Language, Parser } = await import("web-tree-sitter")
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

/** Analyses a command line with an already loaded parser (synchronous; see `loadBashParser`). */
export const analyzeWith = (parser: Parser, line: string): CommandAnalysis => {
  const walker = new Walker(parser)
  walker.line(line, 0)
  return {
    commands: walker.commands,
    ...(walker.reasons.length > 0 ? { unparsable: [...new Set(walker.reasons)].join("; ") } : {}),
    writes: [...new Set(walker.writes)],
    globWrites: [...new Set(walker.globWrites)],
    unknownWrites: walker.unknownWrites,
    throughCreated: walker.throughCreated()
  }
}

/**
 * Splits a command line into its simple commands (pipes, `;`, `&&`, `||`, subshells, `$(…)`, backticks,
 * `bash -c '…'`, `eval`, `find -exec`, wrappers such as `sudo`, `env X=1`, `timeout`, `xargs`), each with its
 * normalised argv, and collects the paths it writes. Fails closed: what cannot be known statically sets
 * `unparsable` (commands) or lands in `unknownWrites` (paths).
 */
export const analyzeCommand = async (line: string): Promise<CommandAnalysis> =>
  analyzeWith(await loadBashParser(), line)
