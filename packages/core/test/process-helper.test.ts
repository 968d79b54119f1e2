import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { onTestFinished } from "vitest"
import { startProcessHelper } from "../src/process/process-helper.js"
import { runProcess } from "../src/process/run-process.js"

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" }

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})
/** A temporary directory of this test's own, removed after the file's tests. */
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Whether `pid` runs (a zombie has ended). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

const gone = async (pid: number): Promise<boolean> => {
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(20)
  return !alive(pid)
}

/** The helpers' private directories in the temporary directory. */
const helperDirs = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("lathe-helper-")))

describe("startProcessHelper", () => {
  it("serves many calls from one shell, each with its arguments, input, environment, output and exit code", async () => {
    const helper = startProcessHelper({ env: { ...env, BASE: "base" } })
    try {
      const odd = `it's "quoted" $HOME \`x\` \\ *; a|b`
      const first = await helper.run({ file: "printf", args: ["%s|%s", odd, ""] })
      const shell = helper.pid()
      assert.isDefined(shell)
      assert.strictEqual(first.stdout.toString(), `${odd}|`)
      assert.strictEqual(first.exitCode, 0)
      for (let i = 0; i < 40; i++) {
        const result = await helper.run({
          file: "sh",
          args: ["-c", 'cat; printf "%s %s" "$BASE" "$EXTRA" >&2; exit "$1"', "sh", String(i % 3)],
          input: `in ${i}\n`,
          env: { EXTRA: `extra ${i}` }
        })
        assert.strictEqual(result.stdout.toString(), `in ${i}\n`)
        assert.strictEqual(result.stderr.toString(), `base extra ${i}`)
        assert.strictEqual(result.exitCode, i % 3)
        assert.strictEqual(result.signal, null)
      }
      // Same shell all along.
      assert.strictEqual(helper.pid(), shell)
      const dir = tempDir("lathe-ph-test-")
      const cwd = await helper.run({ file: "pwd", cwd: dir })
      assert.strictEqual(cwd.stdout.toString().trim(), dir)
      // Bytes come back as they are, and the cap applies.
      const bytes = await helper.run({ file: "head", args: ["-c", "300000", "/dev/urandom"], maxOutputBytes: 1000 })
      assert.strictEqual(bytes.stdout.length, 1000)
      assert.isTrue(bytes.truncated)
      const none = await helper.run({ file: "sh", args: ["-c", "read x || echo eof"] })
      assert.strictEqual(none.stdout.toString(), "eof\n")
    } finally {
      helper.close()
    }
  })

  it("rejects a program that does not exist as spawn does, and keeps serving", async () => {
    const helper = startProcessHelper({ env })
    try {
      const error = await helper.run({ file: "lathe-no-such-program" }).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e
      )
      const direct = await runProcess({ file: "lathe-no-such-program", env }).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e
      )
      assert.strictEqual(error?.code, "ENOENT")
      assert.strictEqual(direct?.code, "ENOENT")
      assert.strictEqual((await helper.run({ file: "true" })).exitCode, 0)
    } finally {
      helper.close()
    }
  })

  it("stops a program at its time limit and on abort", async () => {
    const helper = startProcessHelper({ env })
    try {
      const slow = await helper.run({ file: "sleep", args: ["30"], timeoutMs: 100 })
      assert.isTrue(slow.timedOut)
      assert.strictEqual(slow.exitCode, null)
      assert.strictEqual(slow.signal, "SIGTERM")
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const stubborn = await helper.run({
        file: "sh",
        args: ["-c", "trap '' TERM; while :; do sleep 0.05; done"],
        signal: controller.signal,
        killGraceMs: 100
      })
      assert.isTrue(stubborn.aborted)
      assert.strictEqual(stubborn.signal, "SIGKILL")
      assert.strictEqual((await helper.run({ file: "echo", args: ["after"] })).stdout.toString(), "after\n")
    } finally {
      helper.close()
    }
  })

  it("runs a call made while another runs on its own, and arguments with a newline too", async () => {
    const helper = startProcessHelper({ env })
    try {
      const [a, b] = await Promise.all([
        helper.run({ file: "sh", args: ["-c", "sleep 0.2; echo a"] }),
        helper.run({ file: "echo", args: ["b\nc"] })
      ])
      assert.strictEqual(a.stdout.toString(), "a\n")
      assert.strictEqual(b.stdout.toString(), "b\nc\n")
    } finally {
      helper.close()
    }
  })

  it("ends when closed, and with the process that started it, removing its files", async () => {
    // A temporary directory of this test's own (os.tmpdir() reads TMPDIR at each call): the snapshot tests of other
    // packages, run at the same time, start helpers of their own in the shared one.
    const own = tempDir("lathe-ph-tmp-")
    const savedTmp = process.env.TMPDIR
    process.env.TMPDIR = own
    onTestFinished(() => {
      if (savedTmp === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = savedTmp
    })
    const before = helperDirs()
    const helper = startProcessHelper({ env })
    await helper.run({ file: "true" })
    const shell = helper.pid() as number
    assert.isTrue(alive(shell))
    helper.close()
    assert.isTrue(await gone(shell))
    assert.deepStrictEqual(
      [...helperDirs()].filter((d) => !before.has(d)),
      []
    )

    // A parent killed outright: the shell sees its input end and goes too. The parent runs the source through tsx.
    const dir = tempDir("lathe-ph-parent-")
    const source = fileURLToPath(new URL("../src/process/process-helper.ts", import.meta.url))
    const program = join(dir, "parent.mts")
    writeFileSync(
      program,
      `import { startProcessHelper } from ${JSON.stringify(source)}\n` +
        `const helper = startProcessHelper({ env: { PATH: process.env.PATH } })\n` +
        `await helper.run({ file: "true" })\n` +
        // Alive until killed, but never past a minute: a test that fails before its kill leaves nothing behind.
        `console.log(helper.pid())\nsetTimeout(() => process.exit(0), 60_000)\n`
    )
    const parent = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), program], {
      // Only what it needs: under nx the test's own environment carries task settings a child must not inherit.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: own },
      stdio: ["ignore", "pipe", "ignore"]
    })
    onTestFinished(() => {
      parent.kill("SIGKILL")
    })
    // The pid's whole line (a chunk may end before it does).
    const pid = await new Promise<number>((resolve, reject) => {
      let out = ""
      parent.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const line = /^(\d+)\n/m.exec(out)
        if (line) resolve(Number(line[1]))
      })
      parent.once("exit", (code) =>
        reject(new Error(`the parent exited (${code}) before saying the helper's pid: ${out}`))
      )
    })
    assert.isTrue(alive(pid))
    parent.kill("SIGKILL")
    assert.isTrue(await gone(pid))
    assert.deepStrictEqual(
      [...helperDirs()].filter((d) => !before.has(d) && existsSync(join(tmpdir(), d))),
      []
    )
  }, 60_000)

  it("lets the process exit while the helper is idle", async () => {
    const dir = tempDir("lathe-ph-exit-")
    const source = fileURLToPath(new URL("../src/process/process-helper.ts", import.meta.url))
    const program = join(dir, "exit.mts")
    writeFileSync(
      program,
      `import { startProcessHelper } from ${JSON.stringify(source)}\n` +
        `const helper = startProcessHelper({ env: { PATH: process.env.PATH } })\n` +
        `const r = await helper.run({ file: "echo", args: ["ok"] })\nconsole.log(r.stdout.toString().trim())\n`
    )
    const result = await runProcess({
      file: process.execPath,
      args: ["--import", import.meta.resolve("tsx"), program],
      timeoutMs: 20_000
    })
    assert.strictEqual(result.stdout.toString().trim(), "ok")
    assert.isFalse(result.timedOut)
    assert.strictEqual(result.exitCode, 0)
  })
})
