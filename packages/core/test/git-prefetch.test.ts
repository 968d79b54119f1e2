import { execFileSync } from "node:child_process"
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { gitOutput, prefetchGit, prefetchStartupGit, startupGitCommands } from "../src/git-prefetch.js"
import { resolvePaths } from "../src/paths.js"

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim()

const repo = () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "lathe-prefetch-")))
  git(dir, "init", "-q", "-b", "main")
  writeFileSync(join(dir, "a.txt"), "a\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  return dir
}

describe("git prefetch", () => {
  it("a prefetched answer is taken once: the next question runs git again and sees what changed since", async () => {
    const dir = repo()
    prefetchStartupGit(dir)
    writeFileSync(join(dir, "a.txt"), "changed\n") // may or may not land before the prefetched status ran
    const first = await gitOutput(dir, startupGitCommands.status)
    assert.include(first, "# branch.head main")
    git(dir, "checkout", "-q", "-b", "other")
    const second = await gitOutput(dir, startupGitCommands.status)
    assert.include(second, "# branch.head other", "the second call ran git afresh")
    assert.include(second, "a.txt")
  })

  it("the start-up questions, asked in one shell, answer each as git alone would, a failing one as undefined", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "lathe-prefetch-empty-")))
    git(dir, "init", "-q", "-b", "main") // no commit yet: rev-list HEAD fails, the others answer
    writeFileSync(join(dir, "it's here.txt"), "x\n")
    const questions = [...Object.values(startupGitCommands), ["ls-files", "--others", "it's here.txt"]]
    prefetchGit(dir, questions)
    const prefetched = await Promise.all(questions.map((args) => gitOutput(dir, args)))
    const alone = await Promise.all(questions.map((args) => gitOutput(dir, args)))
    assert.deepStrictEqual(prefetched, alone)
    assert.deepStrictEqual(prefetched, [dir, undefined, "# branch.oid (initial)\n# branch.head main", "it's here.txt"])
  })

  it("Paths takes the prefetched root and project id; another directory or failing git are not mixed up", async () => {
    const dir = repo()
    const elsewhere = repo()
    prefetchStartupGit(dir)
    const paths = await resolvePaths(dir, { HOME: dir })
    assert.strictEqual(paths.root, dir)
    assert.strictEqual(paths.projectID, git(dir, "rev-list", "--max-parents=0", "HEAD"))
    const other = await resolvePaths(elsewhere, { HOME: elsewhere })
    assert.strictEqual(other.root, elsewhere)
    assert.strictEqual(other.projectID, git(elsewhere, "rev-parse", "HEAD"))
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "lathe-prefetch-plain-")))
    prefetchStartupGit(outside)
    assert.isUndefined(await gitOutput(outside, startupGitCommands.toplevel), "not a repository: undefined")
  })
})
