import { execFileSync } from "node:child_process"
import { utimesSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createGlobTool } from "../src/glob.js"
import { createGrepTool } from "../src/grep.js"
import { createListTool } from "../src/list.js"
import { locateRipgrep } from "../src/ripgrep.js"
import { type Harness, harness, run, runError } from "./helpers.js"

/** A small project: a real git repo with .gitignore'd folders, files with known mtimes (newest: src/new.ts). */
const project = (): Harness => {
  const h = harness()
  execFileSync("git", ["init", "-q"], { cwd: h.root })
  h.write(".gitignore", "ignored/\n*.log\n")
  h.write("src/old.ts", "export const needle = 1\n")
  h.write("src/new.ts", "// needle here\nexport const other = 2\n")
  h.write("src/deep/a.ts", "const NEEDLE = 3\n")
  h.write("README.md", "needle in docs\n")
  h.write("ignored/hidden.ts", "needle ignored\n")
  h.write("debug.log", "needle in a log\n")
  h.write(".config/settings.ts", "needle hidden dir\n")
  h.write("node_modules/pkg/index.js", "needle dep\n")
  h.write("node_modules/.gitignore", "*\n")
  const times: Record<string, number> = {
    "src/old.ts": 1_000,
    "src/deep/a.ts": 2_000,
    "README.md": 3_000,
    ".config/settings.ts": 4_000,
    "src/new.ts": 5_000
  }
  for (const [path, t] of Object.entries(times)) utimesSync(h.path(path), t, t)
  return h
}

for (const backend of ["ripgrep", "node"] as const) {
  const ripgrep = backend === "ripgrep" ? "auto" : false
  describe(`glob (${backend})`, () => {
    it("lists matches newest first, skipping .gitignore'd files", async () => {
      const h = project()
      const out = await run(createGlobTool({ ripgrep }), { pattern: "*.ts" }, h.ctx())
      expect(out.output).toBe("src/new.ts\n.config/settings.ts\nsrc/deep/a.ts\nsrc/old.ts")
      expect(out.metadata.backend).toBe(backend)
      expect(h.asks[0]).toMatchObject({ permission: "glob", patterns: ["*.ts"] })
    })

    it("takes a path-shaped pattern and a folder", async () => {
      const h = project()
      const out = await run(createGlobTool({ ripgrep }), { pattern: "deep/*.ts", path: "src" }, h.ctx())
      expect(out.output).toBe("src/deep/a.ts")
    })

    it("caps at 100 files with a note", async () => {
      const h = harness()
      for (let i = 0; i < 130; i++) h.write(`f/${i}.txt`, "")
      const out = await run(createGlobTool({ ripgrep }), { pattern: "*.txt" }, h.ctx())
      expect(out.output.split("\n").slice(0, 100)).toHaveLength(100)
      expect(
        out.output.endsWith(
          "(Showing the 100 newest of 130 files. Use a more specific pattern or path to see the rest.)"
        )
      ).toBe(true)
    })

    it("says when nothing matched, and when the folder is missing", async () => {
      const h = project()
      expect((await run(createGlobTool({ ripgrep }), { pattern: "*.rs" }, h.ctx())).output).toBe("No files found.")
      expect((await runError(createGlobTool({ ripgrep }), { pattern: "*", path: "nope" }, h.ctx())).message).toBe(
        `Path not found: ${h.path("nope")}. Give an existing folder to search.`
      )
    })
  })

  describe(`grep (${backend})`, () => {
    it("returns path:line: text, newest files first, skipping ignored and binary files", async () => {
      const h = project()
      h.write("src/bin.dat", Buffer.from("needle\0\0binary"))
      const out = await run(createGrepTool({ ripgrep }), { pattern: "needle" }, h.ctx())
      expect(out.output).toBe(
        "src/new.ts:1: // needle here\n.config/settings.ts:1: needle hidden dir\nREADME.md:1: needle in docs\nsrc/old.ts:1: export const needle = 1"
      )
      expect(h.asks[0]).toMatchObject({ permission: "grep", patterns: ["needle"] })
    })

    it("filters by include and searches one file", async () => {
      const h = project()
      const grep = createGrepTool({ ripgrep })
      expect(
        (await run(grep, { pattern: "(?i)needle|NEEDLE", include: "*.ts", path: "src/deep" }, h.ctx())).output
      ).toBe("src/deep/a.ts:1: const NEEDLE = 3")
      expect((await run(grep, { pattern: "other", path: "src/new.ts" }, h.ctx())).output).toBe(
        "src/new.ts:2: export const other = 2"
      )
    })

    it("caps at 100 matches with a note", async () => {
      const h = harness()
      h.write("many.txt", Array.from({ length: 150 }, (_, i) => `hit ${i}`).join("\n"))
      const out = await run(createGrepTool({ ripgrep }), { pattern: "hit" }, h.ctx())
      expect(out.output.split("\n")[99]).toBe("many.txt:100: hit 99")
      expect(
        out.output.endsWith(
          "(Showing 100 of 150 matches, newest files first. Narrow the pattern, path or include to see the rest.)"
        )
      ).toBe(true)
    })

    it("answers a bad regex with a clear message", async () => {
      const h = project()
      const error = await runError(createGrepTool({ ripgrep }), { pattern: "foo(" }, h.ctx())
      expect(error.message).toMatch(/^Invalid regex pattern "foo\(": /)
      expect(error.message).toContain("with a backslash to search for them literally.")
    })
  })
}

describe("list", () => {
  it("shows a tree with default ignores and extra ignore globs", async () => {
    const h = project()
    const out = await run(createListTool(), { ignore: ["*.log"] }, h.ctx())
    expect(out.output).toBe(
      `${h.root}/\n  .config/\n    settings.ts\n  .gitignore\n  ignored/\n    hidden.ts\n  README.md\n  src/\n    deep/\n      a.ts\n    new.ts\n    old.ts`
    )
  })

  it("caps at 100 entries with a count of the rest", async () => {
    const h = harness()
    for (let i = 0; i < 120; i++) h.write(`d/${String(i).padStart(3, "0")}.txt`, "")
    const out = await run(createListTool(), { path: "d" }, h.ctx())
    expect(out.output.split("\n")).toHaveLength(1 + 100 + 2)
    expect(
      out.output.endsWith("(20 more entries not shown. List a subfolder, or use glob to find specific files.)")
    ).toBe(true)
  })

  it("refuses a file with a pointer to read", async () => {
    const h = project()
    expect((await runError(createListTool(), { path: "README.md" }, h.ctx())).message).toBe(
      "README.md is a file, not a folder. Use the read tool to see its content."
    )
  })
})

it("finds the rg binary shipped with @vscode/ripgrep", async () => {
  expect(await locateRipgrep("auto")).toMatch(/@vscode\/ripgrep-linux-x64\/bin\/rg$/)
  expect(await locateRipgrep(false)).toBeUndefined()
})
