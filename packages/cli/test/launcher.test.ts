/**
 * The published launcher (`bin/lathe`, POSIX sh) and what `lathe --version` and `lathe --help` load. The launcher is
 * run for real (dash or whatever /bin/sh is) with a stand-in `lathe.js` beside it that reports what it was given; the
 * start-up check runs the real bundle (`dist/bundle/lathe.js`) and reads Node's own list of loaded modules.
 */
import { spawnSync } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it, onTestFinished } from "vitest"

const launcher = fileURLToPath(new URL("../bin/lathe", import.meta.url))
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

/** Prints, as JSON, its arguments, the keys on the descriptor `LATHE_KEYS_FD` names and the environment; exits 7. */
const standIn = `import { readFileSync } from "node:fs"
const fd = Number(process.env.LATHE_KEYS_FD)
process.stdout.write(JSON.stringify({
  argv: process.argv.slice(2),
  keys: Number.isInteger(fd) ? readFileSync(fd, "utf8") : null,
  env: Object.fromEntries(Object.entries(process.env).filter(([name]) => /KEY|TOKEN|NOT_A/.test(name)))
}))
process.exitCode = 7
`

/** A folder with the real launcher and the stand-in beside it, plus a symlink to the launcher from another folder. */
const install = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-launcher-"))
  onTestFinished(() => rmSync(root, { recursive: true, force: true }))
  const bin = join(root, "pkg", "bin")
  mkdirSync(bin, { recursive: true })
  copyFileSync(launcher, join(bin, "lathe"))
  writeFileSync(join(bin, "lathe.js"), standIn)
  writeFileSync(join(root, "pkg", "package.json"), '{ "type": "module" }\n')
  mkdirSync(join(root, "global-bin"))
  symlinkSync("../pkg/bin/lathe", join(root, "global-bin", "lathe"))
  return { direct: join(bin, "lathe"), linked: join(root, "global-bin", "lathe") }
}

const run = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) => {
  const result = spawnSync("/bin/sh", [file, ...args], {
    env: { PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter), ...env },
    encoding: "utf8"
  })
  return {
    status: result.status,
    seen: JSON.parse(result.stdout || "{}") as Record<string, unknown>,
    stderr: result.stderr
  }
}

describe("bin/lathe, the published launcher", () => {
  it("hands keys over on fd 3 (escaped), keeps them out of the environment, and passes arguments and the exit code", () => {
    const { direct, linked } = install()
    const env = {
      ANTHROPIC_API_KEY: "sk-one\\two\nthree",
      AWS_SESSION_TOKEN: "tok * [a] $HOME",
      // A line of another variable's value that looks like a key: not a variable, not handed over.
      NOT_A_KEY: "x\nFAKE_API_KEY=leak\n*",
      SOME_TOKEN: "stays"
    }
    const args = ["run", "two words", "*", "--x=$HOME"]
    for (const file of [direct, linked]) {
      const { status, seen, stderr } = run(file, args, env)
      assert.strictEqual(status, 7, stderr)
      assert.deepStrictEqual(seen.argv, args)
      assert.deepStrictEqual(String(seen.keys).split("\n").filter(Boolean).sort(), [
        "ANTHROPIC_API_KEY=sk-one\\\\two\\nthree",
        "AWS_SESSION_TOKEN=tok * [a] $HOME"
      ])
      assert.deepStrictEqual(seen.env, { LATHE_KEYS_FD: "3", NOT_A_KEY: env.NOT_A_KEY, SOME_TOKEN: "stays" })
    }
  })

  it("without keys, starts Node with no descriptor to read", () => {
    const { linked } = install()
    const { status, seen } = run(linked, ["--version"], { SOME_TOKEN: "stays" })
    assert.strictEqual(status, 7)
    assert.deepStrictEqual(seen, { argv: ["--version"], keys: null, env: { SOME_TOKEN: "stays" } })
  })
})

describe("what lathe --version and lathe --help load (the bundle)", () => {
  it.skipIf(!existsSync(bundle))("neither child_process, v8, Node's streams nor process.stdout/stdin", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-start-modules-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const probe = join(dir, "probe.cjs")
    writeFileSync(
      probe,
      'process.on("exit", () => require("node:fs").writeFileSync(process.env.PROBE_OUT, process.moduleLoadList.join("\\n")))\n'
    )
    for (const args of [["--version"], ["--help"], ["help"], ["-v"]]) {
      const out = join(dir, `${args[0]}.txt`)
      const result = spawnSync(process.execPath, ["-r", probe, bundle, ...args], {
        env: { PATH: process.env.PATH ?? "", HOME: dir, PROBE_OUT: out },
        encoding: "utf8"
      })
      assert.strictEqual(result.status, 0, result.stderr)
      assert.match(result.stdout, args[0] === "--version" || args[0] === "-v" ? /^\S+/ : /^lathe — /)
      const loaded = readFileSync(out, "utf8").split("\n")
      const heavy = loaded.filter((name) =>
        /^NativeModule (child_process|v8|stream|net|tty|internal\/fs\/promises|internal\/fs\/sync_write_stream)$/.test(
          name
        )
      )
      assert.deepStrictEqual(heavy, [], `lathe ${args.join(" ")} loaded`)
    }
  })
})
