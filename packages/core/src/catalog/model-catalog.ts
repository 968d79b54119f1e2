import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Clock, Context, Effect, Layer } from "effect"
import { Config, type ConfigInfo } from "../config/config.js"
import { configAdvice, renderSnippet } from "../config/config-advice.js"
import type { ModelConfig } from "../config/config-schema.js"
import { dataDir, type PathEnv } from "../config/paths.js"
import { closeMatches } from "../provider/close-match.js"
import { descriptorFor } from "../provider/registry.js"
import { CatalogIndex, type CatalogModel, type CatalogProvider } from "./catalog-index.js"
import { flagshipModel } from "./default-model.js"
import { groupDigits } from "./group-digits.js"
import type { CatalogEntry, ModelInfo } from "./model-info.js"
import { loadShippedCatalog } from "./models-dev.js"
import { DEFAULT_MODELS_URL, type RefreshOutcome, readCachedCatalog, refreshCatalog } from "./refresh.js"

export type { CatalogModel, CatalogProvider } from "./catalog-index.js"
export { DEFAULT_MODELS_URL, REFRESH_INTERVAL_MS, type RefreshOutcome } from "./refresh.js"

/**
 * Anthropic's fallback default, when no catalogue is loaded (the default itself is the catalogue's newest Sonnet,
 * `flagshipCatalogModel`).
 */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
/** OpenAI's fallback default, when no catalogue is loaded (see `DEFAULT_ANTHROPIC_MODEL`). */
export const DEFAULT_OPENAI_MODEL = "gpt-5"

/** Limits for a model the catalogue does not know: small enough to be safe anywhere, free, tools on. */
export const UNKNOWN_MODEL: CatalogEntry = {
  name: "unknown model",
  limit: { context: 32_768, output: 4_096 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
}

/** Where the catalogue comes from and whether it may refresh itself. */
export interface ModelCatalogOptions {
  /** The data directory: a refreshed catalogue is kept there as `models.json`. */
  readonly dataDir: string
  /** Where a refresh downloads from (models.dev's `api.json` shape). */
  readonly url: string
  /** Whether the daily background refresh runs (config `models.refresh`, default true). */
  readonly refresh: boolean
}

/**
 * Options from config and environment: `LATHE_MODELS_URL`, else config `models.url`, else models.dev; refresh unless
 * config `models.refresh` is false; the data directory of `env`.
 */
export const catalogOptions = (info: ConfigInfo, env: PathEnv): ModelCatalogOptions => ({
  dataDir: dataDir(env),
  url: env.LATHE_MODELS_URL || info.models?.url || DEFAULT_MODELS_URL,
  refresh: info.models?.refresh !== false
})

/** What `refresh` did: a `RefreshOutcome`, or `off` when config turned refreshing off. */
export type CatalogRefresh = RefreshOutcome | { readonly status: "off" }

/** The shipped snapshot, indexed once per process on first use. */
let shipped: Promise<CatalogIndex> | undefined
const shippedIndex = () => {
  shipped ??= loadShippedCatalog().then((data) => new CatalogIndex(data))
  return shipped
}

/** The catalogue most recently loaded by any `ModelCatalog`, for the synchronous `lookupModel`. */
let current: CatalogIndex | undefined

/** `provider/model` refs whose limits were assumed: unknown to the catalogue, and no config entry names the model. */
const assumed = new Set<string>()
const noticed = new Set<string>()

/** `entry` with a config entry `provider.<id>.models.<model>` laid over it field by field. */
const withOverride = (providerID: string, modelID: string, base: CatalogEntry, override?: ModelConfig): ModelInfo => {
  const cost = override?.cost
  return {
    providerID,
    modelID,
    name: override?.name ?? base.name,
    limit: { context: override?.context ?? base.limit.context, output: override?.output ?? base.limit.output },
    cost: cost
      ? {
          input: cost.input,
          output: cost.output,
          cacheRead: cost.cache_read ?? base.cost.cacheRead,
          cacheWrite: cost.cache_write ?? base.cost.cacheWrite
        }
      : base.cost,
    capabilities: {
      reasoning: override?.reasoning ?? base.capabilities.reasoning,
      toolCall: override?.tool_call ?? base.capabilities.toolCall,
      temperature: override?.temperature ?? base.capabilities.temperature,
      image: override?.image ?? base.capabilities.image,
      ...(base.capabilities.pdf !== undefined ? { pdf: base.capabilities.pdf } : {})
    }
  }
}

/** A model's info from an index (or `UNKNOWN_MODEL`), with the config override on top. */
const infoFrom = (
  index: CatalogIndex | undefined,
  providerID: string,
  modelID: string,
  override?: ModelConfig
): ModelInfo => {
  const found = index?.find(providerID, modelID)?.entry
  const info = withOverride(providerID, modelID, found ?? { ...UNKNOWN_MODEL, name: modelID }, override)
  const ref = `${providerID}/${modelID}`
  if (found === undefined && override === undefined) assumed.add(ref)
  else assumed.delete(ref)
  return info
}

/** Where the notice is remembered and whether it is wanted (see {@link assumedModelNotice}). */
export interface AssumedNoticeOptions {
  /** The data directory: the models already told about are kept in `notices.json` there, across runs. */
  readonly dataDir?: string
  /** The person's config folder, named in the advice. */
  readonly configDir?: string
  /** Config `models.notice: false`: never shown. */
  readonly silenced?: boolean
}

/** The file of notices already shown, in the data directory: `{ "unknownModels": ["env/fake", …] }`. */
export const noticesFile = (dir: string): string => join(dir, "notices.json")

/** Per notices file, the models told about in earlier runs (read once per process, only when a notice is due). */
const toldBefore = new Map<string, Set<string>>()
const readTold = (file: string): Set<string> => {
  try {
    const data: unknown = JSON.parse(readFileSync(file, "utf8"))
    const list = typeof data === "object" && data !== null ? (data as { unknownModels?: unknown }).unknownModels : []
    return new Set(Array.isArray(list) ? list.filter((item): item is string => typeof item === "string") : [])
  } catch {
    return new Set()
  }
}
/** Adds `ref` to the file; a file that cannot be written only means the notice may come again. */
const remember = (file: string, told: Set<string>, ref: string): void => {
  told.add(ref)
  try {
    mkdirSync(dirname(file), { recursive: true })
    const temp = `${file}.${process.pid}.tmp`
    writeFileSync(temp, `${JSON.stringify({ unknownModels: [...readTold(file), ref].filter(unique) }, null, 2)}\n`)
    renameSync(temp, file)
  } catch {
    // not remembered: shown again next run
  }
}
const unique = (item: string, index: number, all: ReadonlyArray<string>) => all.indexOf(item) === index

/**
 * The notice for a model whose limits Lathe had to assume (unknown to the catalogue, and no config entry for it: a
 * person who wrote one is already where limits are set): which limits, and the config block that sets them
 * (`configAdvice.modelLimits`, loadable as printed). Returned once per model: once per process, and with `dataDir`
 * once across runs (remembered in {@link noticesFile}); never with `silenced`; `undefined` for known and configured
 * models.
 */
export const assumedModelNotice = (info: ModelInfo, options: AssumedNoticeOptions = {}): string | undefined => {
  const ref = `${info.providerID}/${info.modelID}`
  if (!assumed.has(ref) || noticed.has(ref)) return undefined
  noticed.add(ref)
  if (options.silenced) return undefined
  if (options.dataDir !== undefined) {
    const file = noticesFile(options.dataDir)
    const told = toldBefore.get(file) ?? readTold(file)
    toldBefore.set(file, told)
    if (told.has(ref)) return undefined
    remember(file, told, ref)
  }
  // The `env` provider is LATHE_BASE_URL's server: the person knows the model as LATHE_MODEL, not as "env/…".
  const named = info.providerID === "env" ? `The model "${info.modelID}" (LATHE_MODEL)` : ref
  const close = closeMatches(info.modelID, catalogCandidates(info.providerID))
  const didYouMean = close.length > 0 ? ` — did you mean ${close.join(", ")}?` : ""
  const file = options.configDir === undefined ? "your lathe.json" : join(options.configDir, "lathe.json")
  return (
    `${named} is not in Lathe's model catalogue${didYouMean} (lathe models lists it): Lathe assumes a ` +
    `${groupDigits(info.limit.context)}-token context, ${groupDigits(info.limit.output)} output tokens and no price. ` +
    `If that is wrong, merge this into ${file} (prices in USD per million tokens): ` +
    `${renderSnippet(configAdvice.modelLimits(info.providerID, info.modelID))}. This notice is shown once per ` +
    `model; ${renderSnippet(configAdvice.modelNoticeOff())} turns it off.`
  )
}

/**
 * The model ids the loaded catalogue lists for provider `providerID`: its own rows, else those of the provider type it
 * is configured as or named after (`descriptor.catalogID`); empty until a catalogue is loaded (see `lookupModel`).
 */
export const catalogCandidates = (providerID: string, type?: string): ReadonlyArray<string> => {
  const own = catalogModelsOf(providerID)
  if (own.length > 0) return own
  return catalogModelsOf(descriptorFor(providerID, type).catalogID)
}

/**
 * The catalogue entry for a model id, whatever the provider, from the catalogue a `ModelCatalog` has loaded
 * (`undefined` until one has: `LLM.resolve` loads it). Prefer `ModelCatalog.lookup`.
 */
export const lookupModel = (modelID: string): CatalogEntry | undefined => current?.find(undefined, modelID)?.entry

/**
 * Loads the shipped catalogue for the synchronous helpers (`lookupModel`, `catalogModelsOf`, `newestCatalogModel`)
 * when no `ModelCatalog` has loaded one yet; resolves at once when one has.
 */
export const catalogReady = async (): Promise<void> => {
  if (current === undefined) current = await shippedIndex()
}

/** Every model id of the loaded catalogue (see `lookupModel`). */
export const catalogModels = (): ReadonlyArray<string> => current?.list().map((model) => model.modelID) ?? []

/** The model ids of one provider in the loaded catalogue (see `lookupModel`); empty until one is loaded. */
export const catalogModelsOf = (providerID: string): ReadonlyArray<string> =>
  current?.list(providerID).map((model) => model.modelID) ?? []

/**
 * The newest model of `providerID` in the loaded catalogue whose id starts with `prefix` (`claude-sonnet`): the latest
 * release date, then the shortest id (the undated alias over its dated twin); `undefined` when none matches or no
 * catalogue is loaded yet (`LLM.resolve` loads it).
 */
export const newestCatalogModel = (providerID: string, prefix: string): string | undefined => {
  let best: { readonly id: string; readonly date: string } | undefined
  for (const model of current?.list(providerID) ?? []) {
    if (!model.modelID.startsWith(prefix)) continue
    const date = model.releaseDate ?? ""
    if (best === undefined || date > best.date || (date === best.date && model.modelID.length < best.id.length))
      best = { id: model.modelID, date }
  }
  return best?.id
}

/**
 * The default model of catalogue provider `catalogID` in the loaded catalogue, by `flagshipModel`'s rule (the newest
 * tool-calling model of `family`, no mini/preview tier unless nothing else); `undefined` when none fits or no
 * catalogue is loaded yet (`LLM.resolve` and `catalogReady` load it).
 */
export const flagshipCatalogModel = (catalogID: string, family?: RegExp): string | undefined =>
  current === undefined ? undefined : flagshipModel(current.list(catalogID), family)

/** A model's info from the loaded catalogue (see `lookupModel`), or `UNKNOWN_MODEL`, with the override on top. */
export const modelInfo = (providerID: string, modelID: string, override?: ModelConfig): ModelInfo =>
  infoFrom(current, providerID, modelID, override)

/**
 * Every model a user may have, from the models.dev catalogue: limits, prices, abilities and where each provider's
 * key comes from. The catalogue is the data-dir copy of the last refresh when there is a valid one, else the
 * snapshot shipped in the package; either is read on first use, never at import or layer construction.
 */
export class ModelCatalog extends Context.Service<
  ModelCatalog,
  {
    /**
     * A model's entry: `providerID`'s own row first, then any provider's (a first-party row when several serve the
     * id); each by exact id, then without a date or `-latest` suffix, a `vendor/` prefix or an Ollama `:tag`.
     */
    readonly lookup: (providerID: string, modelID: string) => Effect.Effect<CatalogEntry | undefined>
    /** `lookup` (else `UNKNOWN_MODEL`, see `assumedModelNotice`) with the config entry for the model on top. */
    readonly info: (providerID: string, modelID: string, override?: ModelConfig) => Effect.Effect<ModelInfo>
    /** Every model of `providerID`, or of every provider. */
    readonly list: (providerID?: string) => Effect.Effect<ReadonlyArray<CatalogModel>>
    /** Every provider the catalogue knows. */
    readonly providers: () => Effect.Effect<ReadonlyArray<CatalogProvider>>
    /**
     * Downloads the catalogue now into the data directory (at most daily unless `force`) and uses it from then on.
     * Never fails: a failure is an outcome, and the catalogue in use stays.
     */
    readonly refresh: (options?: { readonly force?: boolean }) => Effect.Effect<CatalogRefresh>
    /**
     * Called after each model request: the first call starts `refresh()` in the background (nothing when config
     * turned it off); a failure is only logged at debug level. Returns at once.
     */
    readonly afterRequest: () => Effect.Effect<void>
  }
>()("@lathe/core/ModelCatalog") {
  /**
   * A catalogue with explicit options (the LLM layer builds one this way when no `ModelCatalog` is provided). With
   * `preload`, reading it starts on the next turn of the event loop, so it overlaps start-up's waits (git, files)
   * instead of delaying the first request's model look-up.
   */
  static readonly make = (options: ModelCatalogOptions, preload = false): ModelCatalog["Service"] => {
    let loading: Promise<CatalogIndex> | undefined
    const start = () => {
      loading ??= readCachedCatalog(options.dataDir)
        .then((cached) => (cached === undefined ? shippedIndex() : new CatalogIndex(cached)))
        .then((index) => {
          current = index
          return index
        })
      return loading
    }
    if (preload) setImmediate(() => void start().catch(() => undefined))
    const load = Effect.promise(start)
    const lookup = Effect.fn("ModelCatalog.lookup")(function* (providerID: string, modelID: string) {
      return (yield* load).find(providerID, modelID)?.entry
    })
    const info = Effect.fn("ModelCatalog.info")(function* (
      providerID: string,
      modelID: string,
      override?: ModelConfig
    ) {
      return infoFrom(yield* load, providerID, modelID, override)
    })
    const list = Effect.fn("ModelCatalog.list")(function* (providerID?: string) {
      return (yield* load).list(providerID)
    })
    const providers = Effect.fn("ModelCatalog.providers")(function* () {
      return (yield* load).providers()
    })
    const run = Effect.fn("ModelCatalog.refresh")(function* (force: boolean, background: boolean) {
      if (!options.refresh && !force) return { status: "off" } as const
      const now = yield* Clock.currentTimeMillis
      const outcome = yield* Effect.promise(() =>
        refreshCatalog({ dataDir: options.dataDir, url: options.url, now, force, background })
      )
      if (outcome.status === "updated") {
        const index = new CatalogIndex(outcome.data)
        loading = Promise.resolve(index)
        current = index
      }
      if (outcome.status === "failed") yield* Effect.logDebug(`model catalogue refresh: ${outcome.reason}`)
      return outcome
    })
    const refresh = (refreshOptions?: { readonly force?: boolean }) => run(refreshOptions?.force === true, false)
    let started = false
    const afterRequest = Effect.fn("ModelCatalog.afterRequest")(function* () {
      if (started || !options.refresh) return
      started = true
      yield* Effect.forkDetach(run(false, true))
    })
    return ModelCatalog.of({ lookup, info, list, providers, refresh, afterRequest })
  }

  /** From `Config` and `env` (data directory, `LATHE_MODELS_URL`; see `catalogOptions`), preloading. */
  static readonly layerWith = (env: PathEnv): Layer.Layer<ModelCatalog, never, Config> =>
    Layer.effect(
      ModelCatalog,
      Effect.gen(function* () {
        const config = yield* Config
        return ModelCatalog.make(catalogOptions(config.info, env), true)
      })
    )

  /** `layerWith(process.env)`. */
  static readonly layer: Layer.Layer<ModelCatalog, never, Config> = ModelCatalog.layerWith(process.env)

  /** A catalogue with the given options, for tests (point `dataDir` at a temp dir, `url` at a local server). */
  static readonly layerTest = (options: ModelCatalogOptions): Layer.Layer<ModelCatalog> =>
    Layer.succeed(ModelCatalog, ModelCatalog.make(options))
}
