import { createHash } from "node:crypto"
import { assert, describe, it } from "vitest"
import { sha1Hex } from "../src/config/sha1.js"

const reference = (text: string) => createHash("sha1").update(text, "utf8").digest("hex")

describe("sha1Hex", () => {
  it("gives the published digests", () => {
    assert.strictEqual(sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    assert.strictEqual(sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d")
    assert.strictEqual(
      sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
    )
  })

  it("matches node:crypto around every block boundary and for non-ASCII paths", () => {
    for (let length = 0; length <= 200; length++) {
      const text = "/home/someone/project-".padEnd(length, "x").slice(0, length)
      assert.strictEqual(sha1Hex(text), reference(text), `length ${length}`)
    }
    for (const text of ["/Users/zoë/プロジェクト", "C:\\Users\\Ølaf\\code", "/tmp/🦀/crab", "\u0000\uffff"])
      assert.strictEqual(sha1Hex(text), reference(text), text)
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed
    }
    for (let i = 0; i < 300; i++) {
      const text = String.fromCodePoint(...Array.from({ length: random() % 300 }, () => 32 + (random() % 0x2fff)))
      assert.strictEqual(sha1Hex(text), reference(text))
    }
  })

  it("hashes a long path the same as node:crypto (several blocks)", () => {
    const text = "/very/deep".repeat(1000)
    assert.strictEqual(sha1Hex(text), reference(text))
  })
})
