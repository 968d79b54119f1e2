import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { configuredFormatters, findBinary, formatterFor } from "../src/formatters.js"
import { binDir, tempProject } from "./helpers.js"

describe("configuredFormatters", () => {
  it("finds biome, prettier and ruff from the project's own config files", async () => {
    expect(await configuredFormatters(tempProject({ "biome.jsonc": "{}" }))).toEqual(["biome", "gofmt", "rustfmt"])
    expect(await configuredFormatters(tempProject({ ".prettierrc.yaml": "" }))).toContain("prettier")
    expect(await configuredFormatters(tempProject({ "prettier.config.mjs": "" }))).toContain("prettier")
    expect(await configuredFormatters(tempProject({ "package.json": '{ "prettier": {} }' }))).toContain("prettier")
    expect(await configuredFormatters(tempProject({ "ruff.toml": "" }))).toContain("ruff")
    expect(await configuredFormatters(tempProject({ "pyproject.toml": "[tool.ruff.lint]\nselect = []\n" }))).toContain(
      "ruff"
    )
  })

  it("finds none of them without config (gofmt and rustfmt need none)", async () => {
    const root = tempProject({
      "package.json": '{ "name": "x", "devDependencies": { "prettier": "3" } }',
      "pyproject.toml": "[tool.black]\n# [tool.ruff] in a comment does not count\n"
    })
    expect(await configuredFormatters(root)).toEqual(["gofmt", "rustfmt"])
    expect(await configuredFormatters(tempProject({ "package.json": "{ not json" }))).toEqual(["gofmt", "rustfmt"])
    expect(await configuredFormatters(join(tempProject(), "missing"))).toEqual(["gofmt", "rustfmt"])
  })
})

describe("formatterFor", () => {
  it("picks the first configured formatter that handles the extension", () => {
    const all = ["biome", "prettier", "ruff", "gofmt", "rustfmt"] as const
    expect(formatterFor("src/a.TS", all)?.name).toBe("biome")
    expect(formatterFor("README.md", all)?.name).toBe("prettier")
    expect(formatterFor("a.py", all)?.name).toBe("ruff")
    expect(formatterFor("main.go", all)?.name).toBe("gofmt")
    expect(formatterFor("lib.rs", all)?.name).toBe("rustfmt")
    expect(formatterFor("a.py", ["gofmt", "rustfmt"])).toBeUndefined()
    expect(formatterFor("notes.txt", all)).toBeUndefined()
  })
})

describe("findBinary", () => {
  it("prefers the project's node_modules/.bin over PATH, and finds nothing when neither has it", async () => {
    const root = tempProject()
    const onPath = binDir("prettier", "exit 0")
    expect(await findBinary(root, "prettier", { PATH: onPath })).toBe(join(onPath, "prettier"))
    mkdirSync(join(root, "node_modules", ".bin"), { recursive: true })
    writeFileSync(join(root, "node_modules", ".bin", "prettier"), "#!/bin/sh\n", { mode: 0o755 })
    expect(await findBinary(root, "prettier", { PATH: onPath })).toBe(join(root, "node_modules", ".bin", "prettier"))
    expect(await findBinary(root, "ruff", { PATH: onPath })).toBeUndefined()
  })

  it("ignores a file that is not executable", async () => {
    const dir = binDir("ruff", "exit 0")
    chmodSync(join(dir, "ruff"), 0o644)
    expect(await findBinary(tempProject(), "ruff", { PATH: dir })).toBeUndefined()
  })
})
