import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type CatalogData, decodeApiCatalog, decodeCatalogData, fromApi } from "./models-dev.js"

/** Where the catalogue is refreshed from unless `LATHE_MODELS_URL` or config `models.url` says otherwise. */
export const DEFAULT_MODELS_URL = "https://models.dev/api.json"
/** A refresh is tried at most this often (a day), whether the last one worked or not. */
export const REFRESH_INTERVAL_MS = 24 * 60 * 60 * 1000
/** How long one download may take. */
const TIMEOUT_MS = 15_000
/** The largest answer read (models.dev's full api.json is a few MB). */
const MAX_BYTES = 64 * 1024 * 1024

/** The refreshed catalogue in the data directory (validated, only the fields Lathe reads). */
export const catalogFile = (dataDir: string): string => join(dataDir, "models.json")
/**
 * When a refresh last ended, and the SHA-256 of the `models.json` it validated and wrote:
 * `{ "tried": <epoch ms>, "sha256": "<hex>" }`.
 */
export const refreshStampFile = (dataDir: string): string => join(dataDir, "models-refresh.json")

interface Stamp {
  readonly tried: number
  readonly sha256?: string
}

const NEVER: Stamp = { tried: Number.NEGATIVE_INFINITY }

// node:crypto and node:http(s) load only when a catalogue file or download needs them, so start-up never pays for
// them; through process.getBuiltinModule, not import(): an ES import of node:http evaluates its ES facade, which
// loads undici (~35 ms).
const builtin = <T>(id: string): T => process.getBuiltinModule(id) as T
const sha256 = async (text: string) =>
  builtin<typeof import("node:crypto")>("node:crypto").createHash("sha256").update(text).digest("hex")

const readStamp = async (dataDir: string): Promise<Stamp> => {
  try {
    const stamp: unknown = JSON.parse(await readFile(refreshStampFile(dataDir), "utf8"))
    if (typeof stamp !== "object" || stamp === null) return NEVER
    const { tried, sha256: hash } = stamp as { tried?: unknown; sha256?: unknown }
    return {
      tried: typeof tried === "number" && Number.isFinite(tried) ? tried : NEVER.tried,
      ...(typeof hash === "string" ? { sha256: hash } : {})
    }
  } catch {
    return NEVER
  }
}

/**
 * The data-dir copy, or `undefined` when there is none or it does not validate (the shipped one is used then). The
 * copy a refresh wrote is taken as is when its hash is the one the refresh recorded (it was validated before it was
 * written, and a full validation costs start-up tens of milliseconds); any other content is validated in full.
 */
export const readCachedCatalog = async (dataDir: string): Promise<CatalogData | undefined> => {
  try {
    const [text, stamp] = await Promise.all([readFile(catalogFile(dataDir), "utf8"), readStamp(dataDir)])
    const parsed: unknown = JSON.parse(text)
    return stamp.sha256 === (await sha256(text)) ? (parsed as CatalogData) : decodeCatalogData(parsed)
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
    const text = JSON.stringify(data)
    await mkdir(dataDir, { recursive: true })
    const partial = `${file}.${process.pid}.tmp`
    await writeFile(partial, text)
    await rename(partial, file)
    await record({ tried: now, sha256: await sha256(text) })
    return { status: "updated", data }
  } catch (error) {
    await mkdir(dataDir, { recursive: true }).catch(() => undefined)
    await record({ ...stamp, tried: now })
    return { status: "failed", reason: error instanceof Error ? error.message : String(error) }
  }
}
