import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "@effect/vitest"
import { runProcess } from "../src/process/run-process.js"

// A shell that ignores SIGTERM and leaves a grandchild (which ignores it too) running in the background; it writes
// both pids to a file. What a stuck formatter, hook or git looks like to whoever has to stop it.
const STUBBORN = (pids: string) =>
  `trap '' TERM; (trap '' TERM; sleep 30) & echo "$$ $!" > '${pids}'; while :; do sleep 0.05; done`

/** Whether `pid` runs (a zombie left for an init that does not reap, as in some containers, has ended). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

const pidsIn = async (file: string): Promise<ReadonlyArray<number>> => {
  for (let i = 0; i < 100; i++) {
    const text = (() => {
      try {
        return readFileSync(file, "utf8").trim()
      } catch {
        return ""
      }
    })()
    if (text.split(" ").length === 2) return text.split(" ").map(Number)
    await sleep(20)
  }
  throw new Error(`no pids in ${file}`)
}

/** Waits until none of `pids` is alive (a killed process may take a moment to be reaped). */
const gone = async (pids: ReadonlyArray<number>): Promise<boolean> => {
  for (let i = 0; i < 50; i++) {
    if (!pids.some(alive)) return true
    await sleep(20)
  }
  return false
}

describe("runProcess", () => {
  it("stops a program that ignores SIGTERM, with everything it started, at the time limit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-run-process-"))
    // Without the runner: Node's own `timeout` sends SIGTERM to the child alone; it ignores it and both live on.
    const plainPids = join(dir, "plain")
    const plain = spawn("/bin/sh", ["-c", STUBBORN(plainPids)], { timeout: 200, stdio: "ignore", detached: true })
    const [plainShell = 0, plainChild = 0] = await pidsIn(plainPids)
    await sleep(600)
    assert.isTrue(alive(plainShell), "plain spawn's timeout leaves the shell running")
    assert.isTrue(alive(plainChild), "plain spawn's timeout leaves the background child running")
    process.kill(-(plain.pid ?? 0), "SIGKILL")
    assert.isTrue(await gone([plainShell, plainChild]))

    // With it: SIGTERM to the group, then SIGKILL after the grace; nothing is left.
    const pids = join(dir, "runner")
    const result = await runProcess({
      file: "/bin/sh",
      args: ["-c", STUBBORN(pids)],
      timeoutMs: 300,
      killGraceMs: 100
    })
    assert.isTrue(result.timedOut)
    assert.strictEqual(result.signal, "SIGKILL")
    assert.isTrue(await gone(await pidsIn(pids)), "the shell and its background child are gone")
  })

  it("an aborted signal stops the group; the result says so", async () => {
    const controller = new AbortController()
    const running = runProcess({ file: "/bin/sh", args: ["-c", "sleep 30"], signal: controller.signal })
    controller.abort()
    const result = await running
    assert.isTrue(result.aborted)
    assert.isFalse(result.timedOut)
    assert.isNull(result.exitCode)
  })

  it("feeds stdin, streams output as it comes, and keeps at most maxOutputBytes per stream", async () => {
    const seen: Array<string> = []
    const result = await runProcess({
      file: "/bin/sh",
      args: ["-c", "cat; printf 'é%.0s' $(seq 1 100) >&2; exit 3"],
      input: "hello",
      maxOutputBytes: 10,
      onOutput: (text, stream) => seen.push(`${stream}:${text}`)
    })
    assert.strictEqual(result.exitCode, 3)
    assert.strictEqual(result.stdout.toString(), "hello")
    assert.strictEqual(result.stderr.length, 10)
    assert.isTrue(result.truncated)
    assert.include(seen.join(""), "stdout:hello")
    assert.strictEqual(
      seen
        .filter((chunk) => chunk.startsWith("stderr:"))
        .map((chunk) => chunk.slice("stderr:".length))
        .join(""),
      "é".repeat(100)
    )
  })

  it("gets exactly the environment it is given", async () => {
    const result = await runProcess({ file: "/usr/bin/env", env: { ONLY: "this" } })
    assert.strictEqual(result.stdout.toString().trim(), "ONLY=this")
  })

  it("rejects when the program cannot start", async () => {
    const error = await runProcess({ file: "/no/such/program" }).then(
      () => undefined,
      (error: unknown) => error as NodeJS.ErrnoException
    )
    assert.strictEqual(error?.code, "ENOENT")
  })
})
