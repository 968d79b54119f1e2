/**
 * Lathe's side of the sandbox's allow-list proxy (`sandbox.network` as a list of hosts). Each connection a sandboxed
 * program opens to the forwarder (`sandbox-proxy-forwarder.ts`) arrives here as a socket handed over the IPC channel;
 * this reads one HTTP proxy request from it (`CONNECT host:port` or an absolute-URI request), checks the destination
 * against the list, connects to the addresses it checked and pipes the bytes, or answers 403 with the reason. Nothing
 * listens on the host.
 */

import { connect, isIP, type Socket } from "node:net"
import { renderSnippet } from "@lathe/plugin"
import { toolsConfigAdvice } from "./config-advice.js"
import { type HostLookup, privateAddressKind, type ResolvedAddress, systemLookup } from "./webfetch-net.js"

/** One parsed entry of `sandbox.network`'s list. */
export interface AllowEntry {
  /** Lower case, no trailing dot, IPv6 without brackets; for a wildcard the suffix after `*.`. */
  readonly host: string
  /** `*.domain`: every name below `domain` (not `domain` itself). */
  readonly wildcard: boolean
  /** The one port allowed; without it, 80 and 443. */
  readonly port?: number
}

/** Ports a host listed without a port may be reached on. */
const DEFAULT_PORTS = new Set([80, 443])

const normalHost = (host: string): string =>
  host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")

/**
 * Parses one allow-list entry: `host`, `host:port`, `*.domain`, `*.domain:port`, an IPv4 literal, or an IPv6 literal
 * in brackets (`[::1]:8080`). Returns a message for an entry that is none of these.
 */
export const parseAllowEntry = (entry: string): AllowEntry | string => {
  const match = /^(\*\.)?(\[[0-9a-fA-F:.]+\]|[^:/\s[\]*]+)(?::(\d{1,5}))?$/.exec(entry.trim())
  const port = match?.[3] === undefined ? undefined : Number(match[3])
  if (!match?.[2] || (port !== undefined && (port < 1 || port > 65_535)))
    return `"${entry}" is not a host: write "registry.npmjs.org", "*.github.com", "127.0.0.1:8080" or "[::1]:8080"`
  const host = normalHost(match[2])
  if (match[1] && isIP(host) !== 0) return `"${entry}": a wildcard takes a domain name, not an address`
  return { host, wildcard: match[1] !== undefined, ...(port === undefined ? {} : { port }) }
}

/** The entries of `list` that parse (the config schema refuses the others before they get here). */
export const parseAllowList = (list: ReadonlyArray<string>): ReadonlyArray<AllowEntry> =>
  list.map(parseAllowEntry).filter((entry): entry is AllowEntry => typeof entry !== "string")

const portMatches = (entry: AllowEntry, port: number): boolean =>
  entry.port === undefined ? DEFAULT_PORTS.has(port) : entry.port === port

/** The entry that allows `host:port`, if one does: an exact name or address first, else `*.domain` for names below it. */
export const matchAllowList = (
  entries: ReadonlyArray<AllowEntry>,
  host: string,
  port: number
): AllowEntry | undefined => {
  const name = normalHost(host)
  const fits = entries.filter((entry) => portMatches(entry, port))
  return (
    fits.find((entry) => !entry.wildcard && entry.host === name) ??
    fits.find((entry) => entry.wildcard && isIP(name) === 0 && name.endsWith(`.${entry.host}`))
  )
}

/** A destination the proxy refuses, with the reason it tells the program (and so the model). */
export class ProxyRefusal extends Error {
  override readonly name = "ProxyRefusal"
}

/** How to hint at opening a host, for refusals. */
const openHint = (host: string, port: number): string => {
  const entry = `${isIP(host) === 6 ? `[${host}]` : host}${DEFAULT_PORTS.has(port) ? "" : `:${port}`}`
  return (
    `To allow it, add "${entry}" to the sandbox.network list in your own config (~/.config/lathe/lathe.json) or a ` +
    `trusted project's lathe.json: ${renderSnippet(toolsConfigAdvice.sandboxNetwork([entry]))}.`
  )
}

/**
 * The addresses to connect to for `host:port`, once the list allows it: an IP literal only when the list names it;
 * a name's every address, refused when one is loopback, private, link-local, metadata … (`privateAddressKind`)
 * unless an exact (not wildcard) entry names the host. Rejects with {@link ProxyRefusal}.
 */
export const checkProxyDestination = async (
  entries: ReadonlyArray<AllowEntry>,
  host: string,
  port: number,
  lookup: HostLookup = systemLookup
): Promise<ReadonlyArray<ResolvedAddress>> => {
  const name = normalHost(host)
  const entry = matchAllowList(entries, name, port)
  if (!entry)
    throw new ProxyRefusal(
      `Lathe's sandbox proxy refused ${name}:${port}: it is not on the sandbox.network allow-list. ${openHint(name, port)}`
    )
  const literal = isIP(name)
  if (literal !== 0) return [{ address: name, family: literal === 6 ? 6 : 4 }]
  let addresses: ReadonlyArray<ResolvedAddress>
  try {
    addresses = await lookup(name)
  } catch (error) {
    throw new Error(`Lathe's sandbox proxy could not resolve ${name} (${(error as Error).message})`)
  }
  if (addresses.length === 0) throw new Error(`Lathe's sandbox proxy found no address for ${name}`)
  if (entry.wildcard)
    for (const { address } of addresses) {
      const what = privateAddressKind(address)
      if (what !== undefined)
        throw new ProxyRefusal(
          `Lathe's sandbox proxy refused ${name}:${port}: it resolves to ${address}, ${what}, which a wildcard entry ` +
            `does not open. List the exact host to reach it. ${openHint(name, port)}`
        )
    }
  return addresses
}

/** Longest request head the proxy reads before giving up on a connection. */
const MAX_HEAD_BYTES = 64 * 1024

const respond = (socket: Socket, status: string, body: string): void => {
  const text = `${body}\n`
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Connection: close\r\nX-Lathe-Proxy: refused\r\n\r\n${text}`
  )
}

/** What one request head asks for: a tunnel (`CONNECT`) or one plain-HTTP request rewritten to origin form. */
type Target =
  | { readonly kind: "tunnel"; readonly host: string; readonly port: number }
  | { readonly kind: "http"; readonly host: string; readonly port: number; readonly head: string }

const parseHead = (head: string): Target | string => {
  const [line = "", ...headers] = head.split("\r\n")
  const request = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(line)
  if (!request?.[1] || !request[2] || !request[3]) return "not an HTTP proxy request"
  const [, method, target, version] = request
  if (method === "CONNECT") {
    const authority = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(target)
    if (!authority?.[1] || !authority[2]) return `CONNECT needs host:port, got ${target}`
    return { kind: "tunnel", host: normalHost(authority[1]), port: Number(authority[2]) }
  }
  if (!URL.canParse(target)) return `a proxy request needs an absolute URL, got ${target}`
  const url = new URL(target)
  if (url.protocol !== "http:")
    return `only http: URLs go through the proxy as plain requests (use CONNECT for ${url.protocol})`
  const kept = headers.filter((header) => !/^(proxy-[a-z-]*|connection|keep-alive)\s*:/i.test(header))
  const rewritten = [`${method} ${url.pathname}${url.search} ${version}`, ...kept, "Connection: close"].join("\r\n")
  return { kind: "http", host: normalHost(url.hostname), port: Number(url.port || 80), head: rewritten }
}

/** Connects to the first of `addresses` that answers. */
const connectTo = async (addresses: ReadonlyArray<ResolvedAddress>, port: number): Promise<Socket> => {
  let last: unknown
  for (const { address } of addresses) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const upstream = connect({ host: address, port })
        upstream.once("connect", () => {
          upstream.off("error", reject)
          resolve(upstream)
        })
        upstream.once("error", reject)
      })
    } catch (error) {
      last = error
    }
  }
  throw last instanceof Error ? last : new Error("no address answered")
}

/**
 * Serves one connection of a sandboxed program: reads its proxy request, answers 403 (not allowed), 400 (not a
 * proxy request) or 502 (unreachable), or connects and pipes both ways until either side ends. Never throws.
 */
export const serveProxyConnection = (
  socket: Socket,
  entries: ReadonlyArray<AllowEntry>,
  lookup: HostLookup = systemLookup
): void => {
  let buffered = Buffer.alloc(0)
  socket.on("error", () => socket.destroy())
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    const end = buffered.indexOf("\r\n\r\n")
    if (end === -1) {
      if (buffered.length > MAX_HEAD_BYTES) {
        socket.off("data", onData)
        respond(socket, "431 Request Header Fields Too Large", "Lathe's sandbox proxy: the request head is too long.")
      }
      return
    }
    socket.off("data", onData)
    socket.pause()
    const rest = buffered.subarray(end + 4)
    const target = parseHead(buffered.subarray(0, end).toString("latin1"))
    if (typeof target === "string") return respond(socket, "400 Bad Request", `Lathe's sandbox proxy: ${target}.`)
    void checkProxyDestination(entries, target.host, target.port, lookup)
      .then((addresses) => connectTo(addresses, target.port))
      .then(
        (upstream) => {
          upstream.on("error", () => socket.destroy())
          socket.on("close", () => upstream.destroy())
          upstream.on("close", () => socket.destroy())
          if (target.kind === "tunnel") socket.write("HTTP/1.1 200 Connection Established\r\n\r\n")
          else upstream.write(`${target.head}\r\n\r\n`)
          if (rest.length > 0) upstream.write(rest)
          socket.pipe(upstream)
          upstream.pipe(socket)
          socket.resume()
        },
        (error: unknown) =>
          error instanceof ProxyRefusal
            ? respond(socket, "403 Forbidden", error.message)
            : respond(
                socket,
                "502 Bad Gateway",
                (error as Error).message.startsWith("Lathe's sandbox proxy")
                  ? `${(error as Error).message}.`
                  : `Lathe's sandbox proxy could not reach ${target.host}:${target.port} (${(error as Error).message}).`
              )
      )
  }
  socket.on("data", onData)
  socket.resume()
}

/**
 * The value of `NO_PROXY` inside the sandbox: the sandbox's own loopback names (a server the command starts itself is
 * reached directly), except those the allow-list names, which must go through the proxy to reach the host's.
 */
export const noProxyFor = (entries: ReadonlyArray<AllowEntry>): string =>
  ["localhost", "127.0.0.1", "::1"].filter((name) => !entries.some((entry) => entry.host === name)).join(",")
