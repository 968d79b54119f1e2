/**
 * `lathe config schema` prints lathe.json's JSON Schema (generated from the loader's zod schema); the bundle ships the
 * same file; a standard validator (Ajv, draft 2020-12, strict) takes the docs' lathe.json examples and refuses a
 * bad key, as the loader does.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import { type ParseError, parse } from "jsonc-parser"
import { assert, beforeAll, describe, expect, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const shipped = fileURLToPath(new URL("../dist/bundle/lathe.schema.json", import.meta.url))

/** A fenced ```json / ```jsonc block of a Markdown file, with where it starts. */
interface Block {
  readonly where: string
  readonly value: unknown
}

/** Every ```json and ```jsonc block of README.md and docs/*.md that parses (as JSONC) to one value. */
const docBlocks = (): ReadonlyArray<Block> => {
  const files = [
    "README.md",
    ...readdirSync(join(repo, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`)
  ]
  return files.flatMap((file) => {
    const text = readFileSync(join(repo, file), "utf8")
    return [...text.matchAll(/^```jsonc?\n([\s\S]*?)^```/gm)].flatMap((match) => {
      const errors: Array<ParseError> = []
      const value: unknown = parse(match[1] ?? "", errors, { allowTrailingComma: true })
      const line = text.slice(0, match.index).split("\n").length
      return errors.length === 0 ? [{ where: `${file}:${line}`, value }] : []
    })
  })
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

describe("lathe config schema", () => {
  let schema: Record<string, unknown>
  let validate: ValidateFunction
  const box = sandbox()

  beforeAll(async () => {
    const run = await runLathe(["config", "schema"], { cwd: box.project, env: box.env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    schema = JSON.parse(run.stdout)
    // Strict: a keyword or format the validator does not know fails the compile (zod's own formats are left out).
    validate = new Ajv2020({ strict: true, allErrors: true, formats: { uri: true } }).compile(schema)
  }, 60_000)

  it("is a draft 2020-12 schema of every key, refusing others", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    expect(schema.additionalProperties).toBe(false)
    const keys = Object.keys(schema.properties as object)
    for (const key of ["$schema", "model", "provider", "permission", "agent", "mcp", "sandbox"])
      expect(keys).toContain(key)
  })

  it("is the file the bundle ships", () => {
    assert.isTrue(existsSync(shipped), `${shipped} is missing: run npx nx run @lathe/cli:bundle`)
    expect(JSON.parse(readFileSync(shipped, "utf8"))).toEqual(schema)
  })

  it("takes every lathe.json example of the docs", () => {
    const keys = new Set(Object.keys(schema.properties as object))
    // A block is a lathe.json when it is an object with a lathe.json key (not an event, a .mcp.json, a JSON Schema).
    const examples = docBlocks().filter(
      ({ value }) => isObject(value) && Object.keys(value).some((key) => key !== "type" && keys.has(key))
    )
    expect(examples.length).toBeGreaterThanOrEqual(5)
    const refused = examples.flatMap(({ where, value }) =>
      validate(value) ? [] : [`${where}: ${JSON.stringify(validate.errors)}`]
    )
    expect(refused).toEqual([])
  })

  it("refuses a bad key where the loader does, and both take a $schema line", async () => {
    const good = { $schema: "./node_modules/@lathe/cli/dist/bundle/lathe.schema.json", model: "a/b" }
    expect(validate(good)).toBe(true)
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify(good))
    const loaded = await runLathe(["config", "--json"], { cwd: box.project, env: box.env })
    expect(loaded.code).toBe(0)

    const typo = { model: "a/b", sandbox: { mode: "read-only", netwrok: true } }
    expect(validate(typo)).toBe(false)
    // `sandbox` is a string or an object (anyOf): the object branch names the key.
    expect(validate.errors).toContainEqual(
      expect.objectContaining({
        keyword: "additionalProperties",
        instancePath: "/sandbox",
        params: { additionalProperty: "netwrok" }
      })
    )
    expect(validate({ modle: "a/b" })).toBe(false)
    expect(validate({ provider: { p: { models: { m: { context: -1 } } } } })).toBe(false)
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify(typo))
    const refused = await runLathe(["config"], { cwd: box.project, env: box.env })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("netwrok")
  }, 60_000)
})
