import { createRequire } from "node:module"
import type { Parser } from "web-tree-sitter"
import type { CommandAnalysis } from "./bash-analysis.js"
import { Walker } from "./bash-walker.js"

export type { CommandAnalysis, SimpleCommand, ThroughCreated, UnknownWrite } from "./bash-analysis.js"

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
