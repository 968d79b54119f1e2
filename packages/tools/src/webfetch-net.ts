/**
 * Where webfetch may connect. A URL's host is resolved once, every address it has is checked (loopback, private,
 * link-local, unique-local, CGNAT, unspecified, multicast and broadcast, those same addresses inside IPv6, cloud
 * metadata names), and the connection goes to the address that was checked: no second DNS lookup that a rebinding
 * server could answer differently. Redirects are followed here, one checked hop at a time.
 */
import type { IncomingMessage } from "node:http"
import { isIP } from "node:net"
import type { Readable } from "node:stream"
import { renderSnippet } from "@lathe/plugin"
import { toolsConfigAdvice } from "./config-advice.js"

/** One address a host name resolves to. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Resolves a host name to every address it has (tests inject one; the default asks the system resolver). */
export type HostLookup = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** The system resolver (`getaddrinfo`, so `/etc/hosts` too), every address. */
export const systemLookup: HostLookup = async (hostname) => {
  const found = await process.getBuiltinModule("node:dns").promises.lookup(hostname, { all: true, verbatim: true })
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }))
}

/** A destination webfetch will not reach; its message says why and how the person can allow it. */
export class PrivateDestinationError extends Error {
  override readonly name = "PrivateDestinationError"
}

const V4_RANGES: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private network address"],
  ["100.64.0.0", 10, "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "a loopback address (this machine)"],
  ["169.254.0.0", 16, "a link-local address (where cloud metadata services answer)"],
  ["172.16.0.0", 12, "a private network address"],
  ["192.0.0.0", 24, "a reserved protocol address"],
  ["192.168.0.0", 16, "a private network address"],
  ["198.18.0.0", 15, "a benchmarking network address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved or broadcast address"]
]

const v4Number = (address: string): number =>
  address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0)

const V4_TABLE = V4_RANGES.map(([base, bits, what]) => ({
  base: v4Number(base),
  size: 2 ** (32 - bits),
  what
}))

const classifyV4 = (address: string): string | undefined => {
  const value = v4Number(address)
  return V4_TABLE.find((range) => value >= range.base && value < range.base + range.size)?.what
}

/** The 16 bytes of an IPv6 address (which may end in a dotted IPv4 address). */
const v6Bytes = (address: string): Array<number> => {
  let text = address.toLowerCase().split("%")[0] ?? ""
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1]
  if (dotted !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.split(".").map(Number)
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = "", tail] = text.split("::")
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16)))
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const words = [...left, ...Array(8 - left.length - right.length).fill(0), ...right]
  return words.flatMap((word) => [word >> 8, word & 0xff])
}

const classifyV6 = (address: string): string | undefined => {
  const bytes = v6Bytes(address)
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0)
  const v4At = (from: number) => bytes.slice(from, from + 4).join(".")
  const inner = (from: number, form: string) => {
    const what = classifyV4(v4At(from))
    return what === undefined ? undefined : `${what}, in ${form} form`
  }
  const [b0 = 0, b1 = 0] = bytes
  if (zeros(0, 16)) return "an unspecified address"
  if (zeros(0, 15) && bytes[15] === 1) return "a loopback address (this machine)"
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return inner(12, "IPv4-mapped IPv6")
  if (zeros(0, 12)) return inner(12, "IPv4-compatible IPv6")
  if (b0 === 0x00 && b1 === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return inner(12, "NAT64")
  if (b0 === 0x20 && b1 === 0x02) return inner(2, "6to4")
  if (b0 === 0xfe && (b1 & 0xc0) === 0x80) return "a link-local address"
  if (b0 === 0xfe && (b1 & 0xc0) === 0xc0) return "a site-local address"
  if ((b0 & 0xfe) === 0xfc) return "a unique-local (private) address"
  if (b0 === 0xff) return "a multicast address"
  return undefined
}

/** Why an IP address is not public (loopback, private, …), or `undefined` for a public address. */
export const privateAddressKind = (address: string): string | undefined => {
  const family = isIP(address)
  return family === 4 ? classifyV4(address) : family === 6 ? classifyV6(address) : "not an IP address"
}

const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal"
])

/** Why a host name is refused before it is even resolved (a loopback or cloud metadata name). */
const privateNameKind = (hostname: string): string | undefined =>
  hostname === "localhost" || hostname.endsWith(".localhost")
    ? "a name of this machine"
    : METADATA_NAMES.has(hostname)
      ? "a cloud metadata service name"
      : undefined

const unbracket = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "")

/** The port a URL connects to. */
const portOf = (url: URL): string => url.port || (url.protocol === "https:" ? "443" : "80")

/**
 * Whether `url` is one the person allowed (`webfetch.allow_private_hosts`): an entry `host` allows every port of
 * that host, `host:port` that port only; hosts compare as the URL parser writes them (`2130706433` is `127.0.0.1`).
 */
export const isAllowedHost = (url: URL, allowed: ReadonlyArray<string>): boolean =>
  allowed.some((entry) => {
    const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(entry.trim())
    if (!match?.[1] || !URL.canParse(`http://${match[1]}`)) return false
    return (
      new URL(`http://${match[1]}`).hostname === url.hostname && (match[2] === undefined || match[2] === portOf(url))
    )
  })

const refusal = (url: URL, subject: string, what: string): PrivateDestinationError =>
  new PrivateDestinationError(
    `Refused to fetch ${url.href}: ${subject} ${what}. webfetch does not reach this machine, private networks or ` +
      "cloud metadata services, so that a web page or a prompt cannot turn it against local services. If the user " +
      `wants this fetched, they can merge ${renderSnippet(toolsConfigAdvice.webfetchPrivateHost(url.host))} into their ` +
      "own config (~/.config/lathe/lathe.json) or a trusted project's lathe.json."
  )

/**
 * The addresses to connect to for `url`: its IP literal, or every address its name resolves to, once each was found
 * public. A host in `allowed` skips the check. Rejects with {@link PrivateDestinationError}.
 */
export const checkDestination = async (
  url: URL,
  options: { readonly lookup: HostLookup; readonly allowed: ReadonlyArray<string> }
): Promise<ReadonlyArray<ResolvedAddress>> => {
  const hostname = unbracket(url.hostname)
  const allowed = isAllowedHost(url, options.allowed)
  const literal = isIP(hostname)
  if (literal !== 0) {
    const what = privateAddressKind(hostname)
    if (what !== undefined && !allowed) throw refusal(url, hostname, `is ${what}`)
    return [{ address: hostname, family: literal === 6 ? 6 : 4 }]
  }
  const named = privateNameKind(hostname)
  if (named !== undefined && !allowed) throw refusal(url, hostname, `is ${named}`)
  let addresses: ReadonlyArray<ResolvedAddress>
  try {
    addresses = await options.lookup(hostname)
  } catch (error) {
    throw new Error(`Could not fetch ${url.href}: ${hostname} does not resolve (${(error as Error).message}).`)
  }
  if (addresses.length === 0) throw new Error(`Could not fetch ${url.href}: ${hostname} has no address.`)
  if (!allowed)
    for (const { address } of addresses) {
      const what = privateAddressKind(address)
      if (what !== undefined) throw refusal(url, hostname, `resolves to ${address}, ${what}`)
    }
  return addresses
}

/**
 * One GET of `url` that connects only to `addresses` (the checked ones): the connection's name lookup answers with
 * them instead of asking DNS again. `Host`, SNI and the certificate check use the URL's own host name.
 */
const getPinned = (
  url: URL,
  addresses: ReadonlyArray<ResolvedAddress>,
  headers: Record<string, string>,
  signal: AbortSignal
): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const https = url.protocol === "https:"
    const [first = { address: "", family: 4 }] = addresses
    const request = process.getBuiltinModule(https ? "node:https" : "node:http").request(
      {
        host: unbracket(url.hostname),
        port: Number(portOf(url)),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: { ...headers, "accept-encoding": "gzip, deflate, br" },
        agent: false,
        signal,
        lookup: (_name, options, callback) =>
          options.all
            ? callback(
                null,
                addresses.map((entry) => ({ ...entry }))
              )
            : callback(null, first.address, first.family)
      },
      resolve
    )
    request.on("error", (error) =>
      reject(signal.aborted ? error : new Error(`Could not fetch ${url.href}: ${error.message}`))
    )
    request.end()
  })

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const NO_BODY = new Set([204, 205, 304])
/** How many redirects one fetch follows. */
export const MAX_REDIRECTS = 10

const decoded = (response: IncomingMessage, url: URL): NodeJS.ReadableStream => {
  const zlib = process.getBuiltinModule("node:zlib")
  const encoding = (response.headers["content-encoding"] ?? "identity").toLowerCase().trim()
  if (encoding === "identity" || encoding === "") return response
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined
  if (decoder === undefined) {
    response.destroy()
    throw new Error(
      `Could not fetch ${url.href}: the server sent content-encoding "${encoding}", which is not supported.`
    )
  }
  response.on("error", (error) => decoder.destroy(error))
  return response.pipe(decoder)
}

/**
 * GETs `url` the guarded way: each hop's host is checked and pinned ({@link checkDestination}), redirects are
 * followed here (at most {@link MAX_REDIRECTS}, http and https only), and the answer comes back as a web `Response`
 * (its body decompressed) whose `url` is the last hop.
 */
export const guardedFetch = async (
  start: URL,
  options: {
    readonly lookup: HostLookup
    readonly allowed: ReadonlyArray<string>
    readonly headers: Record<string, string>
    readonly signal: AbortSignal
  }
): Promise<{ readonly response: Response; readonly url: URL }> => {
  let url = start
  for (let hop = 0; ; hop++) {
    const addresses = await checkDestination(url, options)
    const answer = await getPinned(url, addresses, options.headers, options.signal)
    const status = answer.statusCode ?? 0
    const location = answer.headers.location
    if (REDIRECTS.has(status) && location !== undefined) {
      answer.resume()
      if (hop >= MAX_REDIRECTS)
        throw new Error(`Fetching ${start.href} was redirected more than ${MAX_REDIRECTS} times.`)
      const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined
      if (next === undefined || (next.protocol !== "http:" && next.protocol !== "https:"))
        throw new Error(`Fetching ${url.href} was redirected to "${location}", which is not an http(s) URL.`)
      url = next
      continue
    }
    const headers = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || name === "content-encoding" || name === "content-length") continue
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
    }
    // The declared length only holds for a body sent as it is.
    const encoding = answer.headers["content-encoding"]
    if (answer.headers["content-length"] && (encoding === undefined || encoding === "identity"))
      headers.set("content-length", answer.headers["content-length"])
    if (NO_BODY.has(status) || status < 200 || status > 599) {
      answer.resume()
      return { response: new Response(null, { status: NO_BODY.has(status) ? status : 502, headers }), url }
    }
    const body = process
      .getBuiltinModule("node:stream")
      .Readable.toWeb(decoded(answer, url) as Readable) as ReadableStream<Uint8Array>
    return {
      response: new Response(body, { status, statusText: answer.statusMessage ?? "", headers }),
      url
    }
  }
}
