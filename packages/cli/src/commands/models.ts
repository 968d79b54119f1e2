import {
  type CatalogModel,
  type CatalogProvider,
  Config,
  ConfigError,
  type ConfigShape,
  type ConfiguredProvider,
  ModelCatalog,
  type ModelInfo,
  Paths
} from "@lathe/core"
import { descriptorOf, PROVIDER_TYPES, PROVIDERS, storedKeys } from "@lathe/core/providers"
import { Effect, Layer } from "effect"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { catalogueIDOf, discoverModels, providerStatus, yourProviders } from "../provider-status.js"
import { providerListText } from "./models-providers.js"

/** How long `lathe models <local provider>` waits for the server's list. */
const DISCOVER_TIMEOUT_MS = 2_000

/** `lathe models`, declared once for the command kit. */
export const modelsSpec = defineCommand({
  name: "models",
  usage: ["[provider] [--all] [--json] [--refresh]"],
  description: `Lists the models Lathe knows (the models.dev catalogue, with your lathe.json model entries laid over it): id,
name, context and output limits, prices in USD per million tokens (input/output, cache read/write), abilities,
and where the provider's key comes from (config, the variable's name and whether it is set, or lathe auth; never
the key). Without a provider it lists providers, not models: yours (configured, or with a key in the environment or
stored by lathe auth), then the ones Lathe ships and the other providers of the catalogue, each with the variables
its key is read from, whether they are set, and how to sign in (or why Lathe cannot drive it). --all lists every
model of the catalogue, yours first; --json lists your providers' models. Named, a server (ollama, lmstudio,
an openai-compatible provider of yours) is also asked which models it has.`,
  options: {
    all: { type: "boolean", description: "Every provider of the catalogue, not only yours" },
    json: { type: "boolean", description: "Print an array of objects (see the CLI README for the shape)" },
    refresh: {
      type: "boolean",
      description: "Download the catalogue now (LATHE_MODELS_URL, config models.url, else models.dev) before listing"
    }
  },
  positionals: { name: "[provider]", max: 1 }
})

/** Where a provider's key comes from, by name only. */
export interface KeySource {
  /** The variables the provider's SDK reads, usual one first (empty: none needed or none known). */
  readonly env: ReadonlyArray<string>
  /**
   * The variable (or config key) the key is taken from, `lathe auth` for a stored key, else the variable to set;
   * `null` when the provider names none.
   */
  readonly from: string | null
  /** Whether a key is there (for ambient credentials: whether they look set up). */
  readonly set: boolean
  /** Where the key comes from: `config`, `env`, `auth` (stored by `lathe auth login`), `ambient` or `none`. */
  readonly source: "config" | "env" | "auth" | "ambient" | "none"
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
  /** `catalogue`, `config` for a model only lathe.json names, `server` for one only the running server offers. */
  readonly source: "catalogue" | "config" | "server"
  readonly key: KeySource
}

/** The key source of provider `id`: from its descriptor when Lathe ships one, else the catalogue's variables. */
const keySource = (
  status: ConfiguredProvider | undefined,
  provider: CatalogProvider | undefined,
  id: string,
  config: ConfigShape,
  io: CliIO,
  stored: Readonly<Record<string, string>>
): KeySource => {
  if (status === undefined) {
    const env = provider?.env ?? []
    if (config.info.provider?.[id]?.apiKey) return { env, from: `provider.${id}.apiKey`, set: true, source: "config" }
    const present = env.find((name) => io.env[name])
    if (present !== undefined) return { env, from: present, set: true, source: "env" }
    if (stored[id] !== undefined) return { env, from: "lathe auth", set: true, source: "auth" }
    return { env, from: env[0] ?? null, set: false, source: "none" }
  }
  const descriptor = status.descriptor
  const env = descriptor.auth === "ambient" ? (descriptor.detectEnv ?? descriptor.keyEnv) : descriptor.keyEnv
  const source = status.keySource
  if (source === "config") return { env, from: `provider.${id}.apiKey`, set: true, source }
  if (source.startsWith("env:")) return { env, from: source.slice(4), set: true, source: "env" }
  if (source === "auth") return { env, from: "lathe auth", set: true, source }
  if (source === "ambient")
    return { env, from: env.find((name) => io.env[name]) ?? env[0] ?? null, set: status.ready, source }
  return { env, from: env[0] ?? null, set: false, source: "none" }
}

const row = (
  provider: string,
  info: ModelInfo,
  model: CatalogModel | undefined,
  key: KeySource,
  source: ModelRow["source"]
): ModelRow => ({
  provider,
  id: info.modelID,
  ref: `${provider}/${info.modelID}`,
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
  source,
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

const keyText = (key: KeySource, status: ConfiguredProvider | undefined) => {
  if (key.source === "auth") return "key stored by lathe auth"
  if (key.source === "none" && status?.descriptor.auth === "optional")
    return `no key needed (server ${status.settings.baseURL ?? "not set"})`
  if (key.source === "ambient")
    return status?.ready ? "ambient credentials (ready)" : `ambient credentials (${status?.problem ?? "not set up"})`
  return key.from === null ? "no key variable" : `key ${key.from} (${key.set ? "set" : "not set"})`
}

/** `lathe models [provider] [--json] [--refresh]`: the catalogue, as the person's config sees it. */
export const modelsCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(modelsSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values, positionals } = parsed
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
    return { config, catalog, providers, refreshed }
  }).pipe(Effect.provide(layer))
  const loaded = await Effect.runPromise(Effect.result(program))
  if (loaded._tag === "Failure") {
    const error = loaded.failure
    io.stderr(`lathe models: ${error instanceof ConfigError ? error.message : String(error)}\n`)
    return 1
  }
  const { config, catalog, providers, refreshed } = loaded.success
  const info = config.info
  const stored = storedKeys(io.env)
  const yours = yourProviders(info, io.env, stored)
  const statuses = new Map(yours.map((status) => [status.id, status]))
  const statusOf = (id: string) => statuses.get(id) ?? providerStatus(id, info, io.env, stored)
  const configured = Object.keys(info.provider ?? {})
  const known = (id: string) => providers.has(id) || configured.includes(id) || descriptorOf(id) !== undefined
  if (wanted !== undefined && !known(wanted)) {
    const close = [...new Set([...providers.keys(), ...PROVIDER_TYPES])]
      .filter((id) => id.includes(wanted) || wanted.includes(id))
      .slice(0, 8)
    io.stderr(
      `lathe models: no provider "${wanted}" in the catalogue or in lathe.json.` +
        (close.length > 0 ? ` Did you mean: ${close.join(", ")}?` : "") +
        " lathe models --all lists every provider's models.\n"
    )
    return 1
  }
  // Which providers to list, each with the catalogue provider its models come from.
  const entries: Array<{ readonly id: string; readonly catalogueID: string }> = []
  const add = (id: string) => {
    if (!entries.some((entry) => entry.id === id)) entries.push({ id, catalogueID: catalogueIDOf(id, info) })
  }
  if (wanted !== undefined)
    add(
      descriptorOf(wanted) !== undefined && !configured.includes(wanted)
        ? (descriptorOf(wanted)?.type ?? wanted)
        : wanted
    )
  else {
    for (const status of yours) add(status.id)
    // The catalogue's thousands of models would bury the useful lines: list the providers and how to set one up.
    if (!values.all && !values.json) {
      if (refreshed?.status === "failed")
        io.stderr(`lathe models: could not refresh the catalogue (${refreshed.reason}); listing the one in use\n`)
      else if (refreshed !== undefined) io.stderr("lathe models: catalogue refreshed\n")
      const keyOf = (status: ConfiguredProvider) =>
        keyText(keySource(status, providers.get(catalogueIDOf(status.id, info)), status.id, config, io, stored), status)
      io.stdout(providerListText(io, yours, keyOf, [...providers.values()]))
      return refreshed?.status === "failed" ? 1 : 0
    }
    if (values.all || entries.length === 0) {
      const covered = new Set(entries.map((entry) => entry.catalogueID))
      for (const id of [...providers.keys()].sort()) {
        if (covered.has(id)) continue
        const descriptor = PROVIDERS.find((d) => d.catalogID === id && d.type !== "openai-compatible")
        add(descriptor?.type ?? id)
      }
    }
  }
  const listing = Effect.gen(function* () {
    const rows: Array<ModelRow> = []
    const problems: Array<string> = []
    for (const { id, catalogueID } of entries) {
      const status = statusOf(id)
      const key = keySource(status, providers.get(catalogueID), id, config, io, stored)
      const own = info.provider?.[id]?.models ?? {}
      const listed = providers.has(catalogueID) ? yield* catalog.list(catalogueID) : []
      for (const model of listed)
        rows.push(row(id, yield* catalog.info(catalogueID, model.modelID, own[model.modelID]), model, key, "catalogue"))
      const has = (modelID: string) => rows.some((r) => r.provider === id && r.id === modelID)
      for (const modelID of Object.keys(own).filter((m) => !has(m)))
        rows.push(row(id, yield* catalog.info(catalogueID, modelID, own[modelID]), undefined, key, "config"))
      // A local server is asked what it has only when it was named: listing every provider stays offline.
      const descriptor = status?.descriptor
      if (wanted === undefined || descriptor?.discover === undefined) continue
      const settings = status?.settings
      if (settings === undefined) continue
      const found = yield* Effect.promise(() => discoverModels(settings, descriptor, DISCOVER_TIMEOUT_MS))
      if ("problem" in found) {
        const hint = descriptor.hints?.connect ? ` Check: ${descriptor.hints.connect}.` : ""
        const listed = rows.some((r) => r.provider === id) ? "Listing the catalogue's models." : "No models to list."
        problems.push(
          `${descriptor.name} did not list its models: ${found.problem.replace(/\.$/, "")}.${hint} ${listed}`
        )
        continue
      }
      for (const model of found.models.filter((m) => !has(m.id))) {
        const override = own[model.id] ?? (model.context ? { context: model.context } : undefined)
        const modelInfo = yield* catalog.info(catalogueID, model.id, override)
        rows.push(row(id, model.name ? { ...modelInfo, name: model.name } : modelInfo, undefined, key, "server"))
      }
    }
    return { rows, problems }
  })
  const { rows, problems } = await Effect.runPromise(listing)
  let code = 0
  if (refreshed !== undefined) {
    if (refreshed.status === "failed") {
      io.stderr(`lathe models: could not refresh the catalogue (${refreshed.reason}); listing the one in use\n`)
      code = 1
    } else io.stderr("lathe models: catalogue refreshed\n")
  }
  for (const problem of problems) io.stderr(`lathe models: ${problem}\n`)
  if (problems.length > 0) code = 1
  if (values.json) {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`)
    return code
  }
  const lines: Array<string> = []
  for (const { id, catalogueID } of entries) {
    const own = rows.filter((r) => r.provider === id)
    if (own.length === 0 && wanted === undefined) continue
    const status = statusOf(id)
    const name = info.provider?.[id]?.name ?? status?.descriptor.name ?? providers.get(catalogueID)?.name ?? id
    const key = own[0]?.key ?? keySource(status, providers.get(catalogueID), id, config, io, stored)
    const unsupported = status?.descriptor.unsupported
    lines.push(`${id} (${name}): ${unsupported ?? keyText(key, status)}`)
    const width = Math.max(...own.map((r) => r.id.length))
    for (const r of own) lines.push(textLine(r, width))
  }
  if (lines.length === 0 || rows.length === 0) lines.push(`No models for ${wanted ?? "any provider"}.`)
  if (wanted === undefined && !values.all) {
    const more = [...providers.keys()].filter((id) => !entries.some((entry) => entry.catalogueID === id)).length
    if (more > 0) lines.push("", `${more} more providers in the catalogue: lathe models --all`)
  }
  io.stdout(`${lines.join("\n")}\n`)
  return code
}
