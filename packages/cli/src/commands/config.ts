import { parseArgs } from "node:util"
import { Config, ConfigError, Paths } from "@lathe/core"
import { Effect, Layer } from "effect"
import type { CliIO, Command } from "../io.js"

const usage = `Usage: lathe config [--json]

Shows the merged configuration of this directory's project: which files were read (global, project,
$LATHE_CONFIG, environment), whether the project is trusted, and any notice. Exits 1 with the file, line
and column of the first problem when a config file is invalid. $LATHE_CONFIG is an absolute path or one
relative to your home directory (never to the working directory).

Options:
  --json   Print the merged config and its sources as JSON
`

/** `lathe config`: load, validate and show the merged configuration. */
export const configCommand: Command = async (args, io: CliIO) => {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    strict: true
  })
  if (values.help) {
    io.stdout(usage)
    return 0
  }
  const layer = Config.layerWith(io.env).pipe(Layer.provideMerge(Paths.layer(io.cwd, io.env)))
  const program = Effect.gen(function* () {
    const config = yield* Config
    const paths = yield* Paths
    return { config, paths }
  }).pipe(Effect.provide(layer))
  const result = await Effect.runPromise(Effect.result(program))
  if (result._tag === "Failure") {
    const error = result.failure
    io.stderr(`${error instanceof ConfigError ? error.message : String(error)}\n`)
    return 1
  }
  const { config, paths } = result.success
  if (values.json) {
    io.stdout(
      `${JSON.stringify({ root: paths.root, trusted: config.trusted, sources: config.sources, notices: config.notices, config: config.info }, null, 2)}\n`
    )
    return 0
  }
  const lines = [
    `project   ${paths.root} (${config.trusted ? "trusted" : "not trusted: its config may only narrow what Lathe does"})`,
    `data dir  ${paths.data}`,
    `sources   ${config.sources.length === 0 ? "(none: built-in defaults)" : ""}`,
    ...config.sources.map(
      (source) => `  ${source.scope.padEnd(8)} ${source.file}${source.trusted ? "" : " (untrusted)"}`
    ),
    ...config.notices.map((notice) => `notice    ${notice}`),
    "",
    JSON.stringify(config.info, null, 2),
    ""
  ]
  io.stdout(lines.join("\n"))
  return 0
}
