import { closeSync, fstatSync, openSync, type Stats } from "node:fs"
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { readCatalogFd, writeCatalogFile } from "./catalog-file.js"
import { type CatalogData, decodeApiCatalog, decodeCatalogData, fromApi } from "./models-dev.js"

/** Where the catalogue is refreshed from unless `LATHE_MODELS_URL` or config `models.url` says otherwise. */
export const DEFAULT_MODELS_URL = "https://models.dev/api.json"
/** A refresh is tried at most this often (a day), whether the last one worked or not. */
export const REFRESH_INTERVAL_MS = 24 * 60 * 60 * 1000
/** How long one download may take. */
const TIMEOUT_MS = 15_000
/** The largest answer read (models.dev's full api.json is a few MB). */
const MAX_BYTES = 64 * 1024 * 1024

/**
 * The refreshed catalogue in the data directory (validated, only the fields Lathe reads), in the catalogue file
 * format (catalog-file.ts).
 */
export const catalogFile = (dataDir: string): string => join(dataDir, "models.dat")
/** Where versions before the catalogue file format kept it (JSON); removed by the next refresh. */
const formerCatalogFile = (dataDir: string): string => join(dataDir, "models.json")
/**
 * When a refresh last ended, and which `models.dat` it validated and wrote (its size, modification time and inode
 * once renamed into place): `{ "tried": <epoch ms>, "file": { "size", "mtimeMs", "ino" } }`.
 */
export const refreshStampFile = (dataDir: string): string => join(dataDir, "models-refresh.json")

interface Written {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
}

interface Stamp {
  readonly tried: number
  readonly file?: Written
}

const NEVER: Stamp = { tried: Number.NEGATIVE_INFINITY }

// node:http(s) loads only when a download needs it, so start-up never pays for it; through
// process.getBuiltinModule, not import(): an ES import of node:http evaluates its ES facade, which loads undici
// (~35 ms).
const builtin = <T>(id: string): T => process.getBuiltinModule(id) as T

const isWritten = (value: unknown): value is Written => {
  if (typeof value !== "object" || value === null) return false
  const { size, mtimeMs, ino } = value as Record<string, unknown>
  return [size, mtimeMs, ino].every((n) => typeof n === "number" && Number.isFinite(n))
}

const sameFile = (a: Written | undefined, b: Written): boolean =>
  a !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

const readStamp = async (dataDir: string): Promise<Stamp> => {
  try {
    const stamp: unknown = JSON.parse(await readFile(refreshStampFile(dataDir), "utf8"))
    if (typeof stamp !== "object" || stamp === null) return NEVER
    const { tried, file } = stamp as { tried?: unknown; file?: unknown }
    return {
      tried: typeof tried === "number" && Number.isFinite(tried) ? tried : NEVER.tried,
      ...(isWritten(file) ? { file } : {})
    }
  } catch {
    return NEVER
  }
}

/**
 * The data-dir copy, or `undefined` when there is none or it does not validate (the shipped one is used then). The
 * file the last refresh wrote (same size, modification time and inode as it recorded) is taken as it is, each
 * provider's models decoded when first looked at: it was validated before it was written, and validating ~5,000 rows
 * costs start-up tens of milliseconds. Any other content is validated in full.
 */
export const readCachedCatalog = async (dataDir: string): Promise<CatalogData | undefined> => {
  try {
    const stamp = readStamp(dataDir)
    // One open file for its facts and its bytes: a refresh renaming a new copy into place meanwhile changes neither.
    const fd = openSync(catalogFile(dataDir), "r")
    let info: Stats
    try {
      info = fstatSync(fd)
    } catch (error) {
      closeSync(fd)
      throw error
    }
    // The catalogue reads the rest of the file from `fd` as it is looked at (and closes it); a copy that is not the
    // one the refresh recorded is read and validated whole now.
    const data = readCatalogFd(fd)
    return sameFile((await stamp).file, info) ? data : decodeCatalogData(data)
  } catch {
    return undefined
  }
}

/**
 * GET `url` as text; fails on a non-2xx status, after `TIMEOUT_MS`, or past `MAX_BYTES`. In the `background`, the
 * socket is unref'd, so a slow download never keeps a finished run's process alive.
 */
const download = async (url: string, background: boolean): Promise<string> => {
  const target = new URL(url)
  if (target.protocol !== "http:" && target.protocol !== "https:") throw new Error(`${url} is not an http(s) URL`)
  const { request: send } =
    target.protocol === "https:"
      ? builtin<typeof import("node:https")>("node:https")
      : builtin<typeof import("node:http")>("node:http")
  return new Promise((resolve, reject) => {
    const req = send(target, { method: "GET", headers: { accept: "application/json" }, timeout: TIMEOUT_MS }, (res) => {
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
        res.resume()
        reject(new Error(`${url} answered HTTP ${res.statusCode}`))
        return
      }
      const chunks: Array<Buffer> = []
      let size = 0
      res.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_BYTES) req.destroy(new Error(`${url} sent more than ${MAX_BYTES} bytes`))
        else chunks.push(chunk)
      })
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      res.on("error", reject)
    })
    if (background) req.on("socket", (socket) => socket.unref())
    req.on("timeout", () => req.destroy(new Error(`${url} did not answer within ${TIMEOUT_MS / 1000} s`)))
    req.on("error", reject)
    req.end()
  })
}

/** What one refresh did. */
export type RefreshOutcome =
  | { readonly status: "updated"; readonly data: CatalogData }
  /** Tried less than a day ago; nothing was sent. */
  | { readonly status: "recent" }
  | { readonly status: "failed"; readonly reason: string }

/**
 * One refresh: unless `force`, nothing when the last try ended under a day before `now`; else fetches `url`
 * (models.dev's api.json shape), validates it, writes the fields Lathe reads to `catalogFile(dataDir)` (write then
 * rename, so a reader never sees half a file) and records the try. A failure changes no catalogue file.
 */
export const refreshCatalog = async (options: {
  readonly dataDir: string
  readonly url: string
  readonly now: number
  readonly force?: boolean
  /** A refresh nobody waits for: it must not keep the process alive (see `download`). */
  readonly background?: boolean
}): Promise<RefreshOutcome> => {
  const { dataDir, url, now } = options
  const stamp = await readStamp(dataDir)
  if (options.force !== true && now - stamp.tried < REFRESH_INTERVAL_MS) return { status: "recent" }
  // The try is recorded when it ends: one cut short by the process exiting is tried again by the next run.
  const record = (fields: Stamp) => writeFile(refreshStampFile(dataDir), JSON.stringify(fields)).catch(() => undefined)
  try {
    const data = fromApi(decodeApiCatalog(JSON.parse(await download(url, options.background === true))))
    if (Object.keys(data.providers).length === 0) throw new Error(`${url} lists no provider`)
    const file = catalogFile(dataDir)
    await mkdir(dataDir, { recursive: true })
    const partial = `${file}.${process.pid}.tmp`
    await writeFile(partial, writeCatalogFile(data))
    await rename(partial, file)
    const { size, mtimeMs, ino } = await stat(file)
    await record({ tried: now, file: { size, mtimeMs, ino } })
    await rm(formerCatalogFile(dataDir), { force: true })
    return { status: "updated", data }
  } catch (error) {
    await mkdir(dataDir, { recursive: true }).catch(() => undefined)
    await record({ ...stamp, tried: now })
    return { status: "failed", reason: error instanceof Error ? error.message : String(error) }
  }
}
