/**
 * `lathe -v` prints the package's version and, in a checkout, the commit, without running git at start-up: the bundle
 * carries the commit it was built from, and from source the commit is read from git's files. Both are checked with no
 * `git` on PATH, against what git itself says.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"

const cli = fileURLToPath(new URL("..", import.meta.url))
const bundle = join(cli, "dist", "bundle", "lathe.js")
const bin = join(cli, "src", "bin.ts")
const tsx = import.meta.resolve("tsx")
const version = (JSON.parse(readFileSync(join(cli, "package.json"), "utf8")) as { version: string }).version

/** `node args…` with only Node's own folder on PATH: no git to ask. */
const withoutGit = (args: ReadonlyArray<string>) => {
  const env = { PATH: dirname(process.execPath), HOME: process.env.HOME ?? "/tmp" }
  const run = spawnSync(process.execPath, args, { cwd: cli, env, encoding: "utf8", timeout: 30_000 })
  assert.strictEqual(run.status, 0, run.stderr)
  return run.stdout
}

describe("lathe -v", () => {
  it("the checkout's bundle prints the version and the commit it was built from, with no git on PATH", () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: cli, encoding: "utf8" }).trim()
    assert.strictEqual(withoutGit([bundle, "-v"]), `${version} (${commit})\n`)
    assert.strictEqual(withoutGit([bundle, "--version"]), `${version} (${commit})\n`)
  })

  it("from source, the commit HEAD names, read from git's files", { timeout: 30_000 }, () => {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: cli, encoding: "utf8" }).trim()
    const printed = withoutGit(["--conditions=@lathe/source", "--import", tsx, bin, "-v"])
    assert.strictEqual(printed, `${version} (${head.slice(0, 7)})\n`)
  })
})
