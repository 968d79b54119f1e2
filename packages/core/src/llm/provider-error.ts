import { ProviderErrorReason } from "@lathe/plugin/schema"
import { APICallError, StreamProviderError } from "ai"
import { Schema } from "effect"
import { z } from "zod"
import { secretMasker } from "../config/secret-mask.js"
import { closeMatches } from "../provider/close-match.js"
import { keyHintFor } from "../provider/key-hint.js"
import { ProviderPackageMissing } from "../provider/sdk-import.js"

/** One error for every provider failure, with a tagged reason so nothing string-matches messages. */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  providerID: Schema.String,
  modelID: Schema.String,
  reason: ProviderErrorReason,
  message: Schema.String
}) {}

/**
 * The model a run needs is not set up (no model, no key, no URL); the message lists the three ways to set one up. With
 * `untrusted`, the settings were there but in an untrusted project's config, which ignored them: the message names
 * them and says how to trust the folder, instead of the three ways.
 */
export class ProviderNotConfigured extends Schema.TaggedError<ProviderNotConfigured>()("ProviderNotConfigured", {
  message: Schema.String,
  untrusted: Schema.optionalKey(Schema.Boolean)
}) {}

/** A model reference that names an unknown provider or is malformed. */
export class ModelNotFound extends Schema.TaggedError<ModelNotFound>()("ModelNotFound", {
  model: Schema.String,
  message: Schema.String
}) {}

/** Raised inside a model stream that ended without its `finish` part: classified as `StreamCut`. */
export class StreamCutError extends Error {
  /** @param detail what was cut, for the person reading the message. */
  constructor(detail = "the model stream ended before its finish event") {
    super(detail)
    this.name = "StreamCutError"
  }
}

/** What `toProviderError` may know beyond the error itself. */
export interface ClassifyOptions {
  /** The current time in ms (from `Clock`), for an HTTP-date `retry-after`. Defaults to 0: dates count as past. */
  readonly now?: number
  /** How a person fixes a rejected key, e.g. `set ANTHROPIC_API_KEY`. Defaults to a hint derived from the provider id. */
  readonly keyHint?: string
  /**
   * Which key was sent, in words and never the key itself ("the key from OPENAI_API_KEY", "the key stored by `lathe
   * auth login openai` (…/auth.json)", "the apiKey in /home/me/.config/lathe/lathe.json"): a rejected key's message
   * names it, so the person fixes that one.
   */
  readonly keyFrom?: string
  /** The endpoint, for failures that do not carry their own URL. */
  readonly url?: string
  /** The request's abort signal fired: whatever the error, the reason is `Aborted`. */
  readonly aborted?: boolean
  /** What to check when the endpoint cannot be reached ("is `ollama serve` running?"), the provider's `hints.connect`. */
  readonly connectHint?: string
  /**
   * The model ids the provider is known to serve (its catalogue rows, its config entries), read only when the provider
   * says the model does not exist: the message then names up to three close to the one asked for.
   */
  readonly models?: () => Iterable<string>
  /**
   * The credentials Lathe holds (provider keys and headers, `{env:}` values; see `secretValues`), read only when a
   * failure is classified: they are masked in the body before it is shortened and in the message, together with
   * credential shapes (an echoed `Authorization` header, `?key=`), whether or not they are listed.
   */
  readonly secrets?: () => ReadonlyArray<string>
}

const headerOf = (headers: Readonly<Record<string, string | undefined>> | undefined, name: string) => {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return value?.trim()
  return undefined
}

const NUMBER = /^\d+(\.\d+)?$/
// IMF-fixdate, the HTTP-date form servers send: `Wed, 21 Oct 2026 07:28:00 GMT`.
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

/**
 * The server's wait hint in ms: `retry-after-ms`, else `retry-after` as seconds or as an HTTP date (a past date
 * is 0). Anything else, or no header, is `undefined`.
 */
export const parseRetryAfter = (
  headers: Readonly<Record<string, string | undefined>> | undefined,
  now: number
): number | undefined => {
  const ms = headerOf(headers, "retry-after-ms")
  if (ms !== undefined && NUMBER.test(ms)) return Math.ceil(Number(ms))
  const after = headerOf(headers, "retry-after")
  if (after === undefined) return undefined
  if (NUMBER.test(after)) return Math.ceil(Number(after) * 1000)
  if (!HTTP_DATE.test(after)) return undefined
  const at = Date.parse(after)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

const ErrorBody = z.object({
  error: z.union([z.string(), z.object({ message: z.string().optional(), type: z.string().optional() })]).optional(),
  message: z.string().optional(),
  type: z.string().optional()
})

/** `text` ending as a sentence: a full stop added unless it already ends with one (or with ! or ?). */
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`)

/** `text` with a capital first letter. */
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** The provider's own words from an error body (JSON `error.message` or `message`, else the text), shortened. */
const detailOf = (body: string | undefined, fallback: string): { text: string; type: string } => {
  let parsed: z.infer<typeof ErrorBody> | undefined
  try {
    const result = ErrorBody.safeParse(JSON.parse(body ?? ""))
    if (result.success) parsed = result.data
  } catch {}
  const inner = typeof parsed?.error === "object" ? parsed.error : undefined
  const text = (typeof parsed?.error === "string" ? parsed.error : inner?.message) ?? parsed?.message ?? body ?? ""
  const short = text.trim().length > 0 ? text.trim().slice(0, 300) : fallback
  return { text: short, type: `${inner?.type ?? ""} ${parsed?.type ?? ""}`.trim() }
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET"
])
const NETWORK_TEXT = /fetch failed|terminated|socket hang up|other side closed|network|ECONN|EPIPE/i
const OVERFLOW_TEXT =
  /context[_ ]length|context window|too many tokens|maximum context|prompt is too long|prompt too long|input is too long|exceeds the (maximum|max|context)|reduce the length/i

/** The first network-level cause in an error's `cause` chain, as `code: message`. */
const networkCause = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === "string" && NETWORK_CODES.has(code))
      return code === "ECONNREFUSED" ? "connection refused" : code
    if (e instanceof StreamCutError) return e.message
    if (NETWORK_TEXT.test(e.message) && !APICallError.isInstance(e)) return e.message
  }
  return undefined
}

/** The default way to fix a rejected key, by provider id (and type, for a custom id): see `provider/key-hint.ts`. */
export { keyHintFor }

/** A provider's words for "no such model" (OpenAI's `model_not_found`, Anthropic's `not_found_error`, Ollama's). */
const MODEL_NOT_FOUND =
  /model_not_found|not_found_error|model[^.]{0,80}(not found|does not exist|not exist|unknown|not supported)|unknown model|invalid model|no such model/i

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`

interface HttpFailure {
  readonly status: number
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>> | undefined
  readonly body: string | undefined
  readonly type: string
  readonly message: string
  /** Reported inside a started stream rather than as the HTTP response status. */
  readonly inBand?: boolean
}

/** Classifies an HTTP failure (or an in-band error that carries a status) by status, type and body. */
/**
 * What to check after a 404: the model as the server knows it, on the provider as the person configured it (the
 * provider's key in lathe.json, or LATHE_BASE_URL for the one the environment configures, which Lathe calls "env").
 */
const notFoundHint = (providerID: string, modelID: string, url: string): string => {
  const at = url ? ` (${url})` : ""
  return providerID === "env"
    ? `Check that the server at LATHE_BASE_URL${at} serves a model named "${modelID}" (LATHE_MODEL).`
    : `Check that provider "${providerID}"${at} serves a model named "${modelID}".`
}

const fromStatus = (f: HttpFailure, ref: string, providerID: string, modelID: string, options: ClassifyOptions) => {
  const detail = detailOf(f.body, f.message)
  const type = `${f.type} ${detail.type}`
  const where = f.url ? ` at ${f.url}` : ""
  const retryAfterMs = parseRetryAfter(f.headers, options.now ?? 0)
  const after = retryAfterMs === undefined ? {} : { retryAfterMs }
  const wait = retryAfterMs === undefined ? "" : ` (the server asks to wait ${seconds(retryAfterMs)})`
  const make = (reason: ProviderErrorReason, message: string) => ({ reason, message })
  const http = f.inBand ? "mid-stream" : `HTTP ${f.status}`
  if (f.status === 529 || /overloaded/i.test(type))
    return make({ _tag: "Overloaded", ...after }, `${ref} is overloaded (${http})${wait}: ${sentence(detail.text)}`)
  // OpenAI answers 429 both for a rate limit and for an account without quota; only the first heals by waiting
  // (retrying the second kept a person waiting two and a half minutes for "check your plan and billing").
  if (/insufficient_quota/i.test(type))
    return make(
      { _tag: "QuotaExceeded" },
      `${ref} refused the request: the account has no quota left (${http}): ${sentence(detail.text)} Check the plan and ` +
        `billing of the account this key belongs to (provider "${providerID}"), or switch to another model.`
    )
  if (f.status === 429 || /rate_limit/i.test(type))
    return make(
      { _tag: "RateLimited", ...after },
      `${ref} is rate-limited (${http})${wait}: ${sentence(detail.text)} If it keeps happening, wait a minute or raise ` +
        "your plan's limits."
    )
  if (f.status >= 500)
    return make(
      { _tag: "ServerError", status: f.status, ...after },
      `${ref} failed (${http})${where}: ${sentence(detail.text)} The fault is on the provider's side.`
    )
  if (f.status === 401 || f.status === 403 || /authentication|permission_error/i.test(type)) {
    const key = options.keyFrom ?? "the API key"
    const what = f.status === 403 ? `refused access with ${key}` : `rejected ${key}`
    const hint = options.keyHint ?? keyHintFor(providerID)
    return make(
      { _tag: "Auth" },
      `Provider "${providerID}" ${what} (${http})${where}: ${sentence(detail.text)} To fix it, ${hint}.`
    )
  }
  if ([400, 413, 422].includes(f.status) && OVERFLOW_TEXT.test(`${detail.text} ${f.body ?? ""} ${type}`))
    return make(
      { _tag: "ContextOverflow" },
      `The conversation is too long for ${ref}'s context window (${http}: ${detail.text}). Compact the ` +
        "session or switch to a model with a larger context."
    )
  const unknownModel = f.status === 404 || MODEL_NOT_FOUND.test(`${detail.text} ${type}`)
  const notFound = f.status === 404 ? ` ${notFoundHint(providerID, modelID, options.url || f.url)}` : ""
  const close = unknownModel && options.models ? closeMatches(modelID, options.models()) : []
  const didYouMean = close.length > 0 ? ` Did you mean ${close.map((id) => `${providerID}/${id}`).join(", ")}?` : ""
  // LATHE_BASE_URL's server is named as the person set it, never by Lathe's id for it ("env").
  const who = f.status === 404 && providerID === "env" ? "The server at LATHE_BASE_URL" : ref
  return make(
    { _tag: "InvalidRequest", status: f.status },
    `${who} rejected the request (${http})${where}: ${sentence(detail.text)}${notFound}${didYouMean}`
  )
}

/**
 * What an in-band error's type or code stands for, as the HTTP status its twin answers with, first match wins: a
 * server (vLLM, llama.cpp, a gateway) that reports `too_many_requests` or `no_kv_space` inside a 200 stream says the
 * same as a 429 or a 529 would, and is classified and retried alike.
 */
const IN_BAND_TYPES: ReadonlyArray<readonly [RegExp, number]> = [
  [/insufficient_quota/i, 429],
  [/rate_?limit|too_many_requests|throttl/i, 429],
  [/overload|no_kv_space|kv_cache|capacity|server_busy/i, 529],
  [/context_length|context_window|too_many_tokens|prompt_too_long/i, 413],
  [/authentication|invalid_api_key|unauthori[sz]ed/i, 401],
  [/permission_denied|forbidden/i, 403],
  [/unavailable|bad_gateway|gateway_timeout/i, 503],
  [/server_error|internal|api_error|timeout|timed_out/i, 500]
]

/** The same, for an in-band error that names no type: a few phrases of its message. */
const IN_BAND_TEXT: ReadonlyArray<readonly [RegExp, number]> = [
  [/too many requests|rate[ -]?limit/i, 429],
  [/overloaded|no kv (cache )?space|out of kv/i, 529],
  [OVERFLOW_TEXT, 413],
  [/internal server error|service unavailable/i, 500]
]

/** The HTTP status an in-band error with no status of its own stands for, if its type, code or message says. */
const inBandStatus = (type: string, message: string): number | undefined =>
  (IN_BAND_TYPES.find(([pattern]) => pattern.test(type)) ??
    IN_BAND_TEXT.find(([pattern]) => pattern.test(message)))?.[1]

/**
 * Turns anything a provider call can throw or report into one `ProviderError` with a classified `reason`:
 * HTTP 429 → RateLimited (with the server's `retryAfterMs`) unless it says `insufficient_quota` (→ QuotaExceeded, not
 * retried), 529/"overloaded" → Overloaded, other 5xx →
 * ServerError, 401/403 → Auth, 400/413/422 saying the prompt is too long → ContextOverflow, other 4xx →
 * InvalidRequest; an error reported inside a started stream without a status is classified as its HTTP twin, by its
 * type or code (`too_many_requests` → RateLimited, `no_kv_space` → Overloaded, `server_error` → ServerError, …); a
 * refused, reset or cut connection → StreamCut (`unreachable` when no connection was made: refused,
 * or an unknown host), an aborted request → Aborted, a provider SDK package that is not installed → PackageMissing
 * (naming the package and `npm i <package>`; not retried). Messages say what happened and how to fix it, not whether Lathe
 * retries: the retry status says that, and a final error says how many attempts were made. Total: never throws.
 */
export const toProviderError = (
  error: unknown,
  providerID: string,
  modelID: string,
  options: ClassifyOptions = {}
): ProviderError => {
  if (error instanceof ProviderError) return error
  const ref = `${providerID}/${modelID}`
  // A server may echo the request's key (a 401 quoting the Authorization header): masked before anything is shortened,
  // printed or stored.
  const mask = secretMasker(options.secrets?.() ?? [], { shapes: true })
  const done = (r: { reason: ProviderErrorReason; message: string }) =>
    new ProviderError({ providerID, modelID, reason: r.reason, message: mask(r.message) })
  if (error instanceof ProviderPackageMissing)
    return done({ reason: { _tag: "PackageMissing", package: error.packageName }, message: error.message })
  const isAbort = error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")
  if (options.aborted || isAbort)
    return done({ reason: { _tag: "Aborted" }, message: `The request to ${ref} was cancelled.` })
  const url = APICallError.isInstance(error) ? error.url : (options.url ?? "")
  const status = APICallError.isInstance(error) ? error.statusCode : undefined
  const cut = networkCause(error)
  if ((status === undefined || status < 300) && cut !== undefined) {
    const connect = /refused|ENOTFOUND|EAI_AGAIN/.test(cut) || /Cannot connect/i.test(String(error))
    // A temporary DNS failure (EAI_AGAIN) may heal in a moment; a refused connection or an unknown host rarely do.
    const unreachable = /refused|ENOTFOUND/.test(cut)
    const what = connect ? `Cannot connect to ${url || ref}` : `The connection to ${url || ref} was cut mid-response`
    const fix = /ENOTFOUND/.test(cut)
      ? "the host name does not resolve: check the base URL and the network connection."
      : /EAI_AGAIN/.test(cut)
        ? "the host name could not be resolved just now: check the network connection."
        : "is the server running and the base URL right?"
    const hint = connect && options.connectHint ? ` ${capitalised(sentence(options.connectHint))}` : ""
    const message = connect ? `${what} (${cut}); ${fix}${hint}` : `${what} (${cut}).`
    return done({ reason: unreachable ? { _tag: "StreamCut", unreachable } : { _tag: "StreamCut" }, message })
  }
  if (APICallError.isInstance(error) && status !== undefined)
    return done(
      fromStatus(
        {
          url,
          status,
          headers: error.responseHeaders,
          body: error.responseBody === undefined ? undefined : mask(error.responseBody),
          type: "",
          message: mask(error.message)
        },
        ref,
        providerID,
        modelID,
        options
      )
    )
  if (StreamProviderError.isInstance(error)) {
    const type = `${error.type ?? ""} ${error.code ?? ""}`
    const status = error.statusCode ?? inBandStatus(type, error.message) ?? (error.isRetryable ? 500 : 400)
    const failure = {
      status,
      url,
      headers: undefined,
      body: undefined,
      type,
      message: mask(error.message),
      inBand: true
    }
    return done(fromStatus(failure, ref, providerID, modelID, options))
  }
  const text = error instanceof Error ? error.message : String(error)
  return done({ reason: { _tag: "InvalidRequest" }, message: `The call to ${ref} failed: ${text}` })
}
