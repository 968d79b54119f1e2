/**
 * The answer of `nodeFetch`: what a `Response` offers, without loading undici (Node's `fetch`, whose first use costs
 * some 15 ms of a `lathe run` start and a little on every step). The model providers read a successful answer's
 * status, headers and body stream; those are served here. Everything else a `Response` can do (`text()`, `json()`,
 * `arrayBuffer()`, `clone()` …, which the SDK uses on error answers) is done by a real `Response` over the same body,
 * made on first use, so its behaviour is `fetch`'s own.
 */
export class NodeResponse implements Response {
  readonly type = "basic" as const
  readonly redirected = false
  readonly status: number
  readonly statusText: string
  readonly url: string
  readonly headers: Headers
  readonly #body: ReadableStream<Uint8Array> | null
  #real: Response | undefined

  constructor(
    body: ReadableStream<Uint8Array> | null,
    init: {
      readonly status: number
      readonly statusText: string
      readonly headers: ReadonlyArray<readonly [string, string]>
      readonly url: string
    }
  ) {
    this.#body = body
    this.status = init.status
    this.statusText = init.statusText
    this.url = init.url
    this.headers = new ResponseHeaders(init.headers)
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#real === undefined ? this.#body : this.#real.body
  }

  get bodyUsed(): boolean {
    return this.#real === undefined ? this.#body?.locked === true : this.#real.bodyUsed
  }

  /** The same answer as a real `Response` (loads undici), taking over the body. */
  #response(): Response {
    this.#real ??= new Response(this.#body, { status: this.status, statusText: this.statusText, headers: this.headers })
    return this.#real
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#response().arrayBuffer()
  }

  blob(): Promise<Blob> {
    return this.#response().blob()
  }

  bytes(): ReturnType<Response["bytes"]> {
    return this.#response().bytes()
  }

  formData(): Promise<FormData> {
    return this.#response().formData()
  }

  json(): Promise<unknown> {
    return this.#response().json()
  }

  text(): Promise<string> {
    return this.#response().text()
  }

  clone(): Response {
    return this.#response().clone()
  }
}

/**
 * A response's headers, read-only as `fetch` makes them: names lower-case, repeated ones joined with ", " (each
 * `set-cookie` kept apart), iterated in name order.
 */
class ResponseHeaders implements Headers {
  readonly #values = new Map<string, string>()
  readonly #cookies: Array<string> = []

  constructor(list: ReadonlyArray<readonly [string, string]>) {
    for (const [rawName, rawValue] of list) {
      const name = rawName.toLowerCase()
      const value = rawValue.trim()
      if (name === "set-cookie") this.#cookies.push(value)
      const seen = this.#values.get(name)
      this.#values.set(name, seen === undefined ? value : `${seen}, ${value}`)
    }
  }

  get [Symbol.toStringTag](): string {
    return "Headers"
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase())
  }

  getSetCookie(): Array<string> {
    return [...this.#cookies]
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this)
  }

  entries(): ReturnType<Headers["entries"]> {
    const sorted: Array<[string, string]> = []
    for (const name of [...this.#values.keys()].sort()) {
      if (name === "set-cookie") for (const cookie of this.#cookies) sorted.push([name, cookie])
      else sorted.push([name, this.#values.get(name) ?? ""])
    }
    return sorted.values()
  }

  keys(): ReturnType<Headers["keys"]> {
    return [...this.entries()].map(([name]) => name).values()
  }

  values(): ReturnType<Headers["values"]> {
    return [...this.entries()].map(([, value]) => value).values()
  }

  [Symbol.iterator](): ReturnType<Headers["entries"]> {
    return this.entries()
  }

  append(): void {
    immutable()
  }

  delete(): void {
    immutable()
  }

  set(): void {
    immutable()
  }
}

const immutable = (): never => {
  throw new TypeError("immutable: a response's headers cannot be changed")
}
