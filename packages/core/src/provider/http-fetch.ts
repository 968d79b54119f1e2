import type { Agent, IncomingMessage, RequestOptions } from "node:http"
import { NodeResponse } from "./node-response.js"

/**
 * A `fetch` for the model providers, on `node:http`/`node:https` with a keep-alive agent, where the SDK's requests
 * are plain: a method, headers and a string or byte body, answered by one response. Undici's `fetch` costs the
 * loop noticeably per step (its dispatcher, its WebAssembly HTTP parser, its body streams) and some 10 MiB of peak
 * memory; Node's HTTP client and one web stream over the response do the same work for less. Undici itself is not
 * even loaded (some 15 ms of a start): the answer is a {@link NodeResponse}, which serves what the SDK reads on a
 * success (status, headers, the body stream) itself, and anything else (`text()`, `json()`, `clone()` …) through a
 * real `Response` made on first use.
 *
 * The semantics follow `fetch` where the SDK can tell: connection failures reject with `TypeError("fetch failed")`
 * (cause: the socket error), a body cut mid-way errors the stream with `TypeError("terminated")`, an abort rejects
 * (or errors the body) with an `AbortError`, gzip/deflate/brotli bodies are decoded, and a silent server fails
 * after five minutes (undici's own default). Anything else goes to the global `fetch`: another body type (form data,
 * a stream), a redirect (the request is sent again through `fetch`, which follows it), or a proxy set in the
 * environment (`fetch` honours `NODE_USE_ENV_PROXY`; this client would not).
 */
export const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = init.body
  const plainBody =
    body === undefined ||
    body === null ||
    typeof body === "string" ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer
  // A `Request` (checked without naming the global, which would load undici) goes to `fetch`.
  const plainInput = typeof input === "string" || input instanceof URL
  if (!plainBody || !plainInput || proxyConfigured(process.env)) return globalThis.fetch(input, init)
  return new Promise<Response>((resolve, reject) => {
    const url = new URL(input)
    const secure = url.protocol === "https:"
    if (!secure && url.protocol !== "http:") {
      resolve(globalThis.fetch(input, init))
      return
    }
    const signal = init.signal ?? undefined
    if (signal?.aborted) {
      reject(abortError(signal))
      return
    }
    const http = process.getBuiltinModule(secure ? "node:https" : "node:http") as typeof import("node:http")
    const headers = headerRecord(init.headers)
    const bytes =
      body === undefined || body === null
        ? undefined
        : typeof body === "string"
          ? Buffer.from(body, "utf8")
          : body instanceof ArrayBuffer
            ? Buffer.from(body)
            : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    if (bytes !== undefined) headers["content-length"] = String(bytes.byteLength)
    const options: RequestOptions = { method: init.method ?? "GET", headers, agent: agentFor(secure, http) }
    let settled = false
    const request = http.request(url, options, (response) => {
      settled = true
      const status = response.statusCode ?? 0
      if (REDIRECTS.has(status) && init.redirect !== "manual") {
        response.resume()
        resolve(globalThis.fetch(input, init))
        return
      }
      const list: Array<[string, string]> = []
      for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
        list.push([response.rawHeaders[i] ?? "", response.rawHeaders[i + 1] ?? ""])
      const empty = NULL_BODY.has(status) || options.method === "HEAD"
      if (empty) response.resume()
      resolve(
        new NodeResponse(empty ? null : bodyStream(response, signal), {
          status,
          statusText: response.statusMessage ?? "",
          headers: list,
          url: url.href
        })
      )
    })
    request.setTimeout(IDLE_TIMEOUT_MS, () =>
      request.destroy(Object.assign(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`), { code: "ETIMEDOUT" }))
    )
    const onAbort = () => request.destroy(abortError(signal))
    signal?.addEventListener("abort", onAbort, { once: true })
    request.on("close", () => signal?.removeEventListener("abort", onAbort))
    request.on("error", (error: Error) => {
      if (settled) return // the body stream reports it
      settled = true
      reject(signal?.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }))
    })
    request.end(bytes)
  })
}

/**
 * Request headers as a record with lower-case names, as `new Headers(init)` would give them (names lower-cased, values
 * trimmed, repeated names joined with ", "), without undici's `Headers`: a record, a list of pairs or a `Headers`.
 * Node's HTTP client rejects invalid names and values when it sends them.
 */
const headerRecord = (init: RequestInit["headers"]): Record<string, string> => {
  const record: Record<string, string> = {}
  const add = (name: string, value: unknown) => {
    const key = name.toLowerCase()
    const text = String(value).trim()
    record[key] = record[key] === undefined ? text : `${record[key]}, ${text}`
  }
  if (init === undefined || init === null) return record
  if (Symbol.iterator in init) for (const [name, value] of init as Iterable<[string, string]>) add(name, value)
  else for (const [name, value] of Object.entries(init)) if (value !== undefined) add(name, value)
  return record
}

/** Whether the environment asks for a proxy, which only the global `fetch` honours. */
export const proxyConfigured = (env: NodeJS.ProcessEnv): boolean =>
  ["NODE_USE_ENV_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].some(
    (name) => (env[name] ?? "") !== ""
  )

/** Undici's default headers and body timeouts: a server that sends nothing for this long has gone. */
const IDLE_TIMEOUT_MS = 300_000
const REDIRECTS = new Set([301, 302, 303, 307, 308])
const NULL_BODY = new Set([101, 204, 205, 304])

let httpAgent: Agent | undefined
let httpsAgent: Agent | undefined

/** One keep-alive agent per protocol: the loop's requests reuse one connection. Idle sockets do not hold the process. */
const agentFor = (secure: boolean, http: typeof import("node:http")): Agent => {
  if (secure) {
    httpsAgent ??= new (process.getBuiltinModule("node:https").Agent)({
      keepAlive: true
    })
    return httpsAgent
  }
  httpAgent ??= new http.Agent({ keepAlive: true })
  return httpAgent
}

const abortError = (signal: AbortSignal | undefined): Error => {
  const reason: unknown = signal?.reason
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError")
}

/** The decoder for a `content-encoding`, or undefined for identity (and encodings it does not know: left as they are). */
const decoderFor = (encoding: string | undefined) => {
  const name = encoding?.trim().toLowerCase()
  if (name !== "gzip" && name !== "x-gzip" && name !== "deflate" && name !== "br") return undefined
  const zlib = process.getBuiltinModule("node:zlib")
  return name === "br" ? zlib.createBrotliDecompress() : name === "deflate" ? zlib.createInflate() : zlib.createGunzip()
}

/** The response body as a web stream, with `fetch`'s errors: an abort as such, anything else as "terminated". */
const bodyStream = (response: IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array> => {
  const decoder = decoderFor(response.headers["content-encoding"])
  const source: NodeJS.ReadableStream & { destroy: (error?: Error) => void } = decoder
    ? response.pipe(decoder)
    : response
  if (decoder) response.on("error", (error) => decoder.destroy(error))
  let done = false
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: unknown) => {
        if (done) return
        done = true
        controller.error(
          signal?.aborted
            ? abortError(signal)
            : error instanceof Error && error.name === "AbortError"
              ? error
              : new TypeError("terminated", { cause: error })
        )
      }
      source.on("data", (chunk: Buffer) => {
        if (done) return
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) source.pause()
      })
      source.on("end", () => {
        if (done) return
        done = true
        controller.close()
      })
      source.on("error", fail)
      response.on("close", () => {
        // Closed before the end without an error event: the connection went away.
        if (!response.complete) fail(Object.assign(new Error("other side closed"), { code: "ECONNRESET" }))
      })
    },
    pull() {
      source.resume()
    },
    cancel() {
      done = true
      response.destroy()
    }
  })
}
