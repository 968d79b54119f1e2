import { fstatSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { mayHoldId, readCatalogFd, readCatalogFile, writeCatalogFile } from "../src/catalog/catalog-file.js"
import { CatalogIndex } from "../src/catalog/catalog-index.js"
import type { CatalogData } from "../src/catalog/models-dev.js"

const shipped = JSON.parse(
  readFileSync(fileURLToPath(new URL("../src/catalog/snapshot.json", import.meta.url)), "utf8")
) as CatalogData

const row = (name: string, context: number) => [name, context, null, 1, 2, null, null, 10, 1, null, null]
const small: CatalogData = {
  columns: ["name"],
  providers: {
    acme: { name: "Acme", env: ["ACME_KEY"], models: JSON.stringify({ "Acme-Coder": row("Coder", 1_000) }) },
    "été-ai": { name: "Été", models: JSON.stringify({ "modèle-ü": row("Modèle ü", 2_000) }) }
  }
} as CatalogData

describe("the catalogue file", () => {
  it("reads back what was written: details, rows as text, ids lower-cased (multi-byte text included)", () => {
    const data = readCatalogFile(writeCatalogFile(small))
    assert.deepStrictEqual(data.columns, ["name"])
    assert.deepStrictEqual(
      { ...data.providers.acme },
      { name: "Acme", env: ["ACME_KEY"], models: small.providers.acme?.models ?? "", ids: "acme-coder" }
    )
    assert.strictEqual(data.providers["été-ai"]?.models, small.providers["été-ai"]?.models)
    assert.strictEqual(data.providers["été-ai"]?.ids, "modèle-ü")
  })

  it("decodes a provider's rows only when they are read", () => {
    const data = readCatalogFile(writeCatalogFile(shipped))
    const anthropic = data.providers.anthropic
    if (anthropic === undefined) throw new Error("no anthropic in the snapshot")
    assert.isFunction(Object.getOwnPropertyDescriptor(anthropic, "models")?.get)
    const text = anthropic.models
    assert.strictEqual(text, shipped.providers.anthropic?.models)
    // Decoded once, then kept as a plain value.
    assert.strictEqual(Object.getOwnPropertyDescriptor(anthropic, "models")?.value, text)
    assert.isFunction(Object.getOwnPropertyDescriptor(data.providers.openai ?? {}, "models")?.get)
  })

  it("answers every look-up as the snapshot does, searching ids for a model asked for without its provider", () => {
    const fromFile = new CatalogIndex(readCatalogFile(writeCatalogFile(shipped)))
    const fromSnapshot = new CatalogIndex(shipped)
    for (const [provider, model] of [
      ["anthropic", "claude-sonnet-4-5"],
      [undefined, "claude-sonnet-4-5-20250929"],
      ["myproxy", "gpt-4.1"],
      ["openrouter", "openai/gpt-5"],
      ["ollama", "qwen3:8b"],
      ["env", "no-such-model-anywhere"]
    ] as const)
      assert.deepStrictEqual(fromFile.find(provider, model), fromSnapshot.find(provider, model), `${provider}/${model}`)
    assert.deepStrictEqual(fromFile.providers(), fromSnapshot.providers())
  })

  it("answers a model no provider lists from the ids' bytes, making no provider's ids or rows a string", () => {
    const data = readCatalogFile(writeCatalogFile(shipped))
    const undecoded = () =>
      Object.values(data.providers).filter(
        (provider) =>
          Object.getOwnPropertyDescriptor(provider, "ids")?.get !== undefined &&
          Object.getOwnPropertyDescriptor(provider, "models")?.get !== undefined
      ).length
    const all = Object.keys(data.providers).length
    assert.strictEqual(new CatalogIndex(data).find("env", "my-local-model-7b"), undefined)
    assert.strictEqual(undecoded(), all)
    // A model some provider lists is still found through its ids.
    assert.strictEqual(new CatalogIndex(data).find("myproxy", "gpt-4.1")?.providerID, "openai")
    assert.isBelow(undecoded(), all)
  })

  it("says an id may be there exactly when some provider's ids contain it (no miss; multi-byte text too)", () => {
    const data = readCatalogFile(writeCatalogFile(small))
    for (const text of ["acme-coder", "coder", "modèle-ü", "è"]) assert.isTrue(mayHoldId(data, text), text)
    for (const text of ["Acme-Coder", "zeta", "modele-u"]) assert.isFalse(mayHoldId(data, text), text)
    // The ids are written after every provider's rows: one run of bytes, the rows' text never searched.
    const head = JSON.parse(writeCatalogFile(small).toString("utf8").split("\n")[0] ?? "{}") as {
      providers: Record<string, { models: [number, number]; ids: [number, number] }>
    }
    const ranges = Object.values(head.providers)
    const lastRow = Math.max(...ranges.map(({ models: [at, length] }) => at + length))
    assert.isTrue(ranges.every(({ ids: [at] }) => at >= lastRow))
    assert.isFalse(mayHoldId(data, "Coder"))
    // A catalogue not read from a file: its ids are searched.
    assert.isTrue(mayHoldId(small, "anything"))
  })

  it("reads an open file as the bytes, each part when looked at, from the file it opened", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-catalog-file-"))
    try {
      const path = join(dir, "models.dat")
      writeFileSync(path, writeCatalogFile(shipped))
      const data = readCatalogFd(openSync(path, "r"))
      // A refresh renames a new copy over the path: the catalogue keeps reading the file it opened.
      writeFileSync(join(dir, "next.dat"), writeCatalogFile(small))
      renameSync(join(dir, "next.dat"), path)
      const fromFile = new CatalogIndex(data)
      const fromSnapshot = new CatalogIndex(shipped)
      for (const [provider, model] of [
        ["anthropic", "claude-sonnet-4-5"],
        ["myproxy", "gpt-4.1"],
        ["env", "no-such-model-anywhere"]
      ] as const)
        assert.deepStrictEqual(
          fromFile.find(provider, model),
          fromSnapshot.find(provider, model),
          `${provider}/${model}`
        )
      assert.deepStrictEqual(fromFile.providers(), fromSnapshot.providers())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("reads a first line longer than its first read, and closes the file when it cannot read it", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-catalog-file-"))
    try {
      const many: CatalogData = {
        columns: ["name"],
        providers: Object.fromEntries(
          Array.from({ length: 2_000 }, (_, i) => [
            `provider-${i}`,
            { name: `Provider ${i}`, models: JSON.stringify({ [`Model-${i}`]: row(`M${i}`, i) }) }
          ])
        )
      } as CatalogData
      const path = join(dir, "many.dat")
      const bytes = writeCatalogFile(many)
      assert.isAbove(bytes.indexOf(10), 64 * 1024)
      writeFileSync(path, bytes)
      const data = readCatalogFd(openSync(path, "r"))
      assert.strictEqual(data.providers["provider-1999"]?.ids, "model-1999")
      assert.isTrue(mayHoldId(data, "model-1234"))
      assert.isFalse(mayHoldId(data, "model-2000"))

      writeFileSync(path, bytes.subarray(0, bytes.length - 5))
      const fd = openSync(path, "r")
      assert.throws(() => readCatalogFd(fd), /bytes after its first line/)
      assert.throws(() => fstatSync(fd), /EBADF/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("refuses a file cut short, a first line that is not the format's, or a range outside the file", () => {
    const whole = writeCatalogFile(small)
    assert.throws(() => readCatalogFile(whole.subarray(0, whole.length - 3)), /bytes after its first line/)
    assert.throws(() => readCatalogFile(Buffer.from("no newline")), /no first line/)
    assert.throws(() => readCatalogFile(Buffer.from('{"bytes":0}\n')), /no columns or providers/)
    const head = JSON.stringify({
      columns: [],
      providers: { x: { name: "X", models: [0, 99], ids: [0, 0] } },
      bytes: 4
    })
    assert.throws(() => readCatalogFile(Buffer.from(`${head}\n{}{}`)), /provider "x" has no models or ids range/)
  })
})
