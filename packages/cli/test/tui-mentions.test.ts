import { execFileSync } from "node:child_process"
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { fuzzyFiles, listFiles, mentionAt, mentionedFiles } from "../src/tui/mentions.js"

let dir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lathe-mentions-"))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const write = async (root: string, files: Record<string, string>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
}
const git = (cwd: string, ...args: Array<string>): void => {
  execFileSync("git", args, { cwd, stdio: "ignore" })
}

describe("mentionAt", () => {
  it("finds the @query the cursor ends", () => {
    assert.deepStrictEqual(mentionAt("@src/a", 6), { start: 0, query: "src/a" })
    assert.deepStrictEqual(mentionAt("look at @pa", 11), { start: 8, query: "pa" })
    assert.deepStrictEqual(mentionAt("one\n@x", 6), { start: 4, query: "x" })
    assert.deepStrictEqual(mentionAt("a @", 3), { start: 2, query: "" })
    // The cursor inside the token: the query is what precedes it.
    assert.deepStrictEqual(mentionAt("@abc def", 3), { start: 0, query: "ab" })
  })

  it("ignores an @ inside a word, a finished token and plain words", () => {
    assert.strictEqual(mentionAt("me@example.com", 14), undefined)
    assert.strictEqual(mentionAt("@src/a.ts then", 14), undefined)
    assert.strictEqual(mentionAt("@src/a.ts ", 10), undefined)
    assert.strictEqual(mentionAt("plain", 5), undefined)
    assert.strictEqual(mentionAt("", 0), undefined)
  })
})

describe("listFiles", () => {
  it("lists tracked and untracked files of a git work tree, respecting .gitignore", async () => {
    git(dir, "init", "-q")
    await write(dir, {
      ".gitignore": "ignored/\n*.log\n",
      "src/tracked.ts": "",
      "src/untracked.ts": "",
      "ignored/x.ts": "",
      "debug.log": "",
      "with space.md": ""
    })
    git(dir, "add", ".gitignore", "src/tracked.ts")
    const files = [...(await listFiles(dir))].sort()
    assert.deepStrictEqual(files, [".gitignore", "src/tracked.ts", "src/untracked.ts", "with space.md"])
  })

  it("lists a subfolder of a work tree relative to that subfolder", async () => {
    git(dir, "init", "-q")
    await write(dir, { "pkg/a.ts": "", "other/b.ts": "" })
    assert.deepStrictEqual(await listFiles(join(dir, "pkg")), ["a.ts"])
  })

  it("walks a folder outside git, skipping node_modules, .git and dist, shallow files first", async () => {
    await write(dir, {
      "z.txt": "",
      "src/deep/b.ts": "",
      "src/a.ts": "",
      "node_modules/dep/index.js": "",
      "dist/out.js": "",
      ".git/config": ""
    })
    assert.deepStrictEqual(await listFiles(dir), ["z.txt", "src/a.ts", "src/deep/b.ts"])
  })
})

const realistic = [
  "packages/x/src/tui-old/readme-app.md",
  "src/tui/app.tsx",
  "src/application/config.ts",
  "apps/web/package.json",
  "src/tui/editor.ts",
  "src/tui/history.ts",
  "docs/api/a-p-p.md",
  "test/tui-editor.test.ts",
  "README.md"
]

describe("fuzzyFiles", () => {
  it("ranks a basename match at a word start above deep and scattered matches", () => {
    const ranked = fuzzyFiles("app", realistic, 10)
    assert.strictEqual(ranked[0], "src/tui/app.tsx")
    assert.isBelow(ranked.indexOf("src/tui/app.tsx"), ranked.indexOf("packages/x/src/tui-old/readme-app.md"))
    assert.notInclude(ranked, "README.md")
  })

  it("prefers basename and consecutive matches, case-insensitively", () => {
    assert.deepStrictEqual(fuzzyFiles("EDIT", realistic, 2), ["src/tui/editor.ts", "test/tui-editor.test.ts"])
    assert.strictEqual(fuzzyFiles("hist", realistic, 1)[0], "src/tui/history.ts")
    assert.strictEqual(fuzzyFiles("tuiapp", realistic, 1)[0], "src/tui/app.tsx")
  })

  it("breaks ties with the shorter path and honours the limit", () => {
    assert.deepStrictEqual(fuzzyFiles("a", ["bb/a.ts", "b/a.ts", "c/a.ts"], 2), ["b/a.ts", "c/a.ts"])
    assert.strictEqual(fuzzyFiles("t", realistic, 3).length, 3)
    assert.deepStrictEqual(fuzzyFiles("zzz", realistic, 5), [])
  })

  it("returns the first files for an empty query", () => {
    assert.deepStrictEqual(fuzzyFiles("", realistic, 2), realistic.slice(0, 2))
  })
})

describe("mentionedFiles", () => {
  it("returns existing files in order, once, relative or absolute, quoted or bare", async () => {
    await write(dir, { "src/a.ts": "", "b.md": "", "docs/with space.md": "" })
    const text = `see @src/a.ts, @missing.ts and @"docs/with space.md" then @${join(dir, "b.md")} and @src/a.ts again`
    assert.deepStrictEqual(await mentionedFiles(text, dir), ["src/a.ts", "docs/with space.md", "b.md"])
  })

  it("ignores paths escaping the root, directories and e-mail addresses", async () => {
    const root = join(dir, "root")
    await write(dir, { "outside.txt": "", "root/inside.txt": "", "root/mail.txt": "", "root/sub/x.ts": "" })
    await symlink(join(dir, "outside.txt"), join(root, "link.txt"))
    const text = "@../outside.txt @/etc/passwd @sub @link.txt me@mail.txt @inside.txt"
    assert.deepStrictEqual(await mentionedFiles(text, root), ["inside.txt"])
  })
})
