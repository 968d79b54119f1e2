import { assert, describe, it } from "vitest"
import { groupDigits } from "../src/catalog/group-digits.js"

describe("groupDigits", () => {
  it("writes every number as toLocaleString('en-US') does", () => {
    const powers = Array.from({ length: 16 }, (_, i) => 10 ** i)
    const numbers = [
      ...powers.flatMap((p) => [p, p - 1, p + 1, -p, 7 * p]),
      0,
      -0,
      128_000,
      200_000,
      1_048_576,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      // Not safe integers: left to toLocaleString, so still the same text.
      1234.5678,
      -0.5,
      2 ** 60,
      Number.POSITIVE_INFINITY,
      Number.NaN
    ]
    for (const n of numbers) assert.strictEqual(groupDigits(n), n.toLocaleString("en-US"), String(n))
  })

  it("groups by three from the right", () => {
    assert.strictEqual(groupDigits(1234567), "1,234,567")
    assert.strictEqual(groupDigits(-1000), "-1,000")
    assert.strictEqual(groupDigits(999), "999")
  })
})
