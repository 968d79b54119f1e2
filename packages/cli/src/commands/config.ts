import { statSync } from "node:fs"
import {
  Config,
  ConfigError,
  configJsonSchema,
  escapingRealPath,
  type ForeignFormat,
  maskConfig,
  Paths,
  secretMasker,
  secretValues,
  startupRulesFiles
} from "@lathe/core"
import { storedKeys } from "@lathe/core/providers"
import type { Rule } from "@lathe/plugin"
import { Effect, Layer } from "effect"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

/** `lathe config schema`, declared once for the command kit. */
export const configSchemaSpec = defineCommand({
  name: "config schema",
  summary: 'Print the JSON Schema of lathe.json (for editors: its "$schema" key)',
  description: `Prints the JSON Schema (draft 2020-12) of lathe.json and lathe.jsonc, generated from the schema Lathe validates
them with: an editor that reads it completes keys and flags mistakes as you type. Point a config file at it with
its "$schema" key: the copy shipped with the CLI (dist/bundle/lathe.schema.json in the @lathe/cli package), or a
file this command wrote (lathe config schema > .lathe/lathe.schema.json).`
})

/** `lathe config`, declared once for the command kit. */
export const configSpec = defineCommand({
  name: "config",
  usage: ["[--json]", "schema"],
  description: `Shows the merged configuration of this directory's project: which files were read (global, project,
$LATHE_CONFIG, environment, Claude Code settings and OpenCode config read as sources, with each permission
rule translated from them and the file and line it came from), whether the project is trusted, the rules files (AGENTS.md, CLAUDE.md, their
.local.md siblings, instructions) sent from the start of a session, and any notice. Exits 1 with the file, line
and column of the first problem when a config file is invalid. $LATHE_CONFIG is an absolute path or one
relative to your home directory (never to the working directory). Secrets are masked: provider keys, header values
and what {env:NAME} placeholders resolved to are shown as sk-…abcd (or ***), never whole.`,
  options: { json: { type: "boolean", description: "Print the merged config and its sources as JSON" } },
  subcommands: [configSchemaSpec]
})

/** `lathe config schema`: the JSON Schema of lathe.json, generated from the zod schema the loader validates with. */
const configSchemaCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(configSchemaSpec, args, io)
  if (typeof parsed === "number") return parsed
  io.stdout(`${JSON.stringify(configJsonSchema(), null, 2)}\n`)
  return 0
}

/** Why an untrusted project's rules file is skipped (its real path is outside the project), or "" when it is read. */
const leadsOut = (root: string, file: string): string => {
  const real = escapingRealPath(root, file)
  return real === undefined ? "" : ` (skipped: it leads to ${real}, outside this untrusted project)`
}

const FORMATS: Record<ForeignFormat, string> = { "claude-code": "Claude Code settings", opencode: "OpenCode config" }

/** The permission rules that came from Claude Code or OpenCode files, each with the file (and line) it came from. */
const translatedRules = (config: Config["Service"]): Array<string> => {
  const files = config.sources.filter((source) => source.format !== undefined).map((source) => source.file)
  const from = (rule: Rule) => files.some((file) => rule.source === file || rule.source?.startsWith(`${file}:`))
  const found = [
    ...config.info.permission.filter(from).map((rule) => ({ rule, agent: "" })),
    ...Object.entries(config.info.agent).flatMap(([name, agent]) =>
      agent.permission.filter(from).map((rule) => ({ rule, agent: `agent ${name}: ` }))
    )
  ]
  if (found.length === 0) return []
  return [
    "translated permission rules (Claude Code / OpenCode → Lathe)",
    ...found.map(
      ({ rule, agent }) =>
        `  ${agent}${rule.action.padEnd(5)} ${rule.permission} ${JSON.stringify(rule.pattern)}${rule.narrows ? " (narrows only)" : ""}  from ${rule.source}`
    )
  ]
}

/** `lathe config`: load, validate and show the merged configuration. */
export const configCommand: Command = async (args, io: CliIO) => {
  if (args[0] === "schema") return configSchemaCommand(args.slice(1), io)
  const parsed = parseCommand(configSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
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
  const found = await startupRulesFiles({
    directory: paths.directory,
    root: paths.root,
    home: paths.home,
    configDir: paths.config,
    instructions: config.info.instructions,
    untrustedInstructions: config.untrustedInstructions ?? []
  })
  const rules = found.filter((file) => statSync(file, { throwIfNoEntry: false })?.isFile() === true)
  // Credential fields are masked whatever their length, then every secret Lathe holds wherever it appears.
  const mask = secretMasker([...secretValues(config, io.env), ...Object.values(storedKeys(io.env))])
  const shown = maskConfig(config.info)
  if (values.json) {
    io.stdout(
      mask(
        `${JSON.stringify({ root: paths.root, trusted: config.trusted, sources: config.sources, rules, notices: config.notices, config: shown }, null, 2)}\n`
      )
    )
    return 0
  }
  const lines = [
    `project   ${paths.root} (${config.trusted ? "trusted" : "not trusted: its config may only narrow what Lathe does"})`,
    `data dir  ${paths.data}`,
    `sources   ${config.sources.length === 0 ? "(none: built-in defaults)" : ""}`,
    ...config.sources.map(
      (source) =>
        `  ${source.scope.padEnd(8)} ${source.file}${source.format ? ` (${FORMATS[source.format]})` : ""}${source.trusted ? "" : " (untrusted)"}`
    ),
    ...translatedRules(config),
    `rules     ${rules.length === 0 ? "(none at start)" : ""}`,
    ...rules.map((file) => `  ${file}${config.trusted ? "" : leadsOut(paths.root, file)}`),
    "  AGENTS.md or CLAUDE.md files in folders below this one load when a tool first reads or edits a file there.",
    ...config.notices.map((notice) => `notice    ${notice}`),
    "",
    JSON.stringify(shown, null, 2),
    ""
  ]
  io.stdout(mask(lines.join("\n")))
  return 0
}
