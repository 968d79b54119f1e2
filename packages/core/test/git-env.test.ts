import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { gitOutput, startupGitCommands } from "../src/process/git-prefetch.js"
import { GIT_SAFE_OPTIONS, gitEnv, gitSafeEnv } from "../src/process/git-safe.js"
import { runSafeGit } from "../src/process/run-git.js"

// Variables in the environment Lathe was started with (a project's .envrc, a CI job, a wrapper script) used to reach
// its own git calls: they redirect git to another repository or change its config. Each case first runs git the way
// Lathe did before (hardened options, `gitSafeEnv` of the whole environment) to show the damage, then Lathe's calls.

const temp = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `lathe-git-env-${name}-`)))
const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim()

/** The project: branch main, one commit, one untracked file. */
const project = () => {
  const dir = temp("project")
  git(dir, "init", "-q", "-b", "main")
  writeFileSync(join(dir, "a.txt"), "a\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  writeFileSync(join(dir, "untracked.txt"), "new\n")
  return dir
}

/** Another repository, on branch `elsewhere`. */
const elsewhere = () => {
  const dir = temp("elsewhere")
  git(dir, "init", "-q", "-b", "elsewhere")
  return dir
}

/** Git as Lathe ran it before: hardened options, but every variable of the environment passed through. */
const before = (cwd: string, env: NodeJS.ProcessEnv, args: ReadonlyArray<string>) =>
  spawnSync("git", [...GIT_SAFE_OPTIONS, ...args], {
    cwd,
    env: gitSafeEnv({ ...process.env, ...env }),
    encoding: "utf8"
  }).stdout.trim()

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

describe("Lathe's git calls ignore GIT_* variables that redirect git", () => {
  it("GIT_DIR / GIT_WORK_TREE: start-up git reports the project, not another repository", async () => {
    const dir = project()
    const other = elsewhere()
    const env = { GIT_DIR: join(other, ".git"), GIT_WORK_TREE: other }
    assert.strictEqual(before(dir, env, startupGitCommands.toplevel), other, "before: the project root was moved")
    assert.strictEqual(before(dir, env, startupGitCommands.branch), "elsewhere")
    await withEnv(env, async () => {
      assert.strictEqual(await gitOutput(dir, startupGitCommands.toplevel), dir)
      assert.strictEqual(await gitOutput(dir, startupGitCommands.branch), "main")
      const result = await runSafeGit(dir, ["branch", "--show-current"])
      assert.strictEqual(result.stdout.toString().trim(), "main")
    })
  })

  it("GIT_CONFIG_PARAMETERS: start-up git status still lists the untracked file", async () => {
    const dir = project()
    const excludes = join(temp("excludes"), "ignore-all")
    writeFileSync(excludes, "*\n")
    const env = { GIT_CONFIG_PARAMETERS: `'core.excludesfile'='${excludes}'` }
    assert.notInclude(before(dir, env, startupGitCommands.status), "untracked.txt", "before: the file was hidden")
    assert.include(before(dir, {}, startupGitCommands.status), "untracked.txt")
    await withEnv(env, async () => {
      assert.include(await gitOutput(dir, startupGitCommands.status), "untracked.txt")
    })
  })

  it("gitEnv keeps the person's global config, ssh and tracing variables and drops the rest", () => {
    const env = gitEnv({
      PATH: "/bin",
      GIT_DIR: "/d",
      GIT_WORK_TREE: "/w",
      GIT_INDEX_FILE: "/i",
      GIT_CONFIG_PARAMETERS: "'a.b'='c'",
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_GLOBAL: "/g",
      GIT_SSH_COMMAND: "ssh -i k",
      GIT_TRACE: "1"
    })
    for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"])
      assert.isUndefined(env[name], name)
    assert.strictEqual(env.GIT_CONFIG_GLOBAL, "/g")
    assert.strictEqual(env.GIT_SSH_COMMAND, "ssh -i k")
    assert.strictEqual(env.GIT_TRACE, "1")
    assert.strictEqual(env.GIT_PAGER, "cat")
    assert.strictEqual(env.PATH, "/bin")
  })
})
