import { Schema } from "effect"

/**
 * One model of models.dev's `api.json` (provider id → provider, its models by model id), only the fields Lathe
 * reads; decoding strips the rest. Prices are USD per million tokens.
 */
const ApiModel = Schema.Struct({
  name: Schema.String,
  reasoning: Schema.optionalKey(Schema.Boolean),
  tool_call: Schema.optionalKey(Schema.Boolean),
  attachment: Schema.optionalKey(Schema.Boolean),
  temperature: Schema.optionalKey(Schema.Boolean),
  knowledge: Schema.optionalKey(Schema.String),
  release_date: Schema.optionalKey(Schema.String),
  limit: Schema.optionalKey(Schema.Struct({ context: Schema.Finite, output: Schema.optionalKey(Schema.Finite) })),
  cost: Schema.optionalKey(
    Schema.Struct({
      input: Schema.Finite,
      output: Schema.Finite,
      cache_read: Schema.optionalKey(Schema.Finite),
      cache_write: Schema.optionalKey(Schema.Finite)
    })
  ),
  modalities: Schema.optionalKey(Schema.Struct({ input: Schema.Array(Schema.String) }))
})

const ApiProvider = Schema.Struct({
  name: Schema.String,
  env: Schema.optionalKey(Schema.Array(Schema.String)),
  npm: Schema.optionalKey(Schema.String),
  api: Schema.optionalKey(Schema.String),
  models: Schema.Record(Schema.String, ApiModel)
})

/** models.dev's `api.json`, the fields Lathe reads. */
export const ApiCatalog = Schema.Record(Schema.String, ApiProvider)
/** models.dev's `api.json`, the fields Lathe reads. */
export type ApiCatalog = typeof ApiCatalog.Type

/** Bits of a row's `flags`. */
export const FLAG = { reasoning: 1, toolCall: 2, attachment: 4, temperature: 8 } as const
/** Bits of a row's `input` (the input modalities), in this order. */
export const INPUT_KINDS = ["text", "image", "pdf", "audio", "video"] as const

const price = Schema.NullOr(Schema.Finite)
const date = Schema.NullOr(Schema.String)

/**
 * One model as the catalogue keeps it: a fixed-position row, so the ~5,000 models parse fast and stay small in
 * memory. `null` prices are unknown (taken as 0); `flags` and `input` are bit sets of `FLAG` and `INPUT_KINDS`.
 */
export const CatalogRow = Schema.Tuple([
  Schema.String, // name
  Schema.Finite, // context limit, tokens
  Schema.NullOr(Schema.Finite), // output limit, tokens
  price, // input, USD per million tokens
  price, // output
  price, // cache read
  price, // cache write
  Schema.Finite, // flags
  Schema.Finite, // input kinds
  date, // knowledge cut-off
  date // release date
])
/** One model as the catalogue keeps it. */
export type CatalogRow = typeof CatalogRow.Type

/** The column names of `CatalogRow`, written into the file for whoever reads it. */
export const COLUMNS = [
  "name",
  "context",
  "output",
  "input",
  "output_price",
  "cache_read",
  "cache_write",
  "flags",
  "input_kinds",
  "knowledge",
  "release_date"
] as const

/** A provider's models: model id → row. */
export const CatalogModels = Schema.Record(Schema.String, CatalogRow)
/** A provider's models: model id → row. */
export type CatalogModels = typeof CatalogModels.Type

/**
 * A provider of the catalogue: display name, key variables, AI SDK package, API base URL, and its models as JSON
 * text (`CatalogModels`), parsed only when that provider is looked at: resolving a Claude model parses Anthropic's
 * few dozen rows, not the whole catalogue, and the text costs the garbage collector nothing.
 */
const CatalogProviderData = Schema.Struct({
  name: Schema.String,
  env: Schema.optionalKey(Schema.Array(Schema.String)),
  npm: Schema.optionalKey(Schema.String),
  api: Schema.optionalKey(Schema.String),
  models: Schema.String,
  /**
   * Its model ids, lower-cased, one per line: where a model asked for without its provider is searched for (see
   * `CatalogIndex`). The catalogue file (catalog-file.ts) has them; without them the models' text is searched.
   */
  ids: Schema.optionalKey(Schema.String)
})

/**
 * The catalogue as shipped (`snapshot.json`, in the CLI bundle `models-catalog.dat`) and kept in the data directory
 * (`models.dat`, see catalog-file.ts).
 */
export const CatalogData = Schema.Struct({
  columns: Schema.Array(Schema.String),
  providers: Schema.Record(Schema.String, CatalogProviderData)
})
/** The catalogue as shipped and kept. */
export type CatalogData = typeof CatalogData.Type

const decodeOuter = Schema.decodeUnknownSync(CatalogData)
const decodeModels = Schema.decodeUnknownSync(CatalogModels)

/**
 * Validates a stored catalogue, every provider's models included; throws when it does not fit. Each provider's ids
 * are made again from its models (a stored list is not taken as it is).
 */
export const decodeCatalogData = (input: unknown): CatalogData => {
  const data = decodeOuter(input)
  return {
    columns: data.columns,
    providers: Object.fromEntries(
      Object.entries(data.providers).map(([id, { ids: _stored, ...provider }]) => {
        const models = decodeModels(JSON.parse(provider.models))
        return [id, { ...provider, ids: catalogIds(models) }]
      })
    )
  }
}

/** A provider's model ids as `CatalogData`'s `ids` keeps them: lower-cased, one per line. */
export const catalogIds = (models: Readonly<Record<string, unknown>>): string =>
  Object.keys(models)
    .map((id) => id.toLowerCase())
    .join("\n")
/** Validates a download in models.dev's `api.json` shape; throws a `SchemaError` when it does not fit. */
export const decodeApiCatalog: (input: unknown) => ApiCatalog = Schema.decodeUnknownSync(ApiCatalog)

const bits = <K extends string>(
  values: Readonly<Record<K, boolean | undefined>>,
  weights: Readonly<Record<K, number>>
) => (Object.keys(weights) as Array<K>).reduce((sum, key) => sum + (values[key] ? weights[key] : 0), 0)

/**
 * models.dev's `api.json` as the catalogue keeps it (the same rows `scripts/models-snapshot.mjs` writes). An absent
 * `tool_call` or `temperature` counts as true, an absent `reasoning` or `attachment` as false.
 */
export const fromApi = (api: ApiCatalog): CatalogData => ({
  columns: [...COLUMNS],
  providers: Object.fromEntries(
    Object.entries(api).map(([id, { models, ...provider }]) => [
      id,
      {
        ...provider,
        models: JSON.stringify(
          Object.fromEntries(
            Object.entries(models).map(([modelID, m]): [string, CatalogRow] => [
              modelID,
              [
                m.name,
                m.limit?.context ?? 0,
                m.limit?.output ?? null,
                m.cost?.input ?? null,
                m.cost?.output ?? null,
                m.cost?.cache_read ?? null,
                m.cost?.cache_write ?? null,
                bits(
                  {
                    reasoning: m.reasoning,
                    toolCall: m.tool_call ?? true,
                    attachment: m.attachment,
                    temperature: m.temperature ?? true
                  },
                  FLAG
                ),
                INPUT_KINDS.reduce(
                  (sum, kind, i) => sum + ((m.modalities?.input ?? ["text"]).includes(kind) ? 2 ** i : 0),
                  0
                ),
                m.knowledge ?? null,
                m.release_date ?? null
              ]
            ])
          )
        )
      }
    ])
  )
})

/**
 * The catalogue shipped inside the package (`snapshot.json`, ~600 KB), imported on first use so that loading
 * `@lathe/core` never parses it. Written by `scripts/models-snapshot.mjs`; trusted as is.
 */
export const loadShippedCatalog = async (): Promise<CatalogData> =>
  (await import("./snapshot.json", { with: { type: "json" } })).default as CatalogData
