import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createWebFetchTool } from "../src/webfetch.js"
import { privateAddressKind } from "../src/webfetch-net.js"
import { harness, run, runError } from "./helpers.js"

// "Walls that hold": webfetch must not be a way into this machine or its network. A real server on 127.0.0.1 serves a
// secret; plain `fetch` reads it (every payload below does its damage without the wall), webfetch refuses each way
// of naming it and the server never sees a request. Name resolution is injected: there is no network in CI.

const SECRET = "TOP-SECRET-INTERNAL"
let secret: Server
let hop: Server
let secretPort = 0
let hopPort = 0
let hits = 0

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

beforeAll(async () => {
  secret = createServer((_req, res) => {
    hits++
    res.writeHead(200, { "content-type": "text/plain" })
    res.end(SECRET)
  })
  // The "allowed" first hop: it redirects to wherever `?to=` says.
  hop = createServer((req, res) => {
    const to = new URL(req.url ?? "/", "http://x").searchParams.get("to") ?? "/"
    res.writeHead(302, { location: to })
    res.end()
  })
  secretPort = await listen(secret)
  hopPort = await listen(hop)
})
afterAll(() => {
  for (const server of [secret, hop]) {
    server.closeAllConnections()
    server.close()
  }
})

/** A resolver that answers like a DNS server the attacker controls: every name is the given addresses. */
const resolvesTo =
  (...addresses: Array<string>) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }))

describe("webfetch refuses private destinations", () => {
  it("plain fetch reads the secret by every one of these names (the damage without the wall)", async () => {
    for (const url of [
      `http://127.0.0.1:${secretPort}/`,
      `http://localhost:${secretPort}/`,
      `http://2130706433:${secretPort}/`,
      `http://0x7f.1:${secretPort}/`,
      `http://[::ffff:127.0.0.1]:${secretPort}/`,
      `http://127.0.0.1:${hopPort}/?to=${encodeURIComponent(`http://127.0.0.1:${secretPort}/`)}`
    ])
      expect(await (await fetch(url)).text(), url).toBe(SECRET)
  })

  it("refuses loopback however it is written, and the server sees nothing", async () => {
    const tool = createWebFetchTool({ lookup: resolvesTo("127.0.0.1", "::1") })
    const before = hits
    for (const url of [
      `http://127.0.0.1:${secretPort}/`,
      `http://localhost:${secretPort}/`,
      `http://2130706433:${secretPort}/`,
      `http://0x7f.1:${secretPort}/`,
      `http://[::1]:${secretPort}/`,
      `http://[::ffff:127.0.0.1]:${secretPort}/`,
      `http://0.0.0.0:${secretPort}/`,
      `http://127.1:${secretPort}/`
    ]) {
      const error = await runError(tool, { url }, harness().ctx())
      expect(error.message, url).toMatch(/^Refused to fetch /)
      expect(error.message).toContain("allow_private_hosts")
    }
    expect(hits).toBe(before)
  })

  it("refuses a public-looking name that resolves to loopback (any of its addresses), and pins what it checked", async () => {
    const before = hits
    const rebound = createWebFetchTool({ lookup: resolvesTo("127.0.0.1") })
    const error = await runError(rebound, { url: `http://docs.example.com:${secretPort}/` }, harness().ctx())
    expect(error.message).toContain("docs.example.com resolves to 127.0.0.1, a loopback address")
    const mixed = createWebFetchTool({ lookup: resolvesTo("93.184.216.34", "10.0.0.7") })
    expect((await runError(mixed, { url: "http://docs.example.com/" }, harness().ctx())).message).toContain(
      "resolves to 10.0.0.7, a private network address"
    )
    expect(hits).toBe(before)
    // Allowed by name, the connection goes to the checked address (127.0.0.1), never to a second lookup's answer.
    let lookups = 0
    const pinned = createWebFetchTool({
      allowPrivateHosts: [`internal.test:${secretPort}`],
      lookup: async () => (lookups++ === 0 ? [{ address: "127.0.0.1", family: 4 }] : [])
    })
    expect((await run(pinned, { url: `http://internal.test:${secretPort}/` }, harness().ctx())).output).toBe(SECRET)
    expect(lookups).toBe(1)
  })

  it("checks every redirect hop: an allowed first host cannot send it on to another private one", async () => {
    const tool = createWebFetchTool({
      allowPrivateHosts: [`127.0.0.1:${hopPort}`],
      lookup: resolvesTo("127.0.0.1")
    })
    const before = hits
    for (const target of [
      `http://127.0.0.1:${secretPort}/`,
      `http://localhost:${secretPort}/`,
      `http://sneaky.example:${secretPort}/`,
      "http://169.254.169.254/latest/meta-data/"
    ]) {
      const url = `http://127.0.0.1:${hopPort}/?to=${encodeURIComponent(target)}`
      const error = await runError(tool, { url }, harness().ctx())
      expect(error.message, target).toMatch(/^Refused to fetch /)
    }
    expect(hits).toBe(before)
    const file = await runError(tool, { url: `http://127.0.0.1:${hopPort}/?to=file:///etc/passwd` }, harness().ctx())
    expect(file.message).toContain("not an http(s) URL")
  })

  it("refuses cloud metadata addresses and names, private ranges and their IPv6 forms", async () => {
    const tool = createWebFetchTool({ lookup: resolvesTo("169.254.169.254") })
    for (const url of [
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://[fd00:ec2::254]/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/"
    ])
      expect((await runError(tool, { url }, harness().ctx())).message, url).toMatch(/^Refused to fetch /)
    for (const address of [
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fe80::1",
      "fc00::1",
      "ff02::1",
      "::ffff:10.0.0.1",
      "::ffff:7f00:1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::"
    ])
      expect(privateAddressKind(address), address).toBeDefined()
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
      expect(privateAddressKind(address), address).toBeUndefined()
  })

  it("fetches a host the person allowed, on the allowed port only", async () => {
    const tool = createWebFetchTool({ allowPrivateHosts: [`localhost:${secretPort}`] })
    expect((await run(tool, { url: `http://localhost:${secretPort}/` }, harness().ctx())).output).toBe(SECRET)
    const error = await runError(tool, { url: `http://localhost:${hopPort}/` }, harness().ctx())
    expect(error.message).toContain(`merge { "webfetch": { "allow_private_hosts": ["localhost:${hopPort}"] } }`)
  })
})
