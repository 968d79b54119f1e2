import { type CatalogData, catalogIds } from "./models-dev.js"

/**
 * The catalogue as one file, read whole and decoded lazily: the CLI bundle ships it (`models-catalog.dat`, written by
 * `scripts/bundle.mjs` in this format) and a refresh keeps it in the data directory (`models.dat`).
 *
 * A first line of JSON holds the columns and each provider's details, with its `models` and `ids` as `[offset,
 * length]` in bytes, counted from the byte after that line. The bytes there are the provider's models as JSON text
 * (`CatalogModels`), and its model ids lower-cased, one per line. Reading parses only the first line (~20 KiB): a
 * provider's models become a string when the catalogue first looks at that provider (resolving a Claude model decodes
 * Anthropic's rows, not the other ~540 KiB), and a model no provider is asked for by name is searched for in the
 * lower-cased ids (~110 KiB), never in the rows, and is looked for in the ids' bytes before any of them becomes a string
 * (`mayHoldId`: a model no provider lists, a local one, costs one search). As JSON with every provider's models in a string (the format before),
 * a start decoded and unescaped all of it, and the day's refreshed copy was also hashed to be trusted: ~30 ms more to
 * the first request than the shipped catalogue.
 */

/** A provider's details in the first line: as in `CatalogData`, with `models` and `ids` as `[offset, length]`. */
interface FileProvider {
  readonly name: string
  readonly env?: ReadonlyArray<string>
  readonly npm?: string
  readonly api?: string
  readonly models: readonly [number, number]
  readonly ids: readonly [number, number]
}

const NEWLINE = 10

/** `data` in the catalogue file format. */
export const writeCatalogFile = (data: CatalogData): Buffer => {
  const parts: Array<Buffer> = []
  let offset = 0
  const place = (text: string): readonly [number, number] => {
    const bytes = Buffer.from(text, "utf8")
    parts.push(bytes)
    offset += bytes.length
    return [offset - bytes.length, bytes.length]
  }
  // Every provider's models first, then every provider's ids: the ids are one run of bytes (see `mayHoldId`).
  const placed = Object.entries(data.providers).map(([id, provider]) => [id, provider, place(provider.models)] as const)
  const providers: Record<string, FileProvider> = {}
  for (const [id, { models, ids: _given, ...rest }, range] of placed)
    providers[id] = { ...rest, models: range, ids: place(catalogIds(JSON.parse(models) as Record<string, unknown>)) }
  const head = Buffer.from(`${JSON.stringify({ columns: data.columns, providers, bytes: offset })}\n`, "utf8")
  return Buffer.concat([head, ...parts])
}

const isRange = (value: unknown, size: number): value is readonly [number, number] =>
  Array.isArray(value) &&
  value.length === 2 &&
  Number.isSafeInteger(value[0]) &&
  Number.isSafeInteger(value[1]) &&
  value[0] >= 0 &&
  value[1] >= 0 &&
  value[0] + value[1] <= size

/**
 * The catalogue in `bytes` (the catalogue file format), each provider's `models` and `ids` decoded from `bytes` on
 * first use. Throws when the first line is not the format's, or a range falls outside the file (a file cut short);
 * the rows themselves are not validated here (see `decodeCatalogData`).
 */
export const readCatalogFile = (bytes: Buffer): CatalogData => {
  const end = bytes.indexOf(NEWLINE)
  if (end < 0) throw new Error("the catalogue file has no first line")
  const start = end + 1
  const head = JSON.parse(bytes.toString("utf8", 0, end)) as {
    columns?: unknown
    providers?: unknown
    bytes?: unknown
  }
  const size = bytes.length - start
  if (head.bytes !== size)
    throw new Error(`the catalogue file holds ${size} bytes after its first line, not ${head.bytes}`)
  if (!Array.isArray(head.columns) || typeof head.providers !== "object" || head.providers === null)
    throw new Error("the catalogue file's first line has no columns or providers")
  const providers: Record<string, CatalogData["providers"][string]> = {}
  let idsFrom = size
  let idsTo = 0
  for (const [id, raw] of Object.entries(head.providers as Record<string, FileProvider>)) {
    if (typeof raw !== "object" || raw === null || !isRange(raw.models, size) || !isRange(raw.ids, size))
      throw new Error(`the catalogue file's provider ${JSON.stringify(id)} has no models or ids range`)
    const { models, ids, ...details } = raw
    const provider = { ...details } as CatalogData["providers"][string]
    lazyText(provider, "models", bytes, start, models)
    lazyText(provider, "ids", bytes, start, ids)
    providers[id] = provider
    idsFrom = Math.min(idsFrom, ids[0])
    idsTo = Math.max(idsTo, ids[0] + ids[1])
  }
  const data: CatalogData = { columns: head.columns as CatalogData["columns"], providers }
  // Every provider's ids lie in this run of bytes (in a file this module wrote before they were written last, the
  // run also takes in models' rows: more to search, and matches that are not ids, never a miss).
  const ids = bytes.subarray(start + Math.min(idsFrom, idsTo), start + idsTo)
  idSearch.set(data, (text) => ids.includes(text))
  return data
}

/** For each catalogue read from a file: whether a text occurs in the bytes of its providers' ids. */
const idSearch = new WeakMap<CatalogData, (text: string) => boolean>()

/**
 * Whether some provider's ids (lower-cased, as `CatalogData`'s `ids` keep them) may contain `text`: false only when
 * none does. A catalogue read from a file answers from its bytes, without making a string of any provider's ids; any
 * other answers true (search its ids).
 */
export const mayHoldId = (data: CatalogData, text: string): boolean => idSearch.get(data)?.(text) ?? true

/** Defines `key` on `target` as the text of `range` (from `start`), decoded on first read, then kept. */
const lazyText = (
  target: object,
  key: "models" | "ids",
  bytes: Buffer,
  start: number,
  [offset, length]: readonly [number, number]
): void => {
  Object.defineProperty(target, key, {
    configurable: true,
    enumerable: true,
    get() {
      const text = bytes.toString("utf8", start + offset, start + offset + length)
      Object.defineProperty(target, key, { value: text, enumerable: true, configurable: true, writable: false })
      return text
    }
  })
}
