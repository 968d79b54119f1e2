import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { configDir, dataDir, resolvePaths } from "../src/config/paths.js"

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim()

describe("paths", () => {
  it("data and config dirs follow LATHE_DATA_DIR, XDG and HOME", () => {
    assert.strictEqual(dataDir({ HOME: "/h" }), "/h/.local/share/lathe")
    assert.strictEqual(dataDir({ HOME: "/h", XDG_DATA_HOME: "/x" }), "/x/lathe")
    assert.strictEqual(dataDir({ HOME: "/h", XDG_DATA_HOME: "/x", LATHE_DATA_DIR: "/d" }), "/d")
    assert.strictEqual(dataDir({ HOME: "/h", XDG_DATA_HOME: "relative" }), "/h/.local/share/lathe")
    assert.strictEqual(configDir({ HOME: "/h" }), "/h/.config/lathe")
    assert.strictEqual(configDir({ HOME: "/h", XDG_CONFIG_HOME: "/c" }), "/c/lathe")
  })

  it("the project id is the first commit's hash, shared by subdirectories and clones", async () => {
    const repo = realpathSync(mkdtempSync(join(tmpdir(), "lathe-paths-")))
    git(repo, "init", "-q")
    const home = realpathSync(mkdtempSync(join(tmpdir(), "lathe-home-")))
    const before = await resolvePaths(repo, { HOME: home })
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    const first = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    mkdirSync(join(repo, "sub"))
    const inSub = await resolvePaths(join(repo, "sub"), { HOME: home })
    assert.strictEqual(inSub.projectID, first)
    assert.strictEqual(inSub.root, repo)
    assert.strictEqual(inSub.directory, join(repo, "sub"))
    // no commits yet: a hash of the path, never a crash
    assert.match(before.projectID, /^[0-9a-f]{40}$/)
    assert.notStrictEqual(before.projectID, first)
    const clone = realpathSync(mkdtempSync(join(tmpdir(), "lathe-clone-")))
    execFileSync("git", ["clone", "-q", repo, join(clone, "c")])
    assert.strictEqual((await resolvePaths(join(clone, "c"), { HOME: home })).projectID, first)
  })

  it("a folder outside git gets a stable id from its path", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "lathe-nogit-")))
    const a = await resolvePaths(dir, { HOME: dir })
    const b = await resolvePaths(dir, { HOME: dir })
    assert.strictEqual(a.root, dir)
    assert.strictEqual(a.projectID, b.projectID)
  })
})
