import { mkdtempSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import {
  isRemoteInstruction,
  loadRemoteInstruction,
  REMOTE_FRESH_MS,
  remoteRefusal
} from "../src/config/remote-instructions.js"
import { MAX_RULES_FILE_BYTES } from "../src/config/rules-files.js"

const servers: Array<Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** A server on 127.0.0.1 answering each request with `answer(path)`; `hits` counts the requests. */
const serve = async (answer: (path: string) => { status: number; body?: string; location?: string }) => {
  const hits: Array<string> = []
  const server = createServer((request, response) => {
    hits.push(request.url ?? "")
    const { status, body, location } = answer(request.url ?? "")
    response.writeHead(status, location === undefined ? {} : { location })
    response.end(body ?? "")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push(server)
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}

const dataDir = () => mkdtempSync(join(tmpdir(), "lathe-remote-"))

describe("remote instructions", () => {
  it("tells URLs from paths and globs", () => {
    assert.isTrue(isRemoteInstruction("https://example.com/a.md"))
    assert.isTrue(isRemoteInstruction("http://127.0.0.1:8080/a.md"))
    assert.isFalse(isRemoteInstruction("docs/*.md"))
    assert.isFalse(isRemoteInstruction("~/rules.md"))
    assert.isFalse(isRemoteInstruction("C:\\rules.md"))
  })

  it("allows https anywhere and http only to loopback hosts", () => {
    assert.isUndefined(remoteRefusal("https://example.com/a.md"))
    for (const url of ["http://127.0.0.1:1/a", "http://[::1]:1/a", "http://localhost/a"])
      assert.isUndefined(remoteRefusal(url), url)
    assert.include(remoteRefusal("http://example.com/a") ?? "", "only for loopback hosts")
    assert.include(remoteRefusal("http://127.0.0.1.example.com/a") ?? "", "only for loopback hosts")
    assert.include(remoteRefusal("file:///etc/passwd") ?? "", "only https://")
  })

  it("caches a fetch, re-fetches once stale, and falls back to the stale copy with a notice", async () => {
    let up = true
    const server = await serve(() => (up ? { status: 200, body: "Be brief.\n" } : { status: 503 }))
    const url = `${server.base}/rules.md`
    const data = dataDir()
    let now = 1_000_000
    const options = { dataDir: data, now: () => now }
    assert.deepStrictEqual(await loadRemoteInstruction(url, options), { text: "Be brief.", notices: [] })
    now += REMOTE_FRESH_MS - 1
    assert.strictEqual((await loadRemoteInstruction(url, options)).text, "Be brief.")
    assert.lengthOf(server.hits, 1, "fresh: read from the cache")
    now += 2 * 60 * 60 * 1000
    up = false
    const stale = await loadRemoteInstruction(url, options)
    assert.lengthOf(server.hits, 2)
    assert.strictEqual(stale.text, "Be brief.")
    assert.deepStrictEqual(stale.notices, [
      `Instructions ${url} could not be fetched (the server answered 503): using the copy fetched 3 h ago.`
    ])
    const never = await loadRemoteInstruction(`${server.base}/other.md`, options)
    assert.strictEqual(never.text, undefined)
    assert.include(never.notices[0], "could not be fetched (the server answered 503): left out.")
  })

  it("follows a redirect only to an allowed URL, and caps the text", async () => {
    const big = "x".repeat(MAX_RULES_FILE_BYTES + 10)
    const server = await serve((path) =>
      path === "/away"
        ? { status: 302, location: "http://example.com/rules.md" }
        : path === "/here"
          ? { status: 301, location: "/big" }
          : { status: 200, body: big }
    )
    const away = await loadRemoteInstruction(`${server.base}/away`, { dataDir: dataDir() })
    assert.strictEqual(away.text, undefined)
    assert.include(away.notices[0], "redirects to http://example.com/rules.md: http:// is allowed only for loopback")
    const here = await loadRemoteInstruction(`${server.base}/here`, { dataDir: dataDir() })
    assert.strictEqual(here.text?.length, MAX_RULES_FILE_BYTES)
    assert.include(here.notices[0], "only the first 256 KiB are sent")
  })
})
