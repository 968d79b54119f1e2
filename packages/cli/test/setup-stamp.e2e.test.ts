import { spawnSync } from "node:child_process"
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The real ./lathe and scripts/setup-stamps.sh, run in a copy of the checkout's shape where npm and the bundle
// script are stand-ins that record their calls: what is tested is the setup logic, not npm.
const repo = fileURLToPath(new URL("../../../", import.meta.url))

const write = (file: string, content: string) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, content)
}

const LOCK = '{ "name": "lathe", "lockfileVersion": 3, "packages": {} }\n'

/** A checkout-shaped folder with the real launcher and stamp script, a fake npm and a fake bundle script. */
const fakeCheckout = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-setup-"))
  for (const file of ["lathe", "scripts/setup-stamps.sh", "scripts/use-node.sh", ".nvmrc"]) {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    copyFileSync(join(repo, file), join(root, file))
  }
  write(join(root, "package.json"), '{ "name": "lathe", "workspaces": ["packages/*"] }\n')
  write(join(root, "package-lock.json"), LOCK)
  write(join(root, "nx.json"), "{}\n")
  write(join(root, "packages/core/package.json"), '{ "name": "@lathe/core" }\n')
  write(join(root, "packages/core/src/index.ts"), "export const a = 1\n")
  write(join(root, "packages/cli/package.json"), '{ "name": "@lathe/cli" }\n')
  // The stand-in build: logs a line and writes a bundle that prints its arguments.
  write(
    join(root, "packages/cli/scripts/bundle.mjs"),
    `import { appendFileSync, mkdirSync, writeFileSync } from "node:fs"
appendFileSync(${JSON.stringify(join(root, "calls"))}, "bundle\\n")
console.error("bundle: 3 files, 12 KiB")
if (process.env.FAKE_BUILD_FAIL) { console.error("error: the build broke"); process.exit(1) }
mkdirSync(new URL("../dist/bundle/", import.meta.url), { recursive: true })
writeFileSync(new URL("../dist/bundle/lathe.js", import.meta.url), 'console.log("lathe says", process.argv.slice(2).join(" "))\\n')
`
  )
  const bin = join(root, "fake-bin")
  write(
    join(bin, "npm"),
    `#!/usr/bin/env bash
echo "npm $*" >>${JSON.stringify(join(root, "calls"))}
echo "added 604 packages in 35s"
[ -z "\${FAKE_NPM_FAIL:-}" ] || { echo "npm error 404 Not Found - GET https://registry.npmjs.org/nope"; exit 1; }
mkdir -p node_modules
touch package-lock.json # npm install rewrites the lockfile, same bytes, new mtime
`
  )
  chmodSync(join(bin, "npm"), 0o755)
  const env = {
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: join(root, "home"),
    TMPDIR: tmpdir()
  }
  const lathe = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
    spawnSync(join(root, "lathe"), args, { cwd: tmpdir(), env: { ...env, ...extra }, encoding: "utf8" })
  const calls = () => (existsSync(join(root, "calls")) ? readFileSync(join(root, "calls"), "utf8") : "")
  /** Runs bash with the stamp functions loaded, as scripts/test does. */
  const stamps = (script: string) =>
    spawnSync("bash", ["-c", `set -euo pipefail; root=${JSON.stringify(root)}; . scripts/setup-stamps.sh; ${script}`], {
      cwd: root,
      env,
      encoding: "utf8"
    })
  /** Moves a file's mtime into the past, so everything else looks newer. */
  const age = (file: string, seconds = 600) => {
    const then = Date.now() / 1000 - seconds
    utimesSync(join(root, file), then, then)
  }
  return { root, lathe, calls, stamps, age }
}

describe("./lathe's setup", () => {
  it("the first run prints one line per step, keeps the output in .tools/setup.log, then runs the CLI", () => {
    const c = fakeCheckout()
    const first = c.lathe(["--version"])
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout).toBe("lathe says --version\n")
    const lines = first.stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      /^lathe: installing dependencies \(npm install, ~1 min the first time\)\.\.\. done in \d+ s$/
    )
    expect(lines[1]).toMatch(/^lathe: building the CLI \(first run, ~30 s\)\.\.\. done in \d+ s$/)
    expect(c.calls()).toBe("npm install --no-audit --no-fund --loglevel=error\nbundle\n")
    const log = readFileSync(join(c.root, ".tools/setup.log"), "utf8")
    expect(log).toContain("added 604 packages in 35s")
    expect(log).toContain("bundle: 3 files, 12 KiB")

    // The hot path: nothing to do, nothing printed, nothing run.
    const second = c.lathe(["--version"])
    expect(second.stderr).toBe("")
    expect(second.stdout).toBe("lathe says --version\n")
    expect(c.calls()).toBe("npm install --no-audit --no-fund --loglevel=error\nbundle\n")
  })

  it("a lockfile or source rewritten with the same bytes redoes nothing; changed bytes redo the step", () => {
    const c = fakeCheckout()
    c.lathe([])
    const before = c.calls()
    // What scripts/test's npm install does to the lockfile, and an editor saving a file unchanged.
    c.age("node_modules/.lathe-install-stamp")
    c.age("packages/cli/dist/.lathe-build-stamp")
    writeFileSync(join(c.root, "package-lock.json"), LOCK)
    writeFileSync(join(c.root, "packages/core/src/index.ts"), "export const a = 1\n")
    const same = c.lathe(["--version"])
    expect(same.stderr).toBe("")
    expect(c.calls()).toBe(before)
    // The stamps moved on: the next run takes the hot path (no hash) and still does nothing.
    expect(c.lathe(["--version"]).stderr).toBe("")

    writeFileSync(join(c.root, "packages/core/src/index.ts"), "export const a = 2\n")
    const edited = c.lathe(["--version"])
    expect(edited.stderr).toMatch(/^lathe: rebuilding the CLI \(sources changed\)\.\.\. done in \d+ s\n$/)
    expect(c.calls()).toBe(`${before}bundle\n`)

    writeFileSync(join(c.root, "package-lock.json"), LOCK.replace("{}", '{ "": {} }'))
    const locked = c.lathe(["--version"])
    expect(locked.stderr).toContain("lathe: installing dependencies")
    expect(locked.stderr).toContain("lathe: rebuilding the CLI") // the lockfile is an input of the build too
  })

  it("scripts/test's stamp writing leaves ./lathe nothing to redo", () => {
    const c = fakeCheckout()
    c.lathe([])
    const before = c.calls()
    // scripts/test: npm install (rewrites the lockfile), then writes the install stamp the way ./lathe does; its
    // build then writes the bundle and the build stamp with the inputs' hash from before the build.
    c.age("node_modules/.lathe-install-stamp")
    c.age("packages/cli/dist/.lathe-build-stamp")
    writeFileSync(join(c.root, "packages/core/src/index.ts"), "export const a = 3\n") // a change scripts/test builds
    const inputs = ["$", "{build_inputs[@]}"].join("") // bash's array expansion, not a template placeholder
    const run = c.stamps(
      'touch package-lock.json; write_install_stamp "$(dirname "$(command -v node)")"\n' +
        `ref="$(stamp_now)"; inputs="$(stamp_hash "${inputs}")"; sleep 0.05\n` +
        "node packages/cli/scripts/bundle.mjs 2>/dev/null\n" +
        '[ "$bin" -nt "$ref" ] && write_build_stamp "$inputs" "$ref"; rm -f "$ref"\n' +
        "install_needed; build_needed"
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toBe("") // neither step is needed
    const after = c.lathe(["--version"])
    expect(after.stderr).toBe("")
    expect(after.stdout).toBe("lathe says --version\n")
    expect(c.calls()).toBe(`${before}bundle\n`) // only scripts/test's own build
  })

  it("the stamp functions: identical content is fresh, changed content is stale, a missing stamp is stale", () => {
    const c = fakeCheckout()
    const check = (script: string) => c.stamps(script).stdout.trim()
    expect(check("install_needed")).toBe("no stamp")
    expect(check("mkdir -p node_modules; write_install_stamp /usr/bin; install_needed")).toBe("")
    c.age("node_modules/.lathe-install-stamp")
    expect(check("touch package-lock.json; install_needed")).toBe("")
    c.age("node_modules/.lathe-install-stamp")
    expect(check("echo '{}' >packages/core/package.json; install_needed")).toBe("content changed since the stamp")
  })

  it("a failing step names the log, shows its last lines and how to run the step by hand", () => {
    const c = fakeCheckout()
    const failed = c.lathe(["--version"], { FAKE_NPM_FAIL: "1" })
    expect(failed.status).toBe(1)
    expect(failed.stdout).toBe("")
    expect(failed.stderr).toContain("lathe: installing dependencies (npm install, ~1 min the first time)... failed")
    expect(failed.stderr).toContain(`lathe: setup failed: npm install. The last lines of ${c.root}/.tools/setup.log:`)
    expect(failed.stderr).toContain("  | npm error 404 Not Found - GET https://registry.npmjs.org/nope")
    expect(failed.stderr).toContain(`cd ${c.root} && . scripts/use-node.sh && npm install`)
    expect(existsSync(join(c.root, "node_modules/.lathe-install-stamp"))).toBe(false)

    const build = c.lathe(["--version"], { FAKE_BUILD_FAIL: "1" })
    expect(build.status).toBe(1)
    expect(build.stderr).toContain("  | error: the build broke")
    expect(build.stderr).toContain("node packages/cli/scripts/bundle.mjs")
    expect(existsSync(join(c.root, "packages/cli/dist/.lathe-build-stamp"))).toBe(false)
  })
})
