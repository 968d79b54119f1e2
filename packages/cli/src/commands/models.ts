import { parseArgs } from "node:util"
import {
  type CatalogModel,
  type CatalogProvider,
  Config,
  ConfigError,
  type ConfigShape,
  ModelCatalog,
  type ModelInfo,
  Paths
} from "@lathe/core"
import { Effect, Layer } from "effect"
import type { CliIO, Command } from "../io.js"

const usage = `Usage: lathe models [provider] [--json] [--refresh]

Lists the models Lathe knows (the models.dev catalogue, with your lathe.json model entries laid over it): id,
name, context and output limits, prices in USD per million tokens (input/output, cache read/write), abilities,
and where the provider's key comes from (the variable's name and whether it is set; never its value).

Options:
  --json      Print an array of objects (see the CLI README for the shape)
  --refresh   Download the catalogue now (LATHE_MODELS_URL, config models.url, else models.dev) before listing
`

/** Where a provider's key comes from, by name only. */
export interface KeySource {
  /** The variables the provider's SDK reads, usual one first (empty: none needed or none known). */
  readonly env: ReadonlyArray<string>
  /** The variable (or config key) the key is taken from, or the one to set; `null` when the provider names none. */
  readonly from: string | null
  /** Whether a key is there. */
  readonly set: boolean
}

/** One model as `lathe models --json` prints it. */
export interface ModelRow {
  readonly provider: string
  readonly id: string
  /** `provider/id`, what `--model` and config `model` take. */
  readonly ref: string
  readonly name: string
  readonly context: number
  readonly output: number
  /** USD per million tokens. */
  readonly cost: {
    readonly input: number
    readonly output: number
    readonly cache_read: number
    readonly cache_write: number
  }
  readonly abilities: {
    readonly reasoning: boolean
    readonly tool_call: boolean
    readonly temperature: boolean
    readonly image: boolean
    readonly attachment: boolean
  }
  /** Input kinds: text, image, pdf, audio, video. */
  readonly input: ReadonlyArray<string>
  readonly knowledge: string | null
  readonly release_date: string | null
  /** `catalogue`, or `config` for a model only lathe.json names. */
  readonly source: "catalogue" | "config"
  readonly key: KeySource
}

const keySource = (config: ConfigShape, provider: CatalogProvider | undefined, id: string, io: CliIO): KeySource => {
  const env = provider?.env ?? []
  if (config.info.provider?.[id]?.apiKey) return { env, from: `provider.${id}.apiKey`, set: true }
  const present = env.find((name) => io.env[name])
  return { env, from: present ?? env[0] ?? null, set: present !== undefined }
}

const row = (info: ModelInfo, model: CatalogModel | undefined, key: KeySource): ModelRow => ({
  provider: info.providerID,
  id: info.modelID,
  ref: `${info.providerID}/${info.modelID}`,
  name: info.name,
  context: info.limit.context,
  output: info.limit.output,
  cost: {
    input: info.cost.input,
    output: info.cost.output,
    cache_read: info.cost.cacheRead,
    cache_write: info.cost.cacheWrite
  },
  abilities: {
    reasoning: info.capabilities.reasoning,
    tool_call: info.capabilities.toolCall,
    temperature: info.capabilities.temperature,
    image: info.capabilities.image,
    attachment: model?.attachment ?? info.capabilities.image
  },
  input: model?.input ?? (info.capabilities.image ? ["text", "image"] : ["text"]),
  knowledge: model?.knowledge ?? null,
  release_date: model?.releaseDate ?? null,
  source: model === undefined ? "config" : "catalogue",
  key
})

const tokens = (n: number) =>
  n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(2)}M` : n >= 1_000 ? `${+(n / 1_000).toFixed(1)}K` : String(n)
const usd = (n: number) => `$${+n.toFixed(4)}`

const textLine = (r: ModelRow, width: number): string => {
  const abilities = [
    r.abilities.reasoning ? "reasoning" : "",
    r.abilities.tool_call ? "tools" : "no-tools",
    r.abilities.image ? "images" : ""
  ].filter(Boolean)
  const cache =
    r.cost.cache_read > 0 || r.cost.cache_write > 0
      ? ` (cache ${usd(r.cost.cache_read)}/${usd(r.cost.cache_write)})`
      : ""
  return (
    `  ${r.id.padEnd(width)}  ${r.name}  ${tokens(r.context)} context, ${tokens(r.output)} output, ` +
    `${usd(r.cost.input)}/${usd(r.cost.output)} per M${cache}, ${abilities.join(" ")}`
  )
}

const keyText = (key: KeySource) =>
  key.from === null ? "no key variable" : `key ${key.from} (${key.set ? "set" : "not set"})`

/** `lathe models [provider] [--json] [--refresh]`: the catalogue, as the person's config sees it. */
export const modelsCommand: Command = async (args, io: CliIO) => {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    io.stderr(`lathe models: ${error instanceof Error ? error.message : String(error)}\n${usage}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help) {
    io.stdout(usage)
    return 0
  }
  const wanted = positionals[0]
  const layer = ModelCatalog.layerWith(io.env).pipe(
    Layer.provideMerge(Config.layerWith(io.env)),
    Layer.provide(Paths.layer(io.cwd, io.env))
  )
  const program = Effect.gen(function* () {
    const config = yield* Config
    const catalog = yield* ModelCatalog
    const refreshed = values.refresh ? yield* catalog.refresh({ force: true }) : undefined
    const providers = new Map((yield* catalog.providers()).map((p) => [p.id, p]))
    const configured = Object.keys(config.info.provider ?? {})
    const ids = wanted === undefined ? [...new Set([...providers.keys(), ...configured])].sort() : [wanted]
    const rows: Array<ModelRow> = []
    for (const id of ids) {
      const key = keySource(config, providers.get(id), id, io)
      const own = config.info.provider?.[id]?.models ?? {}
      const listed = providers.has(id) ? yield* catalog.list(id) : []
      for (const model of listed) rows.push(row(yield* catalog.info(id, model.modelID, own[model.modelID]), model, key))
      for (const modelID of Object.keys(own).filter((m) => !listed.some((model) => model.modelID === m)))
        rows.push(row(yield* catalog.info(id, modelID, own[modelID]), undefined, key))
    }
    return { config, providers, configured, rows, refreshed }
  }).pipe(Effect.provide(layer))
  const result = await Effect.runPromise(Effect.result(program))
  if (result._tag === "Failure") {
    const error = result.failure
    io.stderr(`lathe models: ${error instanceof ConfigError ? error.message : String(error)}\n`)
    return 1
  }
  const { providers, configured, rows, refreshed, config } = result.success
  if (wanted !== undefined && !providers.has(wanted) && !configured.includes(wanted)) {
    const close = [...providers.keys()].filter((id) => id.includes(wanted) || wanted.includes(id)).slice(0, 8)
    io.stderr(
      `lathe models: no provider "${wanted}" in the catalogue or in lathe.json.` +
        (close.length > 0 ? ` Did you mean: ${close.join(", ")}?` : "") +
        " lathe models lists every provider's models.\n"
    )
    return 1
  }
  let code = 0
  if (refreshed !== undefined) {
    if (refreshed.status === "failed") {
      io.stderr(`lathe models: could not refresh the catalogue (${refreshed.reason}); listing the one in use\n`)
      code = 1
    } else io.stderr("lathe models: catalogue refreshed\n")
  }
  if (values.json) {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`)
    return code
  }
  const lines: Array<string> = []
  for (const id of [...new Set(rows.map((r) => r.provider))]) {
    const own = rows.filter((r) => r.provider === id)
    const name = providers.get(id)?.name ?? config.info.provider?.[id]?.name ?? id
    lines.push(`${id} (${name}): ${keyText(own[0]?.key ?? keySource(config, undefined, id, io))}`)
    const width = Math.max(...own.map((r) => r.id.length))
    for (const r of own) lines.push(textLine(r, width))
  }
  if (lines.length === 0) lines.push(`No models for ${wanted ?? "any provider"}.`)
  io.stdout(`${lines.join("\n")}\n`)
  return code
}

const parse = (args: ReadonlyArray<string>) =>
  parseArgs({
    args: [...args],
    options: { json: { type: "boolean" }, refresh: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
    strict: true
  })
