import { type AnyTool, Tool } from "@lathe/plugin"
import { z } from "zod"
import { type CodeResult, type SearchResult, searchCode, searchWeb } from "./backends.js"
import {
  type CodeBackendConfig,
  codeBackend,
  type WebBackendConfig,
  WebsearchSettings,
  webBackend
} from "./settings.js"

/** How long one search may take before it is given up, in ms. */
const SEARCH_TIMEOUT_MS = 30_000
const DEFAULT_RESULTS = 8

const SERVICE_NAMES: Readonly<Record<string, string>> = {
  searxng: "SearxNG",
  brave: "Brave Search",
  exa: "Exa",
  tavily: "Tavily",
  github: "GitHub code search",
  sourcegraph: "Sourcegraph"
}

/** The text the model reads for web results: numbered, each title, URL and snippet. */
export const formatResults = (query: string, service: string, results: ReadonlyArray<SearchResult>): string =>
  results.length === 0
    ? `No results for "${query}" (${service}). Try other words.`
    : [
        `Results for "${query}" (${service}):`,
        ...results.map(
          (result, index) =>
            `\n${index + 1}. ${result.title}\n   ${result.url}${result.snippet ? `\n   ${result.snippet}` : ""}`
        )
      ].join("\n")

/** The text the model reads for code results: repository, path, URL and the matching lines. */
export const formatCodeResults = (query: string, service: string, results: ReadonlyArray<CodeResult>): string =>
  results.length === 0
    ? `No code matches "${query}" (${service}).`
    : [
        `Code matching "${query}" (${service}):`,
        ...results.map(
          (result, index) =>
            `\n${index + 1}. ${result.repository} ${result.path}\n   ${result.url}` +
            result.lines
              .slice(0, 5)
              .map((line) => `\n   | ${line.replace(/\n/g, "\n   | ")}`)
              .join("")
        )
      ].join("\n")

const Query = z.object({
  query: z.string().min(2).describe("What to search for."),
  max_results: z.number().int().min(1).max(20).optional().describe("How many results (default 8).")
})

const signalFor = (abort: AbortSignal) => AbortSignal.any([abort, AbortSignal.timeout(SEARCH_TIMEOUT_MS)])

/** The `websearch` tool over `backend`. */
export const websearchTool = (backend: WebBackendConfig, limit: number, http: typeof fetch): AnyTool =>
  Tool.define("websearch", {
    description:
      "Search the web. Returns titles, URLs and snippets; read a page with webfetch. Use it for documentation, " +
      "APIs and errors newer than your training, and say which URLs your answer rests on.",
    parameters: Query,
    mutates: false,
    execute: async (args, ctx) => {
      await ctx.ask({ permission: "websearch", patterns: [args.query], always: ["*"], metadata: { query: args.query } })
      const service = SERVICE_NAMES[backend.name] ?? backend.name
      const results = await searchWeb(backend, {
        query: args.query,
        limit: args.max_results ?? limit,
        signal: signalFor(ctx.abort),
        fetch: http
      })
      const shown = results.slice(0, args.max_results ?? limit)
      return {
        title: args.query,
        output: formatResults(args.query, service, shown),
        metadata: { backend: backend.name, results: shown }
      }
    }
  }) as AnyTool

/** The `codesearch` tool over `backend`. */
export const codesearchTool = (backend: CodeBackendConfig, limit: number, http: typeof fetch): AnyTool =>
  Tool.define("codesearch", {
    description:
      "Search code in public repositories (" +
      (backend.name === "github"
        ? "GitHub code search syntax: `symbol language:ts repo:owner/name`"
        : "Sourcegraph query syntax: `symbol lang:typescript repo:^github\\.com/owner/name$`") +
      "). Returns repository, path, URL and matching lines: use it to see how a library is used in practice.",
    parameters: Query,
    mutates: false,
    execute: async (args, ctx) => {
      await ctx.ask({
        permission: "codesearch",
        patterns: [args.query],
        always: ["*"],
        metadata: { query: args.query }
      })
      const service = SERVICE_NAMES[backend.name] ?? backend.name
      const results = await searchCode(backend, {
        query: args.query,
        limit: args.max_results ?? limit,
        signal: signalFor(ctx.abort),
        fetch: http
      })
      return {
        title: args.query,
        output: formatCodeResults(args.query, service, results),
        metadata: {
          backend: backend.name,
          results: results.map(({ repository, path, url }) => ({ repository, path, url }))
        }
      }
    }
  }) as AnyTool

/**
 * The tools config `websearch` (as the file has it) and `env` set up: `websearch` when a web backend is there,
 * `codesearch` when a code backend is configured. Bad settings, or a backend named without its URL or key, throw a
 * message naming the fix.
 */
export const searchTools = (
  settings: unknown,
  env: Readonly<Record<string, string | undefined>>,
  http: typeof fetch
): ReadonlyArray<AnyTool> => {
  const parsed = WebsearchSettings.safeParse(settings ?? {})
  if (!parsed.success) throw new Error(`@lathe/websearch: invalid websearch config: ${z.prettifyError(parsed.error)}`)
  const limit = parsed.data.max_results ?? DEFAULT_RESULTS
  const web = webBackend(parsed.data, env)
  const code = codeBackend(parsed.data, env)
  return [
    ...(web === undefined ? [] : [websearchTool(web, limit, http)]),
    ...(code === undefined ? [] : [codesearchTool(code, limit, http)])
  ]
}
