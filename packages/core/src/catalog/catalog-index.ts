import { mayHoldId } from "./catalog-file.js"
import type { CatalogEntry } from "./model-info.js"
import { type CatalogData, type CatalogModels, type CatalogRow, FLAG, INPUT_KINDS } from "./models-dev.js"

/** A model of the catalogue with where it is served and what Lathe makes of it. */
export interface CatalogModel {
  readonly providerID: string
  readonly modelID: string
  /** Limits, prices and capabilities, as `ModelCatalog.lookup` returns them. */
  readonly entry: CatalogEntry
  /** Input kinds it takes: `text`, `image`, `pdf`, `audio`, `video`. */
  readonly input: ReadonlyArray<string>
  /** Takes file attachments. */
  readonly attachment: boolean
  /** Training cut-off, `YYYY-MM` or `YYYY-MM-DD`. */
  readonly knowledge?: string
  /** First release, `YYYY-MM-DD`. */
  readonly releaseDate?: string
}

/** A provider of the catalogue. */
export interface CatalogProvider {
  readonly id: string
  readonly name: string
  /** The environment variables its SDK reads the key from, first is the usual one. */
  readonly env: ReadonlyArray<string>
  /** The AI SDK package that speaks its API. */
  readonly npm?: string
  /** The API base URL, for OpenAI-compatible providers. */
  readonly api?: string
  /** How many models it serves. */
  readonly models: number
}

/** Providers whose own rows win when a model id is looked up without a provider that knows it. */
const FIRST_PARTY = ["anthropic", "openai", "google", "deepseek", "xai", "mistral", "moonshotai", "zai", "alibaba"]

/** The output cap when the catalogue gives none. */
const FALLBACK_OUTPUT = 4_096

const DATED = /-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/

/** The id without its date or `-latest` suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). */
const bare = (id: string) => id.replace(DATED, "")

/**
 * The keys a requested id is tried under, most exact first: as is, without a date suffix, Claude's dotted form
 * (`claude-sonnet-4.5`), without a `vendor/` prefix (`openai/gpt-5` on a proxy) and without an Ollama `:tag`.
 */
const candidates = (modelID: string): ReadonlyArray<string> => {
  const id = modelID.toLowerCase()
  const out = [id, bare(id)]
  if (id.startsWith("claude")) out.push(bare(id).replaceAll(".", "-"))
  const last = id.slice(id.lastIndexOf("/") + 1)
  out.push(last, bare(last))
  const untagged = last.replace(/:[^:]*$/, "")
  out.push(untagged, bare(untagged))
  return [...new Set(out)]
}

/** What Lathe makes of one catalogue row. */
export const toEntry = (row: CatalogRow): CatalogEntry => {
  const [name, context, output, input, outputPrice, cacheRead, cacheWrite, flags, kinds] = row
  return {
    name,
    limit: { context, output: output ?? Math.min(FALLBACK_OUTPUT, context) },
    cost: { input: input ?? 0, output: outputPrice ?? 0, cacheRead: cacheRead ?? 0, cacheWrite: cacheWrite ?? 0 },
    capabilities: {
      reasoning: (flags & FLAG.reasoning) !== 0,
      toolCall: (flags & FLAG.toolCall) !== 0,
      temperature: (flags & FLAG.temperature) !== 0,
      image: (kinds & 2) !== 0,
      pdf: (kinds & 4) !== 0
    }
  }
}

type Found = { readonly providerID: string; readonly modelID: string; readonly row: CatalogRow }

/**
 * Of rows found for one id in several providers: a first-party provider's, else the context most of them agree on
 * (among those with a price, when any has one: resellers often list a model without).
 */
const pick = (rows: ReadonlyArray<Found>): Found | undefined => {
  if (rows.length <= 1) return rows[0]
  const priced = rows.filter(({ row }) => row[3] !== null)
  const voters = priced.length > 0 ? priced : rows
  const votes = new Map<number, number>()
  for (const { row } of voters) votes.set(row[1], (votes.get(row[1]) ?? 0) + 1)
  const best = Math.max(...votes.values())
  return voters.find(({ row }) => votes.get(row[1]) === best)
}

/**
 * The catalogue data, answering look-ups by provider and model id. A provider's models are parsed and indexed on its
 * first look-up; an id its provider does not serve parses only the providers whose models' text contains it.
 * Answers are remembered: a session resolves the same model every turn.
 */
export class CatalogIndex {
  private readonly parsed = new Map<string, CatalogModels>()
  private readonly byProvider = new Map<string, Map<string, string>>()
  private readonly answers = new Map<string, CatalogModel | undefined>()
  private lowered: ReadonlyArray<readonly [string, string]> | undefined

  constructor(readonly data: CatalogData) {}

  /** `providerID`'s models, parsed on first use (the data is the shipped snapshot or a validated copy). */
  private models(providerID: string): CatalogModels | undefined {
    const provider = Object.hasOwn(this.data.providers, providerID) ? this.data.providers[providerID] : undefined
    if (provider === undefined) return undefined
    let models = this.parsed.get(providerID)
    if (models === undefined) {
      models = JSON.parse(provider.models) as CatalogModels
      this.parsed.set(providerID, models)
    }
    return models
  }

  /** `providerID`'s model ids by key (lower-case id, and the bare id of a dated one), the most exact first. */
  private keysOf(providerID: string): Map<string, string> | undefined {
    let keys = this.byProvider.get(providerID)
    const models = keys === undefined ? this.models(providerID) : undefined
    if (keys === undefined && models !== undefined) {
      keys = new Map()
      for (const modelID of Object.keys(models)) {
        const id = modelID.toLowerCase()
        if (!keys.has(id)) keys.set(id, modelID)
        if (!keys.has(bare(id))) keys.set(bare(id), modelID)
      }
      this.byProvider.set(providerID, keys)
    }
    return keys
  }

  private inProvider(providerID: string | undefined, modelID: string): Found | undefined {
    const keys = providerID === undefined ? undefined : this.keysOf(providerID)
    if (providerID === undefined || keys === undefined) return undefined
    for (const key of candidates(modelID)) {
      const found = keys.get(key)
      const row = found === undefined ? undefined : this.models(providerID)?.[found]
      if (found !== undefined && row !== undefined) return { providerID, modelID: found, row }
    }
    return undefined
  }

  /** One pass over every provider's ids: a first-party match (most exact key first), else the most exact matches. */
  private anywhere(modelID: string): Found | undefined {
    const keys = candidates(modelID)
    // A model no provider lists (a local one, an alias): answered from the file's bytes, no provider's ids decoded.
    if (!keys.some((key) => mayHoldId(this.data, key))) return undefined
    let best = keys.length
    let rows: Array<Found> = []
    let firstParty: { readonly rank: number; readonly found: Found } | undefined
    // The lower-cased ids where the data has them (the catalogue file): the rows stay undecoded bytes.
    this.lowered ??= Object.entries(this.data.providers).map(
      ([id, p]) => [id, p.ids ?? p.models.toLowerCase()] as const
    )
    for (const [providerID, text] of this.lowered) {
      if (!keys.some((key) => text.includes(key))) continue
      const preferred = FIRST_PARTY.includes(providerID)
      for (const [id, row] of Object.entries(this.models(providerID) ?? {})) {
        const lower = id.toLowerCase()
        // Each of an id's keys is a part of it: most ids are out after a substring test, before any regex.
        if (!keys.some((key) => lower.includes(key))) continue
        const last = lower.slice(lower.lastIndexOf("/") + 1)
        const own = [lower, bare(lower), last, bare(last)]
        const rank = keys.findIndex((key) => own.includes(key))
        if (rank === -1) continue
        const found = { providerID, modelID: id, row }
        if (preferred && (firstParty === undefined || rank < firstParty.rank)) firstParty = { rank, found }
        if (rank < best) {
          best = rank
          rows = [found]
        } else if (rank === best) rows.push(found)
      }
    }
    return firstParty?.found ?? pick(rows)
  }

  /**
   * The model: in `providerID`'s own rows first, then the `vendor/` prefix's provider, then a first-party provider's
   * (a proxy serving `gpt-4.1` gets OpenAI's limits), then any provider's; each by the keys of `candidates`, most
   * exact first.
   */
  find(providerID: string | undefined, modelID: string): CatalogModel | undefined {
    const asked = `${providerID ?? ""}\n${modelID}`
    if (this.answers.has(asked)) return this.answers.get(asked)
    const slash = modelID.indexOf("/")
    const found =
      this.inProvider(providerID, modelID) ??
      (slash > 0 ? this.inProvider(modelID.slice(0, slash).toLowerCase(), modelID.slice(slash + 1)) : undefined) ??
      this.anywhere(modelID)
    const answer = found === undefined ? undefined : toModel(found)
    this.answers.set(asked, answer)
    return answer
  }

  /** Every model of one provider, or of all, by provider then model id. */
  list(providerID?: string): ReadonlyArray<CatalogModel> {
    const { providers } = this.data
    const ids =
      providerID === undefined ? Object.keys(providers) : Object.hasOwn(providers, providerID) ? [providerID] : []
    return ids.flatMap((id) =>
      Object.entries(this.models(id) ?? {}).map(([modelID, row]) => toModel({ providerID: id, modelID, row }))
    )
  }

  /** Every provider, by id. */
  providers(): ReadonlyArray<CatalogProvider> {
    return Object.entries(this.data.providers).map(([id, p]) => ({
      id,
      name: p.name,
      env: p.env ?? [],
      ...(p.npm === undefined ? {} : { npm: p.npm }),
      ...(p.api === undefined ? {} : { api: p.api }),
      models: Object.keys(this.models(id) ?? {}).length
    }))
  }
}

const toModel = ({ providerID, modelID, row }: Found): CatalogModel => {
  const [, , , , , , , flags, kinds, knowledge, releaseDate] = row
  return {
    providerID,
    modelID,
    entry: toEntry(row),
    input: INPUT_KINDS.filter((_, i) => (kinds & (2 ** i)) !== 0),
    attachment: (flags & FLAG.attachment) !== 0,
    ...(knowledge === null ? {} : { knowledge }),
    ...(releaseDate === null ? {} : { releaseDate })
  }
}
