import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createWebFetchTool } from "../src/webfetch.js"
import { harness, run, runError } from "./helpers.js"

// The test server is on 127.0.0.1, which webfetch refuses unless the person allows it (see webfetch-private.test.ts).
const tool = createWebFetchTool({ allowPrivateHosts: ["127.0.0.1"] })
let server: Server
let base = ""
let requests = 0

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++
    if (req.url === "/page") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(
        "<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1>" +
          '<p>Some <strong>bold</strong> text and <a href="https://x.dev">a link</a>.</p><ul><li>one</li></ul></body></html>'
      )
    } else if (req.url === "/plain") {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("just text")
    } else if (req.url === "/gzip") {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
      res.end(gzipSync("compressed text"))
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "text/plain" })
      const chunk = "x".repeat(1024 * 1024)
      for (let i = 0; i < 6; i++) res.write(chunk)
      res.end()
    } else if (req.url === "/slow") {
      setTimeout(() => res.end("late"), 3000)
    } else {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("nope")
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

describe("webfetch", () => {
  it("converts HTML to markdown and asks webfetch with the URL", async () => {
    const h = harness()
    const out = await run(tool, { url: `${base}/page` }, h.ctx())
    expect(out.output).toBe("# Title\n\nSome **bold** text and [a link](https://x.dev).\n\n-   one")
    expect(h.asks).toEqual([
      { permission: "webfetch", patterns: [`${base}/page`], metadata: { url: `${base}/page`, format: "markdown" } }
    ])
  })

  it("returns plain text or raw html when asked", async () => {
    const h = harness()
    const text = await run(tool, { url: `${base}/page`, format: "text" }, h.ctx())
    expect(text.output).toBe("TITLE\n\nSome bold text and a link [https://x.dev].\n\n * one")
    const html = await run(tool, { url: `${base}/page`, format: "html" }, h.ctx())
    expect(html.output.startsWith("<html><head>")).toBe(true)
    expect((await run(tool, { url: `${base}/plain` }, h.ctx())).output).toBe("just text")
    expect((await run(tool, { url: `${base}/gzip` }, h.ctx())).output).toBe("compressed text")
  })

  it("refuses other schemes, bad URLs, HTTP errors, bodies over 5 MB and slow servers", async () => {
    const h = harness()
    expect((await runError(tool, { url: "file:///etc/passwd" }, h.ctx())).message).toBe(
      "Only http:// and https:// URLs can be fetched; got file:"
    )
    expect((await runError(tool, { url: "not a url" }, h.ctx())).message).toBe(
      '"not a url" is not a valid URL. Give a full URL such as https://example.com/page.'
    )
    expect((await runError(tool, { url: `${base}/missing` }, h.ctx())).message).toBe(
      `Fetching ${base}/missing failed with HTTP 404 Not Found.`
    )
    expect((await runError(tool, { url: `${base}/big` }, h.ctx())).message).toBe(
      `The response from ${base}/big is larger than the 5 MB limit.`
    )
    expect((await runError(tool, { url: `${base}/slow`, timeout: 1 }, h.ctx())).message).toBe(
      `Fetching ${base}/slow timed out after 1 s.`
    )
  })

  it("a denied fetch never reaches the server", async () => {
    const h = harness()
    h.mode = "deny"
    const before = requests
    expect((await runError(tool, { url: `${base}/plain` }, h.ctx()))._tag).toBe("PermissionDenied")
    expect(requests).toBe(before)
  })
})
