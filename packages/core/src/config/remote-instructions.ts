import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { isRemoteInstruction, MAX_RULES_FILE_BYTES, utf8Prefix } from "./rules-files.js"
import { sha1Hex } from "./sha1.js"

/**
 * Remote `instructions` entries: a URL in the config's `instructions` is fetched and its text sent like a rules file.
 * Only the person's own or a trusted project's config may name one (an untrusted project's URL entries are dropped in
 * `config-untrusted.ts`, with the usual notice): the text goes straight into the system prompt.
 */

export { isRemoteInstruction }

/** How long one fetch may take, redirects included: past it the cached copy (if any) is used. */
export const REMOTE_TIMEOUT_MS = 5_000

/**
 * How long a fetched copy is used without asking the server again: an hour. Within it a run reads the copy from the
 * data dir and never touches the network, so a fresh cache keeps the fetch off the first request's path.
 */
export const REMOTE_FRESH_MS = 60 * 60 * 1000

/** The most redirects followed; each target is checked like the URL itself. */
const MAX_REDIRECTS = 3

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "::1", "localhost"])

/**
 * Why a URL may not be fetched, or undefined when it may: `https://` anywhere, `http://` only to a loopback host
 * (127.0.0.1, ::1, localhost), where nothing crosses the network in the clear.
 */
export const remoteRefusal = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "it is not a valid URL"
  }
  if (parsed.protocol === "https:") return undefined
  if (parsed.protocol === "http:")
    return LOOPBACK.has(parsed.hostname)
      ? undefined
      : `http:// is allowed only for loopback hosts (127.0.0.1, ::1, localhost), not ${parsed.hostname}; use https://`
  return `only https:// URLs are fetched (http:// for loopback hosts), not ${parsed.protocol}//`
}

/** A fetched instruction as kept in the data dir. */
interface CachedInstruction {
  readonly url: string
  /** When it was fetched (ms since the epoch). */
  readonly fetched: number
  readonly text: string
  /** True when the server's answer went past {@link MAX_RULES_FILE_BYTES} and was cut. */
  readonly cut: boolean
}

/** Where a URL's copy is kept: `<data>/instructions/<sha1 of the URL>.json`. */
export const remoteCacheFile = (dataDir: string, url: string): string =>
  join(dataDir, "instructions", `${sha1Hex(url)}.json`)

const readCache = async (file: string, url: string): Promise<CachedInstruction | undefined> => {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as Partial<CachedInstruction>
    if (value.url !== url || typeof value.text !== "string" || typeof value.fetched !== "number") return undefined
    return { url, fetched: value.fetched, text: value.text, cut: value.cut === true }
  } catch {
    return undefined
  }
}

const writeCache = async (file: string, entry: CachedInstruction): Promise<void> => {
  try {
    await mkdir(dirname(file), { recursive: true })
    // Written aside then renamed: a run reading the cache meanwhile sees the old copy or the new, never half of one.
    const temp = `${file}.${process.pid}.tmp`
    await writeFile(temp, JSON.stringify(entry))
    await rename(temp, file)
  } catch {
    // A cache that cannot be written only costs a fetch next time.
  }
}

/** The body's first `max` bytes as text, reading no more than `max + 1` of it; `cut` when it goes on. */
const readCapped = async (response: Response, max: number): Promise<{ text: string; cut: boolean }> => {
  const chunks: Array<Uint8Array> = []
  let length = 0
  const reader = response.body?.getReader()
  if (reader === undefined) return { text: "", cut: false }
  try {
    while (length <= max) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      length += value.length
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return { text: utf8Prefix(Buffer.concat(chunks), max), cut: length > max }
}

/** Fetches a URL (each redirect checked by {@link remoteRefusal}); throws with a reason a person can read. */
const fetchText = async (url: string, signal: AbortSignal): Promise<{ text: string; cut: boolean }> => {
  let target = url
  for (let hop = 0; ; hop++) {
    const response = await fetch(target, {
      redirect: "manual",
      signal,
      headers: { accept: "text/markdown, text/plain;q=0.9, */*;q=0.1" }
    })
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel().catch(() => undefined)
      if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`)
      const next = new URL(location, target).href
      const refused = remoteRefusal(next)
      if (refused !== undefined) throw new Error(`it redirects to ${next}: ${refused}`)
      target = next
      continue
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined)
      throw new Error(`the server answered ${response.status}`)
    }
    return readCapped(response, MAX_RULES_FILE_BYTES)
  }
}

const reasonOf = (error: unknown, signal: AbortSignal): string => {
  if (signal.aborted) return `no answer within ${REMOTE_TIMEOUT_MS / 1000} s`
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
  return error instanceof Error ? `${error.message}${cause}` : String(error)
}

/** One remote instruction's text for this run, and what to tell the person about it. */
export interface RemoteInstruction {
  /** The text to send, undefined when there is none (refused, or never fetched and the fetch failed). */
  readonly text: string | undefined
  readonly notices: ReadonlyArray<string>
}

/** How {@link loadRemoteInstruction} reaches the world (the clock, for tests). */
export interface RemoteOptions {
  readonly dataDir: string
  readonly now?: () => number
}

const ago = (ms: number): string => {
  const minutes = Math.round(ms / 60_000)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.round(minutes / 60)
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`
}

/**
 * A remote instruction's text: the cached copy while it is fresh ({@link REMOTE_FRESH_MS}); else fetched (at most
 * {@link REMOTE_TIMEOUT_MS}, {@link MAX_RULES_FILE_BYTES} of it) and cached; when the fetch fails, the cached copy
 * however old, with a notice; with no copy, nothing, with a notice.
 */
export const loadRemoteInstruction = async (url: string, options: RemoteOptions): Promise<RemoteInstruction> => {
  const refused = remoteRefusal(url)
  if (refused !== undefined) return { text: undefined, notices: [`Instructions ${url} refused: ${refused}.`] }
  const now = options.now ?? Date.now
  const file = remoteCacheFile(options.dataDir, url)
  const cached = await readCache(file, url)
  const cutNotice = (entry: { cut: boolean }) =>
    entry.cut
      ? [`Instructions ${url} are over ${MAX_RULES_FILE_BYTES} bytes: only the first 256 KiB are sent to the model.`]
      : []
  if (cached !== undefined && now() - cached.fetched < REMOTE_FRESH_MS)
    return { text: cached.text, notices: cutNotice(cached) }
  const signal = AbortSignal.timeout(REMOTE_TIMEOUT_MS)
  try {
    const fetched = await fetchText(url, signal)
    const entry: CachedInstruction = { url, fetched: now(), text: fetched.text.trim(), cut: fetched.cut }
    await writeCache(file, entry)
    return { text: entry.text, notices: cutNotice(entry) }
  } catch (error) {
    const reason = reasonOf(error, signal)
    if (cached === undefined)
      return { text: undefined, notices: [`Instructions ${url} could not be fetched (${reason}): left out.`] }
    return {
      text: cached.text,
      notices: [
        `Instructions ${url} could not be fetched (${reason}): using the copy fetched ${ago(now() - cached.fetched)} ago.`,
        ...cutNotice(cached)
      ]
    }
  }
}
