import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { currentPatch, restore } from "../src/checkout.js"
import { put, sh, tempDir } from "./helpers.js"

// An agent works inside a checkout and can write its `.git/config` and `.gitattributes`; Lathe's own git calls on
// the checkout (checkpoints, restore) run outside the sandbox and must run none of what they name.

describe("workspace git runs nothing a checkout's config names", () => {
  it.effect("checkpoint and restore with a planted fsmonitor, hook and filter", () =>
    Effect.gen(function* () {
      const dir = tempDir("lathe-ws-walls-")
      const marks = tempDir("lathe-ws-marks-")
      const program = (name: string) => {
        const file = join(marks, `${name}.sh`)
        writeFileSync(file, `#!/bin/sh\ntouch '${join(marks, name)}'\ncat\n`)
        chmodSync(file, 0o755)
        return file
      }
      const seen = () => readdirSync(marks).filter((name) => !name.endsWith(".sh"))
      sh(dir, "init", "-q", "-b", "main")
      put(dir, "a.txt", "a\n")
      sh(dir, "add", "-A")
      sh(dir, "commit", "-qm", "base")
      const base = sh(dir, "rev-parse", "HEAD")
      sh(dir, "config", "core.fsmonitor", program("fsmonitor"))
      sh(dir, "config", "filter.evil.clean", program("clean"))
      sh(dir, "config", "filter.evil.smudge", program("smudge"))
      mkdirSync(join(dir, ".git", "hooks"), { recursive: true })
      writeFileSync(join(dir, ".git", "hooks", "post-index-change"), `#!/bin/sh\nexec '${program("hook")}'\n`)
      chmodSync(join(dir, ".git", "hooks", "post-index-change"), 0o755)
      put(dir, ".gitattributes", "*.txt filter=evil\n")
      put(dir, "a.txt", "b\n")
      // Without Lathe: plain git stages the same change and runs them.
      sh(dir, "add", "-A")
      assert.includeMembers(seen(), ["fsmonitor", "clean", "hook"])
      sh(dir, "reset", "-q")
      for (const name of seen()) rmSync(join(marks, name))

      const patch = yield* currentPatch(dir, base)
      assert.include(new TextDecoder().decode(patch), "a.txt")
      yield* restore(dir, base, patch)
      assert.isTrue(existsSync(join(dir, "a.txt")))
      assert.deepStrictEqual(seen(), [])
    })
  )

  it.effect("a checkout's config naming another work tree (core.worktree) never points restore's clean there", () =>
    Effect.gen(function* () {
      const dir = tempDir("lathe-ws-worktree-")
      const victim = tempDir("lathe-ws-victim-")
      sh(dir, "init", "-q", "-b", "main")
      put(dir, "a.txt", "a\n")
      sh(dir, "add", "-A")
      sh(dir, "commit", "-qm", "base")
      const base = sh(dir, "rev-parse", "HEAD")
      put(dir, "a.txt", "b\n")
      const patch = yield* currentPatch(dir, base)
      // What an agent in the checkout can write: the work tree is another folder, holding the person's files.
      sh(dir, "config", "core.worktree", victim)
      put(victim, "keep.txt", "the person's file\n")
      // Without Lathe: plain git's clean in the checkout removes the other folder's files.
      assert.include(sh(dir, "clean", "-f", "-d", "--dry-run"), "keep.txt")
      yield* restore(dir, base, patch)
      assert.isTrue(existsSync(join(victim, "keep.txt")), "the other folder is untouched")
      assert.strictEqual(sh(dir, "--work-tree", dir, "status", "--porcelain"), "M a.txt")
    })
  )
})
