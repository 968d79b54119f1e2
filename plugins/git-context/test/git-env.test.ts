import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { pluginContext } from "@lathe/plugin/testing"
import { readGitStatus } from "../src/git-status.js"
import { git, repo, tempDir, write } from "./helpers.js"

// Git variables in the environment Lathe was started with (a project's .envrc, a wrapper script) reached the plugin's
// `git status`: GIT_DIR made it describe another repository, GIT_CONFIG_PARAMETERS could hide files. Each case shows
// the damage with git run as the plugin ran it before (same arguments, the environment passed through), then that
// `readGitStatus` is not moved (through the kit's test context, whose `ctx.git` drops git's variables as the host's
// does; the host's hardening against the repository's config is core's to test).

const STATUS = ["--no-optional-locks", "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal"]

/** `git status` as the plugin ran it before: the whole environment passed through. */
const before = (cwd: string, env: Readonly<Record<string, string>>) =>
  spawnSync("git", STATUS, { cwd, env: { ...process.env, ...env }, encoding: "utf8" }).stdout

/** Runs `body` with `env` added to this process's environment. */
const withEnv = async <A>(env: Readonly<Record<string, string>>, body: () => Promise<A>): Promise<A> => {
  const saved = Object.keys(env).map((name) => [name, process.env[name]] as const)
  Object.assign(process.env, env)
  try {
    return await body()
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

describe("git status ignores GIT_* variables that redirect git", () => {
  it("GIT_DIR / GIT_WORK_TREE pointing at another repository", async () => {
    const root = repo()
    const other = tempDir()
    git(other, "init", "-q", "-b", "elsewhere")
    write(other, { "their-secret.txt": "x\n" })
    const env = { GIT_DIR: join(other, ".git"), GIT_WORK_TREE: other }
    assert.include(before(root, env), "# branch.head elsewhere", "before: another repository's branch")
    assert.include(before(root, env), "their-secret.txt", "before: another repository's files")
    const status = await withEnv(env, () => readGitStatus(pluginContext(root).git, root, 10_000))
    assert.strictEqual(status?.branch, "main")
    assert.deepStrictEqual(status?.dirty, [])
  })

  it("GIT_CONFIG_PARAMETERS naming an excludes file that hides every untracked file", async () => {
    const root = repo()
    write(root, { "new.txt": "x\n" })
    const excludes = join(tempDir(), "ignore-all")
    write(excludes.slice(0, excludes.lastIndexOf("/")), { "ignore-all": "*\n" })
    const env = { GIT_CONFIG_PARAMETERS: `'core.excludesfile'='${excludes}'` }
    assert.include(before(root, {}), "new.txt")
    assert.notInclude(before(root, env), "new.txt", "before: the untracked file was hidden")
    const status = await withEnv(env, () => readGitStatus(pluginContext(root).git, root, 10_000))
    assert.deepStrictEqual(status?.dirty, [{ status: "??", path: "new.txt" }])
  })
})

describe("git status reports on the root, whatever the repository's config names as its work tree", () => {
  it("core.worktree pointing at another folder (a hostile clone's .git/config)", async () => {
    const root = repo()
    const other = tempDir()
    write(other, { "their-secret.txt": "x\n" })
    git(root, "config", "core.worktree", other)
    assert.include(before(root, {}), "their-secret.txt", "plain git: the other folder's files")
    const status = await readGitStatus(pluginContext(root).git, root, 10_000)
    assert.isDefined(status)
    assert.isFalse(
      status?.dirty.some((file) => file.path.includes("their-secret")),
      "only the root's files"
    )
  })
})
