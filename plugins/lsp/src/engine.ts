/**
 * The plugin's working half, loaded on the first edit or `lsp_*` call: the servers' manager, what an edit appends,
 * and what the tools answer.
 */
import { type FileDiagnostics, LspManager, type ManagerOptions } from "./manager.js"
import { fileBlock, hoverText, locations, position, relevant, shown, symbols, textDocument } from "./render.js"

/** The settings the engine runs with (the `lsp` config section's, with defaults). */
export interface EngineOptions extends ManagerOptions {
  readonly warnings: boolean
  readonly waitMs: number
  /** The wait for a server that starts with this edit (it loads the project first). */
  readonly coldWaitMs: number
  readonly maxDiagnostics: number
}

/** Most characters appended to one edit's result. */
const MAX_APPENDED = 4000
const REQUEST_TIMEOUT_MS = 10_000

export interface Engine {
  /** Text to append to an edit's result (empty when there is nothing to say). */
  readonly afterEdit: (paths: ReadonlyArray<string>, directory: string) => Promise<string>
  readonly diagnostics: (filePath: string | undefined, directory: string) => Promise<string>
  readonly hover: (filePath: string, line: number, column: number, directory: string) => Promise<string>
  readonly definition: (filePath: string, line: number, column: number, directory: string) => Promise<string>
  readonly references: (filePath: string, line: number, column: number, directory: string) => Promise<string>
  readonly symbols: (filePath: string | undefined, query: string | undefined, directory: string) => Promise<string>
  readonly status: LspManager["status"]
  readonly stop: () => Promise<void>
}

const bounded = (text: string): string =>
  text.length > MAX_APPENDED ? `${text.slice(0, MAX_APPENDED)}\n… (diagnostics cut short)` : text

export const createEngine = (options: EngineOptions): Engine => {
  const manager = new LspManager(options)
  // Servers are children of this process: never leave them behind, even when the host exits without disposing.
  const onExit = () => manager.killAll()
  process.once("exit", onExit)

  const notices = (paths: ReadonlyArray<string>): Array<string> => {
    const names = new Set(
      options.servers
        .filter((server) => paths.some((path) => server.extensions.some((ext) => path.toLowerCase().endsWith(ext))))
        .map((server) => server.name)
    )
    return [...names].flatMap((name) => manager.takeNotice(name) ?? [])
  }

  const render = (results: ReadonlyArray<FileDiagnostics>, warnings: boolean): Array<string> =>
    results.flatMap((result) => {
      const shownDiagnostics = relevant(result.diagnostics, warnings)
      return shownDiagnostics.length === 0
        ? []
        : fileBlock(options.root, result.path, shownDiagnostics, options.maxDiagnostics)
    })

  const afterEdit = async (paths: ReadonlyArray<string>, directory: string): Promise<string> => {
    const absolute = [...new Set(paths.map((path) => manager.absolute(path, directory)))]
    let results = await manager.diagnose(absolute, options.waitMs, options.coldWaitMs)
    // A server being installed (by this edit or an earlier one) gets a moment to finish: its diagnostics then come in
    // this edit, and an install that fails at once is told with its log; otherwise the notice says they follow later.
    const ended = await Promise.all(absolute.map((path) => manager.installed(path, options.waitMs)))
    if (ended.includes(true)) results = await manager.diagnose(absolute, options.waitMs, options.coldWaitMs)
    const lines = render(results, options.warnings)
    const told = notices(absolute)
    const parts = [
      ...(lines.length > 0 ? [`Language server diagnostics (fix these errors):\n${lines.join("\n")}`] : []),
      ...told.map((notice) => `Note: ${notice}`)
    ]
    return parts.length === 0 ? "" : bounded(parts.join("\n"))
  }

  const withClient = async (
    filePath: string,
    directory: string,
    ask: (client: NonNullable<Awaited<ReturnType<LspManager["clientFor"]>>>, path: string) => Promise<string>
  ): Promise<string> => {
    const path = manager.absolute(filePath, directory)
    const client = await manager.clientFor(path, options.coldWaitMs)
    if (!client) {
      const notice = notices([path])[0]
      throw new Error(notice ?? `No language server runs for ${shown(options.root, path)}.`)
    }
    return ask(client, path)
  }

  const at = (path: string, line: number, column: number) => ({
    textDocument: textDocument(path),
    position: position(line, column)
  })

  return {
    afterEdit,
    diagnostics: async (filePath, directory) => {
      if (filePath !== undefined) {
        const path = manager.absolute(filePath, directory)
        const results = await manager.diagnose([path], options.waitMs, options.coldWaitMs)
        const told = notices([path])
        if (results.length === 0)
          throw new Error(told[0] ?? `No language server runs for ${shown(options.root, path)}.`)
        const lines = render(results, true)
        return lines.length === 0 ? `No errors or warnings in ${shown(options.root, path)}.` : lines.join("\n")
      }
      const all = manager.allDiagnostics().map((file) => ({
        path: file.path,
        server: "",
        diagnostics: file.diagnostics,
        settled: true
      }))
      const lines = render(all, true)
      const running = manager.status().filter((server) => server.state === "running")
      if (running.length === 0)
        return "No language server runs yet: servers start when a file of their type is edited or named here."
      return lines.length === 0
        ? `No errors or warnings in the files the language servers (${running.map((s) => s.name).join(", ")}) have open.`
        : lines.join("\n")
    },
    hover: (filePath, line, column, directory) =>
      withClient(filePath, directory, async (client, path) =>
        hoverText(await client.request("textDocument/hover", at(path, line, column), REQUEST_TIMEOUT_MS))
      ),
    definition: (filePath, line, column, directory) =>
      withClient(filePath, directory, async (client, path) =>
        locations(
          options.root,
          await client.request("textDocument/definition", at(path, line, column), REQUEST_TIMEOUT_MS)
        )
      ),
    references: (filePath, line, column, directory) =>
      withClient(filePath, directory, async (client, path) =>
        locations(
          options.root,
          await client.request(
            "textDocument/references",
            { ...at(path, line, column), context: { includeDeclaration: true } },
            REQUEST_TIMEOUT_MS
          )
        )
      ),
    symbols: async (filePath, query, directory) => {
      if (filePath !== undefined)
        return withClient(filePath, directory, async (client, path) =>
          symbols(
            options.root,
            await client.request(
              "textDocument/documentSymbol",
              { textDocument: textDocument(path) },
              REQUEST_TIMEOUT_MS
            )
          )
        )
      const running = manager.running()
      if (running.length === 0)
        throw new Error("No language server runs yet: name a file (filePath) to start the one for its type.")
      const answers = await Promise.all(
        running.map((client) =>
          client.request("workspace/symbol", { query: query ?? "" }, REQUEST_TIMEOUT_MS).catch(() => [])
        )
      )
      return symbols(
        options.root,
        answers.flatMap((answer) => (Array.isArray(answer) ? answer : []))
      )
    },
    status: () => manager.status(),
    stop: async () => {
      process.removeListener("exit", onExit)
      await manager.stop()
    }
  }
}
