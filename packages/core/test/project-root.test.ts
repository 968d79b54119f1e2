import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { readLocated, resolvePaths } from "../src/config/paths.js"
import { sha1Hex } from "../src/config/sha1.js"
import { gitOutput, prefetchStartupGit, startupGitCommands } from "../src/process/git-prefetch.js"

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim()

/** Plain git, as a person's shell runs it (no Lathe options), with no GIT_* variable of this process. */
const plainTop = (cwd: string): string => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")))
  return execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd, encoding: "utf8", env }).trim()
}

const temp = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `lathe-root-${name}-`)))

/** A home folder that holds none of the test's folders. */
const elsewhere = () => ({ HOME: temp("home") })

describe("project root", () => {
  it("a .git file naming a git dir whose config says core.worktree = / keeps the root at the folder holding it", async () => {
    const tree = temp("gitfile")
    git(tree, "init", "-q", "--bare", join(tree, ".meta", "g"))
    git(tree, "--git-dir", join(tree, ".meta", "g"), "config", "core.bare", "false")
    git(tree, "--git-dir", join(tree, ".meta", "g"), "config", "core.worktree", "/")
    writeFileSync(join(tree, ".git"), "gitdir: .meta/g\n")
    mkdirSync(join(tree, "src"))
    // The payload bites without Lathe: git itself takes the whole machine as the work tree.
    assert.strictEqual(plainTop(join(tree, "src")), "/")
    const paths = await resolvePaths(join(tree, "src"), elsewhere())
    assert.strictEqual(paths.root, tree)
    assert.strictEqual(paths.notices?.length, 1)
    assert.include(paths.notices?.[0], "names / as its work tree (core.worktree)")
    assert.include(paths.notices?.[0], `takes ${tree}`)
    // Lathe's other start-up questions see the folder too, not the machine: the status lists the tree's own files.
    prefetchStartupGit(join(tree, "src"))
    await gitOutput(join(tree, "src"), startupGitCommands.toplevel)
    const status = await gitOutput(join(tree, "src"), startupGitCommands.status)
    assert.isDefined(status)
    assert.notInclude(status, "etc/")
    assert.include(status, ".meta/")
  })

  it("a downloaded tree that git takes for a bare repository with core.worktree = / is no repository", async () => {
    const project = temp("bare")
    mkdirSync(join(project, "objects"))
    mkdirSync(join(project, "refs"))
    writeFileSync(join(project, "HEAD"), "ref: refs/heads/main\n")
    writeFileSync(join(project, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = /\n")
    assert.strictEqual(plainTop(project), "/")
    const paths = await resolvePaths(project, elsewhere())
    assert.strictEqual(paths.root, project)
    assert.strictEqual(paths.projectID, sha1Hex(project), "no repository, so the id of the path")
    assert.include(paths.notices?.[0], `bare repository at ${project}`)
    // The same folder committed inside a real repository, the person started in it: still not the root.
    const repo = temp("committed")
    git(repo, "init", "-q")
    execFileSync("cp", ["-r", project, join(repo, "evil")])
    assert.strictEqual(plainTop(join(repo, "evil")), "/")
    const inside = await resolvePaths(join(repo, "evil"), elsewhere())
    assert.strictEqual(inside.root, join(repo, "evil"))
    assert.include(inside.notices?.[0], "bare repository")
  })

  it("a repository whose top is the home folder: the root is the working directory, with a notice", async () => {
    const home = temp("dotfiles")
    git(home, "init", "-q")
    git(home, "commit", "-q", "--allow-empty", "-m", "dotfiles")
    mkdirSync(join(home, "scratch", "x"), { recursive: true })
    const paths = await resolvePaths(join(home, "scratch", "x"), { HOME: home })
    assert.strictEqual(paths.root, join(home, "scratch", "x"))
    assert.strictEqual(paths.projectID, sha1Hex(join(home, "scratch", "x")), "not the home repository's first commit")
    assert.include(paths.notices?.[0], `top at ${home}, your home folder`)
    // Started in the home folder itself, that is the working directory: taken as it is, with no notice.
    const atHome = await resolvePaths(home, { HOME: home })
    assert.strictEqual(atHome.root, home)
    assert.deepStrictEqual(atHome.notices, [])
    assert.strictEqual(atHome.projectID, git(home, "rev-parse", "HEAD"))
  })

  it("linked worktrees and submodules (a .git file that is the repository's own) keep their root and id", async () => {
    const main = temp("main")
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    const first = git(main, "rev-parse", "HEAD")
    const linked = join(temp("linked"), "wt")
    git(main, "worktree", "add", "-q", linked)
    mkdirSync(join(linked, "deep"))
    const paths = await resolvePaths(join(linked, "deep"), elsewhere())
    assert.strictEqual(paths.root, linked)
    assert.strictEqual(paths.projectID, first)
    assert.deepStrictEqual(paths.notices, [])
    const sub = temp("sub")
    git(sub, "init", "-q")
    git(sub, "commit", "-q", "--allow-empty", "-m", "sub")
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "lib")
    const inSub = await resolvePaths(join(main, "lib"), elsewhere())
    assert.strictEqual(inSub.root, join(main, "lib"))
    assert.strictEqual(inSub.projectID, git(sub, "rev-parse", "HEAD"))
    assert.deepStrictEqual(inSub.notices, [])
  })

  it("core.bare = true in a .git folder's config is ignored: the root is the folder holding it", async () => {
    const repo = temp("corebare")
    git(repo, "init", "-q")
    git(repo, "config", "core.bare", "true")
    mkdirSync(join(repo, "a"))
    const paths = await resolvePaths(join(repo, "a"), elsewhere())
    assert.strictEqual(paths.root, repo)
    assert.include(paths.notices?.[0], "says it is bare (core.bare)")
    // Both set (git then warns on stderr, which must not be read as the answer): the same root.
    git(repo, "config", "core.worktree", "/")
    const both = await resolvePaths(join(repo, "a"), elsewhere())
    assert.strictEqual(both.root, repo)
    assert.include(both.notices?.[0], "says it is bare (core.bare)")
  })

  it("git's answer is checked where no shell asks (a plain top): / and home refused, a top not holding the folder too", () => {
    assert.deepInclude(readLocated("/", "/p/q", "/h"), { root: "/p/q", repository: false })
    assert.include(readLocated("/", "/p/q", "/h").notices[0], "the root of the file system")
    assert.include(readLocated("/h", "/h/q", "/h").notices[0], "your home folder")
    assert.deepStrictEqual(readLocated("/h", "/h", "/h"), { root: "/h", repository: true, notices: [] })
    assert.deepInclude(readLocated("/other", "/p/q", "/h"), { root: "/p/q", repository: false })
    assert.deepStrictEqual(readLocated("/p", "/p/q", "/h"), { root: "/p", repository: true, notices: [] })
    assert.deepStrictEqual(readLocated(undefined, "/p/q", "/h"), { root: "/p/q", repository: false, notices: [] })
    assert.include(readLocated("lathe:refused /", "/p/q", "/h").notices[0], "the root of the file system")
  })
})
