import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { normalizeHeaders, withUserAgentSuffix } from "@ai-sdk/provider-utils"
import { assert, describe, it, onTestFinished } from "vitest"

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
}

interface Outcome {
  readonly normalized: Record<string, string>
  readonly suffixed: Record<string, string>
  readonly sent: Record<string, string | undefined>
  readonly answer: unknown
  readonly responseHeaders: Record<string, string>
  readonly undiciAfterSuccess: boolean
  readonly error: { readonly statusCode: number; readonly retryAfter: string | undefined; readonly body: string }
  readonly realHeaders: Record<string, string>
}

// The CLI bundle rewrites two AI SDK helpers so that a request through `nodeFetch` never loads undici (Node's fetch).
describe("the CLI bundle's AI SDK headers without undici", () => {
  it("sends and answers as the SDK does, and loads undici for neither a request nor its answer", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-headers-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const httpFetch = fileURLToPath(new URL("../../core/src/provider/http-fetch.ts", import.meta.url))
    const entry = join(dir, "entry.mjs")
    writeFileSync(
      entry,
      // node:http by getBuiltinModule: an ES import of it evaluates undici's lazy WebSocket export (see bundle.e2e).
      `const { createServer } = process.getBuiltinModule("node:http")
import { z } from "zod"
import { createJsonErrorResponseHandler, createJsonResponseHandler, normalizeHeaders, postJsonToApi, withUserAgentSuffix } from "@ai-sdk/provider-utils"
import { nodeFetch } from ${JSON.stringify(httpFetch)}
const undici = () => process.moduleLoadList.some((name) => name.includes("undici"))
let sent
const server = createServer((request, response) => {
  if (request.url === "/ok") sent = { "x-custom": request.headers["x-custom"], "user-agent": request.headers["user-agent"], skip: request.headers.skip }
  request.resume()
  request.on("end", () => {
    if (request.url === "/bad") {
      response.writeHead(429, { "content-type": "application/json", "retry-after": "3" })
      response.end('{"error":{"message":"slow down"}}')
    } else {
      response.writeHead(200, { "content-type": "application/json", "X-Request-Id": "r1" })
      response.end('{"value":7}')
    }
  })
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = "http://127.0.0.1:" + server.address().port
const normalized = normalizeHeaders([["X-A", "1"], ["skip", undefined]])
const suffixed = withUserAgentSuffix({ "User-Agent": "lathe/1", gone: undefined }, "sdk/2")
const errorHandler = createJsonErrorResponseHandler({
  errorSchema: z.object({ error: z.object({ message: z.string() }) }),
  errorToMessage: (data) => data.error.message
})
const ok = await postJsonToApi({
  url: base + "/ok", headers: { "X-Custom": "yes", skip: undefined }, body: { a: 1 }, fetch: nodeFetch,
  failedResponseHandler: errorHandler, successfulResponseHandler: createJsonResponseHandler(z.object({ value: z.number() }))
})
const undiciAfterSuccess = undici()
let error
try {
  await postJsonToApi({ url: base + "/bad", headers: {}, body: {}, fetch: nodeFetch, failedResponseHandler: errorHandler,
    successfulResponseHandler: createJsonResponseHandler(z.object({})) })
} catch (caught) {
  error = { statusCode: caught.statusCode, retryAfter: caught.responseHeaders?.["retry-after"], body: caught.responseBody }
}
server.close()
const realHeaders = normalizeHeaders(new Headers({ "X-Real": "1" }))
process.stdout.write(JSON.stringify({ normalized, suffixed, sent, answer: ok.value, responseHeaders: ok.responseHeaders, undiciAfterSuccess, error, realHeaders }))
`
    )
    const outdir = join(dir, "out")
    const nodePaths = [fileURLToPath(new URL("../../../node_modules", import.meta.url))]
    await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), nodePaths, logLevel: "silent" })
    const out = JSON.parse(execFileSync(process.execPath, [join(outdir, "entry.js")], { encoding: "utf8" })) as Outcome
    // The same results as the SDK's own helpers (run here, unbundled, with undici's Headers).
    assert.deepStrictEqual(
      out.normalized,
      normalizeHeaders([
        ["X-A", "1"],
        ["skip", undefined as unknown as string]
      ])
    )
    assert.deepStrictEqual(out.suffixed, withUserAgentSuffix({ "User-Agent": "lathe/1", gone: undefined }, "sdk/2"))
    assert.deepStrictEqual(out.realHeaders, { "x-real": "1" })
    assert.strictEqual(out.sent["x-custom"], "yes")
    assert.isUndefined(out.sent.skip)
    assert.match(out.sent["user-agent"] ?? "", /^ai-sdk-provider-utils\/\S+ node\.js\/\d/)
    assert.deepStrictEqual(out.answer, { value: 7 })
    assert.strictEqual(out.responseHeaders["x-request-id"], "r1")
    assert.strictEqual(out.responseHeaders["content-type"], "application/json")
    assert.isFalse(out.undiciAfterSuccess, "a successful request and its answer load no undici")
    assert.deepStrictEqual(out.error, { statusCode: 429, retryAfter: "3", body: '{"error":{"message":"slow down"}}' })
  }, 60_000)
})
