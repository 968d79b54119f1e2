import { assert, describe, it } from "vitest"
import { NodeResponse } from "../src/provider/node-response.js"

const stream = (...chunks: Array<string>) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
      controller.close()
    }
  })

const answer = (body: ReadableStream<Uint8Array> | null, status = 200) =>
  new NodeResponse(body, {
    status,
    statusText: status === 200 ? "OK" : "Too Many Requests",
    url: "http://127.0.0.1:1/v1/chat/completions",
    headers: [
      ["Content-Type", "application/json"],
      ["X-Trace", " a "],
      ["x-trace", "b"],
      ["Set-Cookie", "one=1"],
      ["set-cookie", "two=2"]
    ]
  })

describe("NodeResponse", () => {
  it("has fetch's headers: lower-case names, repeats joined, cookies apart, name order, read-only", () => {
    const response = answer(null)
    const headers = response.headers
    assert.strictEqual(Object.prototype.toString.call(headers), "[object Headers]")
    assert.strictEqual(headers.get("x-trace"), "a, b")
    assert.strictEqual(headers.get("CONTENT-TYPE"), "application/json")
    assert.isNull(headers.get("missing"))
    assert.isTrue(headers.has("Set-Cookie"))
    assert.deepStrictEqual(headers.getSetCookie(), ["one=1", "two=2"])
    // The same entries as undici's Headers gives for the same list.
    const real = new Headers([
      ["Content-Type", "application/json"],
      ["X-Trace", " a "],
      ["x-trace", "b"],
      ["Set-Cookie", "one=1"],
      ["set-cookie", "two=2"]
    ])
    assert.deepStrictEqual([...headers], [...real])
    assert.deepStrictEqual(Object.fromEntries(headers), Object.fromEntries(real.entries()))
    assert.deepStrictEqual([...headers.keys()], [...real.keys()])
    const seen: Array<string> = []
    headers.forEach((value, name) => {
      seen.push(`${name}=${value}`)
    })
    assert.deepStrictEqual(
      seen,
      [...real].map(([name, value]) => `${name}=${value}`)
    )
    assert.throws(() => headers.set("x", "y"), TypeError, /immutable/)
    assert.throws(() => headers.append("x", "y"), TypeError, /immutable/)
    assert.throws(() => headers.delete("x-trace"), TypeError, /immutable/)
  })

  it("serves status and the body stream itself, and the rest through a real Response over the same body", async () => {
    const ok = answer(stream('{"value":', "7}"))
    assert.isTrue(ok.ok)
    assert.strictEqual(ok.status, 200)
    assert.strictEqual(ok.statusText, "OK")
    assert.strictEqual(ok.type, "basic")
    assert.isFalse(ok.redirected)
    assert.strictEqual(ok.url, "http://127.0.0.1:1/v1/chat/completions")
    assert.isFalse(ok.bodyUsed)
    assert.deepStrictEqual(await ok.json(), { value: 7 })
    assert.isTrue(ok.bodyUsed)
    await ok.text().then(
      () => assert.fail("a body reads once"),
      (error: unknown) => assert.instanceOf(error, TypeError)
    )

    const limited = answer(stream("slow ", "down"), 429)
    assert.isFalse(limited.ok)
    const copy = limited.clone()
    assert.strictEqual(await copy.text(), "slow down")
    assert.strictEqual(copy.headers.get("x-trace"), "a, b")
    assert.strictEqual(await limited.text(), "slow down")

    const reader = answer(stream("a", "b")).body?.getReader()
    const parts: Array<string> = []
    for (let next = await reader?.read(); next && !next.done; next = await reader?.read())
      parts.push(new TextDecoder().decode(next.value))
    assert.deepStrictEqual(parts, ["a", "b"])

    const empty = answer(null)
    assert.isNull(empty.body)
    assert.strictEqual(await empty.text(), "")
  })
})
