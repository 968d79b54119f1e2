import { closeSync, fstatSync, readSync } from "node:fs"
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

/** Bytes of the catalogue's data (after the first line): `length` of them at `offset`. */
type ReadRange = (offset: number, length: number) => Buffer

/**
 * The catalogue in `bytes` (the catalogue file format), each provider's `models` and `ids` decoded from `bytes` on
 * first use. Throws when the first line is not the format's, or a range falls outside the file (a file cut short);
 * the rows themselves are not validated here (see `decodeCatalogData`).
 */
export const readCatalogFile = (bytes: Buffer): CatalogData => {
  const end = bytes.indexOf(NEWLINE)
  if (end < 0) throw new Error("the catalogue file has no first line")
  const start = end + 1
  return fromFirstLine(bytes.toString("utf8", 0, end), bytes.length - start, (offset, length) =>
    bytes.subarray(start + offset, start + offset + length)
  )
}

/** How much of a catalogue file the first read takes: its first line (~26 KiB) and more. */
const FIRST_READ = 64 * 1024

/**
 * The catalogue in the file open as `fd` (the catalogue file format), as `readCatalogFile` reads it, reading only what
 * is looked at: the first line now, the ids' bytes at the first search, a provider's rows when the catalogue first looks
 * at that provider (~10 KiB, where the whole file is ~670 KiB). Each is read at its place in this open file: a copy
 * renamed over the path meanwhile changes nothing read. `fd` is the catalogue's from here on: closed when nothing can
 * read it any more (every provider decoded, or the catalogue gone), or now if this throws.
 */
export const readCatalogFd = (fd: number): CatalogData => {
  try {
    const size = fstatSync(fd).size
    const readAt = (position: number, length: number): Buffer => {
      const buffer = Buffer.allocUnsafe(length)
      let done = 0
      while (done < length) {
        const got = readSync(fd, buffer, done, length - done, position + done)
        if (got === 0)
          throw new Error(`the catalogue file ends at byte ${position + done}, before ${position + length}`)
        done += got
      }
      return buffer
    }
    let head = readAt(0, Math.min(size, FIRST_READ))
    let end = head.indexOf(NEWLINE)
    while (end < 0 && head.length < size) {
      head = Buffer.concat([head, readAt(head.length, Math.min(size - head.length, FIRST_READ))])
      end = head.indexOf(NEWLINE)
    }
    if (end < 0) throw new Error("the catalogue file has no first line")
    const start = end + 1
    const read: ReadRange = (offset, length) => readAt(start + offset, length)
    const data = fromFirstLine(head.toString("utf8", 0, end), size - start, read)
    // Everything that can still read the file holds `read`: once nothing does, the file is closed.
    closeWhenUnreachable.register(read, fd)
    return data
  } catch (error) {
    closeSync(fd)
    throw error
  }
}

const closeWhenUnreachable = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd)
  } catch {
    // already closed (the process is ending)
  }
})

/** The catalogue whose first line is `text` and whose `size` bytes after it `read` gives. */
const fromFirstLine = (text: string, size: number, read: ReadRange): CatalogData => {
  const head = JSON.parse(text) as { columns?: unknown; providers?: unknown; bytes?: unknown }
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
    providers[id] = lazyProvider(details, read, models, ids)
    idsFrom = Math.min(idsFrom, ids[0])
    idsTo = Math.max(idsTo, ids[0] + ids[1])
  }
  const data: CatalogData = { columns: head.columns as CatalogData["columns"], providers }
  // Every provider's ids lie in this run of bytes (in a file this module wrote before they were written last, the
  // run also takes in models' rows: more to search, and matches that are not ids, never a miss).
  const from = Math.min(idsFrom, idsTo)
  let ids: Buffer | undefined
  idSearch.set(data, (search) => {
    ids ??= read(from, idsTo - from)
    return ids.includes(search)
  })
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

/**
 * A provider with `details` as they are and its `models` and `ids` as the text of their ranges, read and decoded on
 * first use, then kept as plain values (an object literal with accessors: defining ~260 of them one by one took a
 * start ~1 ms).
 */
const lazyProvider = (
  details: Omit<FileProvider, "models" | "ids">,
  read: ReadRange,
  models: readonly [number, number],
  ids: readonly [number, number]
): CatalogData["providers"][string] => {
  const keep = (target: object, key: "models" | "ids", text: string): string => {
    Object.defineProperty(target, key, { value: text, enumerable: true, configurable: true, writable: false })
    return text
  }
  return {
    ...details,
    get models(): string {
      return keep(this, "models", read(models[0], models[1]).toString("utf8"))
    },
    get ids(): string {
      return keep(this, "ids", read(ids[0], ids[1]).toString("utf8"))
    }
  }
}
