import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { isTimeout, runGit } from "../src/git.js"
import { tempProject } from "./helpers.js"

const running = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A stand-in "git" that records its pid, then hangs. */
const hanging = (dir: string) => ({
  binary: "sh",
  cwd: dir,
  global: ["-c", `echo $$ > ${join(dir, "pid")}; exec sleep 30`]
})

const waitFor = (check: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100 && !check(); i++) yield* Effect.sleep("30 millis")
    return check()
  })

describe("runGit", () => {
  it.live("a call past its timeout fails clearly and its process is killed", () => {
    const { base } = tempProject("plain")
    return Effect.gen(function* () {
      const error = yield* Effect.flip(runGit(hanging(base), "track", { args: [], timeout: "300 millis" }))
      assert.isTrue(isTimeout(error))
      assert.include(error.message, "did not finish within")
      const pid = Number(readFileSync(join(base, "pid"), "utf8"))
      assert.isTrue(yield* waitFor(() => !running(pid)), "the process is gone")
    })
  })

  it.live("interrupting a call kills its process", () => {
    const { base } = tempProject("plain")
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(runGit(hanging(base), "track", { args: [] }))
      assert.isTrue(yield* waitFor(() => existsSync(join(base, "pid"))))
      yield* Fiber.interrupt(fiber)
      const pid = Number(readFileSync(join(base, "pid"), "utf8"))
      assert.isTrue(yield* waitFor(() => !running(pid)), "the process is gone")
    })
  })

  it.live("a non-zero exit is a result; a missing binary is a clear failure", () => {
    const { base } = tempProject("plain")
    return Effect.gen(function* () {
      const result = yield* runGit({ binary: "git", cwd: base, global: [] }, "track", { args: ["rev-parse", "HEAD"] })
      assert.notStrictEqual(result.code, 0)
      const missing = yield* Effect.flip(
        runGit({ binary: join(base, "nope"), cwd: base, global: [] }, "track", { args: [] })
      )
      assert.include(missing.message, "was not found")
    })
  })
})
