import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Snapshot } from "@lathe/core"
import { Effect } from "effect"
import { sh, shadowDir, snapshotLayer, tempProject } from "./helpers.js"

// Snapshots run git outside any sandbox on the project's work tree: its `.gitattributes` (written by whoever wrote
// the repository) picks filter drivers by name, and its `.git/config` names programs. None of them may run.

const snap = Effect.gen(function* () {
  return yield* Snapshot
})

const setup = () => {
  const project = tempProject("git")
  const { root, base } = project
  const marks = join(base, "marks")
  mkdirSync(marks)
  const program = (name: string) => {
    const file = join(base, `${name}.sh`)
    writeFileSync(file, `#!/bin/sh\ntouch '${join(marks, name)}'\ncat\n`)
    chmodSync(file, 0o755)
    return file
  }
  // The repository's own config, and a driver from the person's global config that the work tree picks by name.
  sh(root, "config", "core.fsmonitor", program("fsmonitor"))
  sh(root, "config", "filter.evil.clean", program("project-clean"))
  sh(root, "config", "filter.evil.smudge", program("project-smudge"))
  const globalConfig = join(base, "gitconfig")
  writeFileSync(globalConfig, `[filter "lfs"]\n\tclean = ${program("global-clean")}\n\trequired = true\n`)
  writeFileSync(join(root, ".gitattributes"), "a.txt filter=evil\nb.txt filter=lfs\n")
  writeFileSync(join(root, "a.txt"), "v1\n")
  writeFileSync(join(root, "b.txt"), "v1\n")
  const seen = () =>
    ["fsmonitor", "project-clean", "project-smudge", "global-clean"].filter((m) => existsSync(join(marks, m)))
  const clear = () => {
    for (const name of seen()) rmSync(join(marks, name))
  }
  return { project, root, globalConfig, seen, clear }
}

describe("snapshots run nothing the work tree or a config names", () => {
  it.live(
    "track and restore with a planted fsmonitor, project filters and a global driver picked by .gitattributes",
    () => {
      const t = setup()
      const saved = process.env.GIT_CONFIG_GLOBAL
      process.env.GIT_CONFIG_GLOBAL = t.globalConfig
      // Without Lathe: plain git in the project, and plain git on the shadow's work tree, run every planted program.
      execFileSync("git", ["add", "a.txt", "b.txt"], { cwd: t.root, stdio: "ignore" })
      spawnSync("git", ["status"], { cwd: t.root, stdio: "ignore" })
      assert.sameMembers(t.seen(), ["fsmonitor", "project-clean", "global-clean"])
      execFileSync("git", ["reset", "-q"], { cwd: t.root, stdio: "ignore" })
      t.clear()
      const { layer } = snapshotLayer(t.project)
      return Effect.gen(function* () {
        const snapshot = yield* snap
        const before = yield* snapshot.track
        writeFileSync(join(t.root, "a.txt"), "v2\n")
        writeFileSync(join(t.root, "b.txt"), "v2\n")
        yield* snapshot.track
        yield* snapshot.restore(before ?? "")
        assert.strictEqual(readFileSync(join(t.root, "a.txt"), "utf8"), "v1\n")
        assert.strictEqual(readFileSync(join(t.root, "b.txt"), "utf8"), "v1\n")
        assert.deepStrictEqual(t.seen(), [], "no planted program ran")
        assert.isTrue(existsSync(shadowDir(t.project)))
      }).pipe(
        Effect.provide(layer),
        Effect.ensuring(
          Effect.sync(() => {
            if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL
            else process.env.GIT_CONFIG_GLOBAL = saved
          })
        )
      )
    }
  )
})
