import { statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { currentPatch } from "../src/checkout.js"
import { binary, put, sh, tempDir } from "./helpers.js"

const second = (ms: number) => Math.floor(ms / 1000)

/** Waits until the wall clock is early in a second, so the next few steps happen inside one second. */
const startOfSecond = () =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000))))

describe("currentPatch", () => {
  it.effect(
    "sees a same-size edit made in the second the index was written, when it stages a second later (racy git)",
    () =>
      Effect.gen(function* () {
        // git (without USE_NSEC) compares whole seconds: an edit in the index's own second is "racily clean" and must
        // be re-read. A seed copy of the index with a newer mtime hides that, and the edit goes missing.
        for (let attempt = 0; attempt < 5; attempt++) {
          yield* startOfSecond()
          const dir = tempDir("lathe-ws-racy-")
          sh(dir, "init", "-q", "-b", "main")
          put(dir, "logo.bin", binary(7))
          sh(dir, "add", "-A")
          sh(dir, "commit", "-qm", "base")
          const base = sh(dir, "rev-parse", "HEAD")
          put(dir, "logo.bin", binary(13)) // same size, same second
          const index = statSync(join(dir, ".git", "index")).mtimeMs
          const file = statSync(join(dir, "logo.bin")).ctimeMs
          if (second(index) !== second(file)) continue // the second ticked over in between: try again
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1100)))
          const patch = new TextDecoder().decode(yield* currentPatch(dir, base))
          assert.include(patch, "logo.bin", "the checkpoint records the edit")
          return
        }
        assert.fail("could not make the edit in the same second as the index five times in a row")
      }),
    20_000
  )
})
