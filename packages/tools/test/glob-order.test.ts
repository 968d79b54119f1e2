import { execFileSync } from "node:child_process"
import { utimesSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createGlobTool, NewestFiles } from "../src/glob.js"
import { listingThreads, locateRipgrep } from "../src/ripgrep.js"
import { harness, run, runError } from "./helpers.js"

/** Sets a file's mtime to the nanosecond (Node's utimes goes through a double, which cannot). */
const touchNs = (path: string, stamp: string): void => {
  execFileSync("touch", ["-m", "-d", `@${stamp}`, path])
}

/** What the tool promises: newest first, equal mtimes by path in code-unit order. */
const expectedOrder = (files: ReadonlyArray<readonly [string, number]>): Array<string> =>
  [...files].sort(([pa, ta], [pb, tb]) => tb - ta || (pa < pb ? -1 : pa > pb ? 1 : 0)).map(([path]) => path)

describe("NewestFiles", () => {
  it("keeps the newest, counts all, and orders the same whatever the arrival order", () => {
    const h = harness()
    const files: Array<readonly [string, number]> = []
    for (let i = 0; i < 40; i++) {
      const path = `d${i % 3}/f${i}.txt`
      const t = 1_000 + (i % 7) // many ties
      utimesSync(h.write(path, ""), t, t)
      files.push([path, t])
    }
    const want = expectedOrder(files).slice(0, 10)
    for (const order of [
      files,
      [...files].reverse(),
      files.filter((_, i) => i % 2).concat(files.filter((_, i) => !(i % 2)))
    ]) {
      const newest = new NewestFiles(h.root, 10)
      for (const [path] of order) newest.add(path)
      expect(newest.total).toBe(40)
      expect(newest.paths).toEqual(want)
    }
  })

  it("puts files that cannot be stat'ed after every real one", () => {
    const h = harness()
    utimesSync(h.write("old.txt", ""), 1, 1)
    const newest = new NewestFiles(h.root, 3)
    for (const path of ["gone-b.txt", "old.txt", "gone-a.txt"]) newest.add(path)
    expect(newest.paths).toEqual(["old.txt", "gone-a.txt", "gone-b.txt"])
    expect(newest.total).toBe(3)
  })

  it("refuses a limit that could keep nothing", () => {
    expect(() => new NewestFiles("/", 0)).toThrow("NewestFiles keeps at least 1 file, not 0.")
    expect(() => new NewestFiles("/", 2.5)).toThrow("NewestFiles keeps at least 1 file, not 2.5.")
  })

  it("compares mtimes to the nanosecond, not to a millisecond double", () => {
    const h = harness()
    // 100 ns apart: the same `mtimeMs` double, so only nanoseconds put the newer b.ts before a.ts.
    touchNs(h.write("a.ts", ""), "1700000000.123456789")
    touchNs(h.write("b.ts", ""), "1700000000.123456889")
    const newest = new NewestFiles(h.root)
    newest.add("a.ts")
    newest.add("b.ts")
    expect(newest.paths).toEqual(["b.ts", "a.ts"])
  })
})

it("leaves one core to the stat loop, within rg's own limits", () => {
  expect([1, 2, 3, 8, 64].map((cores) => listingThreads(cores))).toEqual([1, 1, 2, 7, 12])
})

for (const backend of ["ripgrep", "node"] as const) {
  const ripgrep = backend === "ripgrep" ? "auto" : false
  describe(`glob order (${backend})`, () => {
    it("breaks equal mtimes by path, and truncates after the 100 first of that order", async () => {
      const h = harness()
      const files: Array<readonly [string, number]> = []
      // Written in an order unlike the path order; two mtimes only, so nearly everything ties.
      for (let i = 129; i >= 0; i--) {
        const path = `${i % 2 ? "b" : "a"}/${i}.txt`
        const t = i % 5 === 0 ? 2_000 : 1_000
        utimesSync(h.write(path, ""), t, t)
        files.push([path, t])
      }
      const out = await run(createGlobTool({ ripgrep }), { pattern: "*.txt" }, h.ctx())
      expect(out.output).toBe(
        `${expectedOrder(files).slice(0, 100).join("\n")}\n\n` +
          "(Showing the 100 newest of 130 files. Use a more specific pattern or path to see the rest.)"
      )
      expect(out.metadata).toMatchObject({ count: 130, truncated: true, backend })
    })

    it("lists a file whose name holds a newline as one file", async () => {
      const h = harness()
      utimesSync(h.write("odd\nname.md", ""), 2, 2)
      utimesSync(h.write("plain.md", ""), 1, 1)
      const out = await run(createGlobTool({ ripgrep }), { pattern: "*.md" }, h.ctx())
      expect(out.output).toBe("odd\nname.md\nplain.md")
      expect(out.metadata.count).toBe(2)
    })
  })
}

describe("glob (ripgrep) against rg's own newest-first sort", () => {
  it("returns what rg --sortr modified returns when mtimes differ", async () => {
    const rg = await locateRipgrep("auto")
    if (rg === undefined) throw new Error("the rg binary of @vscode/ripgrep is missing: run npm install")
    const h = harness()
    execFileSync("git", ["init", "-q"], { cwd: h.root })
    h.write(".gitignore", "build/\n*.log\n")
    const paths = ["src/a.ts", "src/deep/b.ts", "src/deep/c.tsx", ".hidden/d.ts", "build/e.ts", "x.log", "README.md"]
    for (let i = 0; i < 60; i++) paths.push(`pkg${i % 4}/m${i}/f${i}.${i % 3 ? "ts" : "md"}`)
    // Distinct nanosecond mtimes (919 is prime to 1000), in an order unlike the paths'.
    for (const [i, path] of paths.entries())
      touchNs(h.write(path, ""), `1700000000.${String((i * 919) % 1000).padStart(9, "0")}`)
    for (const [pattern, path] of [
      ["*.ts", "."],
      ["*.{ts,tsx}", "."],
      ["deep/*", "src"],
      ["*.md", "."],
      ["pkg1/**", "."]
    ] as const) {
      const sorted = execFileSync(
        rg,
        ["--files", "--hidden", "--glob", "!.git", "--glob", pattern, "--sortr", "modified"],
        {
          cwd: h.path(path),
          encoding: "utf8"
        }
      )
      const want = sorted.trim().split("\n").slice(0, 100)
      const out = await run(createGlobTool({ ripgrep: "auto" }), { pattern, path }, h.ctx())
      const prefix = path === "." ? "" : `${path}/`
      expect(out.output.split("\n\n")[0]).toBe(want.map((p) => `${prefix}${p}`).join("\n"))
    }
  })

  it("answers a malformed glob with rg's reason", async () => {
    const h = harness()
    h.write("a.ts", "")
    expect((await runError(createGlobTool({ ripgrep: "auto" }), { pattern: "{a" }, h.ctx())).message).toMatch(
      /^Invalid glob "\{a": .+/
    )
  })
})

describe("glob never lists .git", () => {
  it("a match-everything pattern leaves the .git folder out", async () => {
    const h = harness()
    h.write("src/a.ts", "a")
    h.write(".git/HEAD", "ref: refs/heads/main\n")
    h.write(".git/objects/ab/cdef", "x")
    for (const pattern of ["*", "**", "**/*"]) {
      const out = await run(createGlobTool({ ripgrep: "auto" }), { pattern }, h.ctx())
      expect(out.output).not.toContain(".git/")
      expect(out.output).toContain("a.ts")
    }
  })
})
