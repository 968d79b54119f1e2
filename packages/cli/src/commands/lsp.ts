import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { findServer, installDir, LspOptions, serverDefinitions } from "@lathe/lsp"
import { loadConfig } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

/** `lathe lsp status`, declared once for the command kit. */
export const lspSpec = defineCommand({
  name: "lsp",
  usage: ["[status] [--json]"],
  description: `Shows the language servers of this project: each server, the files it serves and where its program is
(the project's node_modules/.bin when the project is trusted, PATH, or Lathe's data folder), and the
servers that run now in a Lathe process for this project (pid, state, restarts). Servers start on the
first edit of a file of their type; see docs/lsp.md.`,
  options: { json: { type: "boolean", description: "Print it as JSON" } },
  positionals: { name: "[status]", max: 1 }
})

/** What a Lathe process wrote of its running servers (see `@lathe/lsp`'s `statusFile`). */
interface RunningFile {
  readonly pid: number
  readonly servers: ReadonlyArray<{
    readonly name: string
    readonly state: string
    readonly pid?: number
    readonly command?: string
    readonly restarts: number
    readonly error?: string
  }>
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The status files of live Lathe processes for this project. */
const running = (data: string, projectID: string): ReadonlyArray<RunningFile> => {
  const dir = join(data, "lsp", "status")
  let names: Array<string>
  try {
    names = readdirSync(dir).filter((name) => name.startsWith(`${projectID}-`) && name.endsWith(".json"))
  } catch {
    return []
  }
  return names.flatMap((name) => {
    try {
      const file = JSON.parse(readFileSync(join(dir, name), "utf8")) as RunningFile
      return alive(file.pid) ? [file] : []
    } catch {
      return []
    }
  })
}

/** `lathe lsp [status]`: the project's language servers, where each is found, and which run now. */
export const lspCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(lspSpec, args, io)
  if (typeof parsed === "number") return parsed
  const sub = parsed.positionals[0] ?? "status"
  if (sub !== "status") {
    io.stderr(`lathe lsp: unknown subcommand "${sub}"; use lathe lsp status.\n`)
    return 2
  }
  const loaded = await loadConfig(io)
  if (!loaded.ok) {
    io.stderr(`lathe lsp: ${loaded.message}\n`)
    return 1
  }
  const { config, paths } = loaded.value
  const options = LspOptions.safeParse(config.info.lsp ?? {})
  if (!options.success) {
    io.stderr(`lathe lsp: invalid "lsp" config: ${options.error.message}\n`)
    return 1
  }
  const install = config.trusted && options.data.install !== false && io.env.LATHE_LSP_INSTALL !== "0"
  const { servers, problems } = serverDefinitions(options.data)
  const table = servers.map((server) => {
    const found = findServer(server, { root: paths.root, trusted: config.trusted, dataDir: paths.data, env: io.env })
    return {
      name: server.name,
      extensions: server.extensions,
      ...(found
        ? { path: found.path, foundIn: found.foundIn }
        : {
            missing:
              server.npm && install
                ? `not found: installed into ${installDir(paths.data, server.name)} on the first edit`
                : server.npm
                  ? `not found (installing is off${config.trusted ? "" : " in an untrusted project"})`
                  : "not found on PATH"
          })
    }
  })
  const live = running(paths.data, paths.projectID)
  if (parsed.values.json) {
    io.stdout(
      `${JSON.stringify({ root: paths.root, trusted: config.trusted, install, servers: table, running: live, problems }, null, 2)}\n`
    )
    return 0
  }
  const width = Math.max(...table.map((row) => row.name.length), 6)
  const extensions = Math.max(...table.map((row) => row.extensions.join(" ").length), 5)
  const lines = [
    `Language servers for ${paths.root}${config.trusted ? "" : " (untrusted: its node_modules/.bin and lsp config are not used)"}:`,
    ...table.map(
      (row) =>
        `  ${row.name.padEnd(width)}  ${row.extensions.join(" ").padEnd(extensions)}  ` +
        ("path" in row ? `${row.path} (${row.foundIn})` : row.missing)
    ),
    ...problems.map((problem) => `  ! ${problem}`),
    "",
    ...(live.length === 0
      ? ["Nothing runs now: a server starts on the first edit of a file of its type."]
      : live.flatMap((file) => [
          `Running in Lathe process ${file.pid}:`,
          ...(file.servers.length === 0
            ? ["  (no server started yet)"]
            : file.servers.map(
                (server) =>
                  `  ${server.name.padEnd(width)}  ${server.state}${server.pid ? `  pid ${server.pid}` : ""}` +
                  `  restarts ${server.restarts}${server.error ? `  ${server.error}` : ""}`
              ))
        ]))
  ]
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}
