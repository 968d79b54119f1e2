import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { resolvePaths } from "../src/config/paths.js"
import { gitOutput, prefetchGit, prefetchStartupGit, startupGitCommands } from "../src/process/git-prefetch.js"
import { fakeGit } from "./fake-git.js"

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

/** Runs `body` with a fake `git status` (see `fakeGit`). */
const withFakeGit = async (statusScript: string, body: () => Promise<void>) => {
  const restore = fakeGit("status", statusScript)
  try {
    await body()
  } finally {
    restore()
  }
}

/** A process's state letter from /proc (Z: a zombie), or "gone". */
const processState = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] ?? "gone"
  } catch {
    return "gone"
  }
}

/**
 * The process's state once it has had time to die: SIGKILL is delivered asynchronously, so on a busy machine a killed
 * process can still show "R" for a moment. Polls for up to two seconds; one that never stops stays in its state.
 */
const settledState = async (pid: number): Promise<string> => {
  for (let waited = 0; waited < 2_000; waited += 20) {
    const state = processState(pid)
    if (state === "gone" || state === "Z") return state
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return processState(pid)
}

describe("git prefetch", () => {
  it("a prefetched answer is taken once: the next question runs git again and sees what changed since", async () => {
    const dir = repo()
    prefetchStartupGit(dir)
    const first = await gitOutput(dir, startupGitCommands.branch)
    assert.strictEqual(first, "main")
    git(dir, "checkout", "-q", "-b", "other")
    writeFileSync(join(dir, "a.txt"), "changed\n")
    assert.strictEqual(await gitOutput(dir, startupGitCommands.branch), "other", "the second call ran git afresh")
    await gitOutput(dir, startupGitCommands.status) // the prefetched one: a.txt may or may not have changed yet
    assert.include(await gitOutput(dir, startupGitCommands.status), "a.txt")
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
    // No commit: rev-list fails; the branch is named already; the one file is untracked.
    assert.deepStrictEqual(prefetched, [dir, undefined, "main", "? it's here.txt", "it's here.txt"])
  })

  it("the status counts untracked files and folders as git status does, and leaves out what .gitignore ignores", async () => {
    const dir = repo()
    writeFileSync(join(dir, "a.txt"), "changed\n")
    writeFileSync(join(dir, "lathe.json"), "{}\n")
    mkdirSync(join(dir, ".lathe", "plans"), { recursive: true })
    writeFileSync(join(dir, ".lathe", "plans", "p.md"), "x\n")
    writeFileSync(join(dir, ".gitignore"), "build/\n*.log\n")
    mkdirSync(join(dir, "build"))
    writeFileSync(join(dir, "build", "out.js"), "x\n")
    writeFileSync(join(dir, "debug.log"), "x\n")
    const lines = (await gitOutput(dir, startupGitCommands.status))?.split("\n").sort()
    // What plain `git status --porcelain` lists, line for line (v1 there, v2 here): the same files.
    const plain = execFileSync("git", ["status", "--porcelain"], { cwd: dir, encoding: "utf8" }).trimEnd().split("\n")
    plain.sort()
    assert.deepStrictEqual(plain, ["?? .gitignore", "?? .lathe/", "?? lathe.json", " M a.txt"].sort())
    assert.strictEqual(lines?.length, plain.length)
    assert.includeMembers(lines ?? [], ["? .gitignore", "? .lathe/", "? lathe.json"])
    assert.isTrue(lines?.some((line) => line.startsWith("1 .M ") && line.endsWith(" a.txt")))
    assert.isFalse(lines?.some((line) => line.includes("build") || line.includes("debug.log")))
  })

  it("each answer arrives as its command ends: the root and project id while git status still runs", async () => {
    const dir = repo()
    const release = join(dir, ".git", "release-status")
    await withFakeGit(`while [ ! -e '${release}' ]; do sleep 0.02; done`, async () => {
      prefetchStartupGit(dir)
      const status = gitOutput(dir, startupGitCommands.status)
      let statusDone = false
      void status.then(() => {
        statusDone = true
      })
      const paths = await resolvePaths(dir, { HOME: dir })
      assert.strictEqual(paths.projectID, git(dir, "rev-list", "--max-parents=0", "HEAD"))
      assert.strictEqual(await gitOutput(dir, startupGitCommands.branch), "main")
      assert.isFalse(statusDone, "git status is still held")
      writeFileSync(release, "")
      assert.strictEqual(await status, "")
    })
  })

  it("a shell stopped at its time limit keeps the answers of the commands that had ended, and stops its git", async () => {
    const dir = repo()
    const pidFile = join(dir, ".git", "status-pid")
    await withFakeGit(`echo $$ > '${pidFile}'; exec sleep 30`, async () => {
      prefetchGit(dir, Object.values(startupGitCommands), 1_000)
      const answers = await Promise.all(Object.values(startupGitCommands).map((args) => gitOutput(dir, args)))
      assert.deepStrictEqual(answers, [dir, git(dir, "rev-parse", "HEAD"), "main", undefined])
    })
    // The hanging "git status" was stopped with its shell (gone, or a zombie waiting to be reaped).
    assert.oneOf(await settledState(Number(readFileSync(pidFile, "utf8"))), ["gone", "Z"])
  })

  it("a git status still running when this process exits is stopped with it", async () => {
    const dir = repo()
    const pidFile = join(dir, ".git", "status-pid")
    const source = fileURLToPath(new URL("../src/process/git-prefetch.ts", import.meta.url))
    const code = [
      `import { prefetchStartupGit } from ${JSON.stringify(source)}`,
      `import { existsSync } from "node:fs"`,
      `prefetchStartupGit(${JSON.stringify(dir)})`,
      `const wait = () => (existsSync(${JSON.stringify(pidFile)}) ? process.exit(0) : setTimeout(wait, 10))`,
      "wait()"
    ].join("\n")
    const restore = fakeGit("status", `echo $$ > '${pidFile}'; exec sleep 30`)
    const child = (() => {
      try {
        return spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: "ignore" })
      } finally {
        restore()
      }
    })()
    const exitCode = await new Promise((resolve) => child.on("exit", resolve))
    assert.strictEqual(exitCode, 0)
    assert.oneOf(await settledState(Number(readFileSync(pidFile, "utf8"))), ["gone", "Z"])
  })

  it("git status never rewrites the index (no index.lock a git command of the person's could trip over)", async () => {
    const dir = repo()
    // The file's time changes, its content does not: a plain status would refresh that entry and rewrite the index.
    const later = new Date(Date.now() + 60_000)
    utimesSync(join(dir, "a.txt"), later, later)
    const index = readFileSync(join(dir, ".git", "index"))
    prefetchStartupGit(dir)
    assert.strictEqual(await gitOutput(dir, startupGitCommands.status), "")
    assert.strictEqual(await gitOutput(dir, startupGitCommands.status), "")
    assert.isTrue(readFileSync(join(dir, ".git", "index")).equals(index), "the index is as it was")
    git(dir, "status", "--porcelain")
    assert.isFalse(readFileSync(join(dir, ".git", "index")).equals(index), "a plain status would have rewritten it")
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
