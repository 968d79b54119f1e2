import { CATALOG_PROVIDERS } from "./catalog-providers.js"
import type { ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { promptFamilyOf } from "./families.js"

/**
 * Providers built from the models.dev catalogue: a catalogue provider Lathe has no descriptor of its own for gets one
 * from its entry, on its first look-up (never all 147 at start-up): the descriptor of the AI SDK package models.dev
 * names for it (`@ai-sdk/openai-compatible` → the OpenAI-compatible provider, `@ai-sdk/anthropic` → Anthropic's, …),
 * pointed at the entry's `api` base URL, with its key variables. A package Lathe does not include gives a descriptor
 * that says so (`unsupported`) instead of asking for a key that would do nothing.
 *
 * The entries come from `catalog-providers.ts`, generated with `catalog/snapshot.json` (this room may not read the
 * catalogue, and config validation needs the ids synchronously): a provider a refreshed catalogue adds after the
 * snapshot is set up as OpenAI-compatible until Lathe's next release.
 */

/** One provider of the catalogue, as models.dev describes it. */
export interface CatalogProviderEntry {
  readonly id: string
  readonly name: string
  /** The AI SDK package that speaks its API (`""` when models.dev names none). */
  readonly npm: string
  /** Its API base URL; may name a variable (`https://${DATABRICKS_HOST}/…`). `""` when models.dev gives none. */
  readonly api: string
  /** The variables models.dev lists for it: key variables and settings such as an account id, in its order. */
  readonly env: ReadonlyArray<string>
}

export { drivenBy } from "./driven-packages.js"

type Row = readonly [name: string, npm: string, api: string, env: string]
let table: Readonly<Record<string, Row>> | undefined
const rows = (): Readonly<Record<string, Row>> => {
  table ??= JSON.parse(CATALOG_PROVIDERS) as Record<string, Row>
  return table
}

const entryOf = (id: string, row: Row): CatalogProviderEntry => ({
  id,
  name: row[0],
  npm: row[1],
  api: row[2],
  env: row[3] === "" ? [] : row[3].split(" ")
})

/**
 * The catalogue's entry for provider `id`, `undefined` when the catalogue has none. An id absent from the table's
 * text is answered without parsing it: most look-ups at start-up are for ids of the user's own (`env`, `local`).
 */
export const catalogProviderEntry = (id: string): CatalogProviderEntry | undefined => {
  if (table === undefined && !CATALOG_PROVIDERS.includes(`"${id}":[`)) return undefined
  const all = rows()
  const row = Object.hasOwn(all, id) ? all[id] : undefined
  return row === undefined ? undefined : entryOf(id, row)
}

/** Every provider of the catalogue, by id (for `lathe models`). */
export const catalogProviderEntries = (): ReadonlyArray<CatalogProviderEntry> =>
  Object.entries(rows()).map(([id, row]) => entryOf(id, row))

/** The variables a base URL names (`${DATABRICKS_HOST}`), in order. */
const urlVariables = (url: string): ReadonlyArray<string> => [...url.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1] ?? "")

/**
 * The variables of `entry` that hold its key: those its base URL does not name, and of them the ones that look like a
 * secret (`…_KEY`, `…_TOKEN`, `…_PAT`) when any does (Azure's list also has its resource name).
 */
export const keyVariablesOf = (entry: CatalogProviderEntry): ReadonlyArray<string> => {
  const inURL = urlVariables(entry.api)
  const rest = entry.env.filter((name) => !inURL.includes(name))
  const secret = rest.filter((name) => /(KEY|TOKEN|PAT|SECRET)$/.test(name))
  return secret.length > 0 ? secret : rest
}

/** `url` with the variables it names filled from `env`. */
const fillURL = (url: string, env: ProviderSettings["env"]): string =>
  url.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name] ?? "")

/** Why Lathe cannot drive `entry`, worded with the fix. */
const refusal = (entry: CatalogProviderEntry): string => {
  const key = keyVariablesOf(entry)[0]
  const apiKey = key === undefined ? "" : `, "apiKey": "{env:${key}}"`
  const needs = entry.npm === "" ? "names no AI SDK package for it" : `drives it with the package ${entry.npm}`
  return (
    `Lathe cannot drive ${entry.name} (${entry.id}): models.dev ${needs}, which Lathe does not include. If ` +
    `${entry.name} offers an OpenAI-compatible API, set it up as one in lathe.json: "provider": { "${entry.id}": ` +
    `{ "type": "openai-compatible", "baseURL": "<its OpenAI-compatible URL>"${apiKey} } }`
  )
}

/**
 * The descriptor of catalogue provider `entry`, from `base`, the descriptor of the package models.dev names for it
 * (`undefined`: a package Lathe cannot drive). The entry gives the type (its id), name, catalogue rows, key variables
 * and default base URL (overridden by config `baseURL`); the base gives how requests are made, caching and reasoning;
 * the base prompt follows the model id. Its default model comes from the catalogue (newest of its models), never from
 * the base.
 */
export const catalogDescriptor = (
  entry: CatalogProviderEntry,
  base: ProviderDescriptor | undefined
): ProviderDescriptor => {
  const keyEnv = keyVariablesOf(entry)
  const common = {
    type: entry.id,
    name: entry.name,
    catalogID: entry.id,
    keyEnv,
    detectEnv: keyEnv,
    catalogue: { npm: entry.npm }
  }
  if (base === undefined) {
    const unsupported = refusal(entry)
    return {
      ...common,
      auth: "optional",
      imagesInToolResults: false,
      prompt: "generic",
      unsupported,
      load: () => Promise.reject(new Error(unsupported))
    }
  }
  const inURL = urlVariables(entry.api)
  const missing = (settings: ProviderSettings): string | undefined => {
    const unset = urlVariables(settings.baseURL ?? "").filter((name) => !settings.env[name])
    if (unset.length > 0)
      return `set ${unset.join(" and ")} (its API URL is ${settings.baseURL}), or provider.${settings.id}.baseURL in lathe.json`
    return base.missing?.(settings)
  }
  const {
    aliases: _aliases,
    defaultModel: _model,
    defaultFamily: _family,
    discover: _discover,
    detectEnv: _detect,
    signIn: _signIn,
    ...driver
  } = base
  return {
    ...driver,
    ...common,
    // A key is required when models.dev names a variable for one (a hosted API); else sent when there is one.
    auth: keyEnv.length > 0 && base.auth !== "ambient" ? "key" : base.auth,
    // The base prompt by the model's own family (a Claude model through a gateway is still Claude; MiniMax through an
    // Anthropic-compatible API is not), not by the SDK that carries it.
    prompt: (modelID: string) => promptFamilyOf(modelID, "generic"),
    ...(entry.api === "" ? {} : { baseURL: { default: entry.api } }),
    ...(inURL.length > 0 || base.missing !== undefined ? { missing } : {}),
    load: (settings, modelID) =>
      base.load(
        settings.baseURL !== undefined && /\$\{\w+\}/.test(settings.baseURL)
          ? { ...settings, baseURL: fillURL(settings.baseURL, settings.env) }
          : settings,
        modelID
      ),
    hints: {
      ...(keyEnv.length > 0 ? { key: `get one from ${entry.name}` } : {}),
      ...(base.hints?.connect === undefined ? {} : { connect: base.hints.connect })
    }
  }
}
