import { Effect } from "effect"
import { flagshipModel } from "../catalog/default-model.js"
import type { ModelCatalog } from "../catalog/model-catalog.js"
import type { ModelInfo } from "../catalog/model-info.js"
import type { ConfigInfo, ConfigShape } from "../config/config.js"
import { configAdvice, renderSnippet } from "../config/config-advice.js"
import {
  type ConfiguredProvider,
  configuredProviders,
  defaultCandidates,
  referencedProvider,
  unconfiguredProblem
} from "./configured.js"
import { ModelNotFound, ProviderNotConfigured } from "./provider-error.js"

/**
 * Which model a run uses: the providers of the run (config, environment, stored keys, keyless local servers), the
 * default model when none is named, and the errors that say how to set one up.
 */

/** The environment variables the LLM layer reads: provider keys, regions and projects, `LATHE_DATA_DIR`. */
export type ProviderEnv = Readonly<Record<string, string | undefined>>

/** The providers of one run: the configured table, and keyless local servers looked up when a reference names them. */
export interface ProviderTable {
  /** The ids of the table, in order (config first, then the ones the environment or a stored key set up). */
  readonly ids: ReadonlyArray<string>
  readonly all: ReadonlyArray<ConfiguredProvider>
  readonly env: ProviderEnv
  readonly find: (id: string) => ConfiguredProvider | undefined
  /** `all`, and the providers a model reference set up since (`ollama/…`, a catalogue provider's `zhipuai/…`). */
  readonly used: () => ReadonlyArray<ConfiguredProvider>
}

/** `configuredProviders`, indexed, plus the local servers a model reference names (`ollama/qwen3`), built once. */
export const providerTable = (info: ConfigInfo, env: ProviderEnv): ProviderTable => {
  const all = configuredProviders(info, env)
  const byID = new Map(all.map((provider) => [provider.id, provider]))
  const referenced = new Map<string, ConfiguredProvider | undefined>()
  const find = (id: string) => {
    const configured = byID.get(id)
    if (configured !== undefined) return configured
    if (!referenced.has(id)) referenced.set(id, referencedProvider(id, env))
    return referenced.get(id)
  }
  const used = () => [
    ...all,
    ...[...referenced.values()].filter((provider): provider is ConfiguredProvider => provider !== undefined)
  ]
  return { ids: [...byID.keys()], all, env, find, used }
}

/** The three ways to set up a provider, worded like the README's "Configure a model provider". */
export const providerSetupHelp = [
  "Lathe needs one model. Any of these three works:",
  "  1. A provider's API key in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, …: lathe models",
  "     lists them) or stored with `lathe auth login <provider>`; then LATHE_MODEL=anthropic/claude-sonnet-4-5",
  "  2. A local server: LATHE_MODEL=ollama/qwen3-coder (Ollama; lmstudio/… for LM Studio), or any OpenAI-style one:",
  '     LATHE_BASE_URL=http://127.0.0.1:11434/v1 LATHE_MODEL=qwen3-coder lathe run "…"',
  "     (LATHE_API_KEY is sent as the bearer token if the server wants one)",
  "  3. Your own config file, ~/.config/lathe/lathe.json (it applies in every folder), with a provider block:",
  `     ${renderSnippet(configAdvice.localProvider())}`,
  "     A project's lathe.json may only narrow what Lathe does until you trust the folder (lathe trust), so",
  "     provider settings there are ignored until then.",
  "In the interactive session (lathe), /connect writes option 3 for you."
].join("\n")

const notConfigured = (first: string) => new ProviderNotConfigured({ message: `${first}\n${providerSetupHelp}` })

/**
 * The model to use when none is named: Anthropic's default when it is set up, else OpenAI's, else the first other
 * provider type set up (its first config model, else the catalogue's flagship of its family, `flagshipModel`, else
 * its descriptor's `defaultModel`), else the first model of any configured provider.
 */
const defaultRef = (providers: ProviderTable, catalog: ModelCatalog["Service"]) =>
  Effect.gen(function* () {
    for (const provider of defaultCandidates(providers.all)) {
      const { catalogID, defaultFamily, defaultModel } = provider.descriptor
      const model =
        Object.keys(provider.models)[0] ?? flagshipModel(yield* catalog.list(catalogID), defaultFamily) ?? defaultModel
      if (model !== undefined) return `${provider.id}/${model}`
    }
    for (const provider of providers.all) {
      const [model] = Object.keys(provider.models)
      if (model !== undefined) return `${provider.id}/${model}`
    }
    return undefined
  })

/** `ref` (else config `model`, else a default for the keys present) to its `ModelInfo`, checking the provider. */
export const resolveModel = (
  info: ConfigInfo,
  providers: ProviderTable,
  catalog: ModelCatalog["Service"],
  requested?: string
): Effect.Effect<ModelInfo, ModelNotFound | ProviderNotConfigured> =>
  Effect.gen(function* () {
    const names = providers.ids
    const configured = names.length > 0 ? `Configured providers: ${names.join(", ")}.` : "No provider is configured."
    const ref = requested ?? info.model ?? (yield* defaultRef(providers, catalog))
    if (ref === undefined)
      return yield* Effect.fail(
        notConfigured(
          names.length > 0
            ? `No model is chosen (providers: ${names.join(", ")}): set "model": "provider/model" in lathe.json, ` +
                "or LATHE_MODEL."
            : "No model provider is configured."
        )
      )
    const slash = ref.indexOf("/")
    if (slash <= 0 || slash === ref.length - 1)
      return yield* Effect.fail(
        new ModelNotFound({
          model: ref,
          message: `"${ref}" is not a model reference: write "provider/model", for example "anthropic/claude-sonnet-4-5". ${configured}`
        })
      )
    const providerID = ref.slice(0, slash)
    const modelID = ref.slice(slash + 1)
    const provider = providers.find(providerID)
    if (provider === undefined) {
      const problem = unconfiguredProblem(ref, providerID, providers.env)
      if (problem !== undefined) return yield* Effect.fail(notConfigured(problem))
      const message = `Unknown provider "${providerID}" in "${ref}". ${configured} Add it under "provider" in lathe.json.`
      return yield* Effect.fail(new ModelNotFound({ model: ref, message }))
    }
    if (provider.problem !== undefined) return yield* Effect.fail(notConfigured(provider.problem))
    const entry = provider.models[modelID]
    // A provider the catalogue does not list under its own id takes the rows of the provider type it is
    // (`provider.work: { type: "anthropic" }` → anthropic's), when that type's rows have the model.
    const listed = (yield* catalog.list(providerID)).length > 0
    const { catalogID } = provider.descriptor
    const borrow =
      !listed &&
      catalogID !== providerID &&
      (yield* catalog.list(catalogID)).length > 0 &&
      (yield* catalog.lookup(catalogID, modelID)) !== undefined
    let found = borrow
      ? { ...(yield* catalog.info(catalogID, modelID, entry)), providerID }
      : yield* catalog.info(providerID, modelID, entry)
    // A server that needs no key (a local server: Ollama, LM Studio, your own OpenAI-compatible gateway) whose own
    // catalogue rows do not have the model borrows another provider's limits and abilities for it, never its prices:
    // what you pay there is unknown (zero unless the config entry says `cost`).
    const ownRow = listed && (yield* catalog.lookup(providerID, modelID)) !== undefined
    if (provider.descriptor.auth === "optional" && entry?.cost === undefined && !ownRow)
      found = { ...found, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }
    return entry?.reasoning_effort === undefined ? found : { ...found, reasoning: entry.reasoning_effort }
  })

const MODEL_SETTING = /^(model|small_model|agent\.[^ ]+\.model)$/

/** Whether a dropped item (`provider.local.baseURL`, `{env:K} in provider.local.apiKey`) is a provider's (`id`'s). */
const providerSetting = (item: string, id?: string): boolean => {
  const at = item.includes(" in ") ? item.slice(item.lastIndexOf(" in ") + 4) : item
  if (id === undefined) return at.startsWith("provider.") || at.startsWith("provider[")
  return at.startsWith(`provider.${id}.`) || at.startsWith(`provider[${JSON.stringify(id)}]`)
}

/**
 * When a model cannot be resolved and an untrusted project's config had set what was missing (the model, the
 * provider's URL, type or key), the one failure that says so: which keys, in which file, ignored until the folder is
 * trusted, and the two ways out. `undefined` when the failure has another cause. `ref` is the model asked for.
 */
export const ignoredUntrusted = (config: ConfigShape, ref: string | undefined): ProviderNotConfigured | undefined => {
  const { untrusted, ignored = [] } = config
  if (untrusted === undefined) return undefined
  const slash = ref?.indexOf("/") ?? -1
  if (ref !== undefined && (slash <= 0 || slash === ref.length - 1)) return undefined
  const providerID = ref?.slice(0, slash)
  const files = ignored
    .map(({ file, items }) => ({
      file,
      items: items.map((item) => item.name).filter((i) => MODEL_SETTING.test(i) || providerSetting(i))
    }))
    .filter(({ items }) => items.length > 0)
  if (!files.some(({ items }) => providerID === undefined || items.some((i) => providerSetting(i, providerID))))
    return undefined
  const them = files.length === 1 && files[0]?.items.length === 1 ? "it" : "them"
  return new ProviderNotConfigured({
    untrusted: true,
    message:
      `No model to run: ${files.map(({ file, items }) => `${file} sets ${items.join(", ")}`).join("; ")}, but Lathe ignores ${them} ` +
      "because this folder is not trusted (until you trust it, a project's config may only narrow what Lathe does, " +
      "not choose where your code is sent).\n" +
      `Run \`lathe trust\` in ${untrusted.root} to use ${them}, or put the provider settings in your own config, ` +
      `${untrusted.userConfig}, which applies in every folder.`
  })
}
