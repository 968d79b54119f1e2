import { Readable } from "node:stream"
import { RUN_FLAGS_SOURCE } from "@lathe/permission"
import { assert, describe, it } from "vitest"
import { PIPED_LIMIT, pipedPart, readPiped, runRules } from "../src/commands/run-input.js"

describe("runRules (--allow / --deny)", () => {
  it("reads <permission>[:<pattern>], allow before deny, marked as the run's flags", () => {
    assert.deepStrictEqual(runRules(["bash:git *", "read"], ["edit"]), [
      { permission: "bash", pattern: "git *", action: "allow", source: RUN_FLAGS_SOURCE },
      { permission: "read", pattern: "*", action: "allow", source: RUN_FLAGS_SOURCE },
      { permission: "edit", pattern: "*", action: "deny", source: RUN_FLAGS_SOURCE }
    ])
  })

  it("keeps colons after the first in the pattern (a path, a URL)", () => {
    assert.deepStrictEqual(runRules(["webfetch:https://example.com/*"]), [
      { permission: "webfetch", pattern: "https://example.com/*", action: "allow", source: RUN_FLAGS_SOURCE }
    ])
  })

  it("names a malformed rule and the syntax", () => {
    for (const bad of ["", ":x", "bash:", "ba sh", "bash :"]) {
      const result = runRules([bad])
      assert.isString(result, bad)
      assert.include(result as string, `--allow "${bad}" is not a permission rule`)
      assert.include(result as string, "<permission>[:<pattern>]")
    }
  })
})

describe("readPiped", () => {
  const stream = (...chunks: Array<Buffer | string>) => Readable.from(chunks.map((c) => Buffer.from(c)))

  it("reads text; an empty stream is no text", async () => {
    assert.deepStrictEqual(await readPiped(stream("a\n", "b\n"), false, true), { text: "a\nb\n" })
    assert.deepStrictEqual(await readPiped(stream(), false, true), { text: "" })
  })

  it("leaves a terminal alone", async () => {
    assert.deepStrictEqual(await readPiped(stream("typed"), true, true), { text: "" })
  })

  it("refuses NUL bytes, invalid UTF-8 and more than the limit", async () => {
    for (const bytes of [Buffer.from([0x61, 0, 0x62]), Buffer.from([0xc3, 0x28])]) {
      const read = await readPiped(stream(bytes), false, true)
      assert.include("error" in read ? read.error : "", "stdin is not text")
    }
    const big = await readPiped(stream("x".repeat(PIPED_LIMIT), "y"), false, true)
    assert.include("error" in big ? big.error : "", `(${PIPED_LIMIT} bytes)`)
    const exact = await readPiped(stream("x".repeat(PIPED_LIMIT)), false, true)
    assert.strictEqual("text" in exact ? exact.text.length : 0, PIPED_LIMIT)
  })

  it("the piped part names stdin and keeps the text whole", () => {
    const part = pipedPart("line 1\nline 2\n")
    assert.strictEqual(part.type, "text")
    assert.include(part.type === "text" ? part.text : "", "<stdin>\nline 1\nline 2\n</stdin>")
  })
})
