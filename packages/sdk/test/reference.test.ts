import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { apiReference, typeOf } from "../src/reference.js"

describe("the generated API reference", () => {
  it("docs/server-api.md is current (run `npm run docs:api` after changing the API)", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "server-api.md"), "utf8")
    expect(committed).toBe(apiReference())
  })

  it("renders schemas as compact types", () => {
    expect(
      typeOf({
        type: "object",
        properties: { a: { type: "string" }, b: { type: "array", items: { enum: ["x", "y"] } } },
        required: ["a"]
      })
    ).toBe('{ a: string; b?: Array<"x" | "y"> }')
  })
})
