import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { coreSource } from "../src/commands/plugin.js"
import { runLathe, sandbox } from "./helpers.js"

const checkoutCore = fileURLToPath(new URL("../../core", import.meta.url))

interface Manifest {
  readonly devDependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
}

describe("lathe plugin init: a scaffold whose next step works before @lathe/core is published", () => {
  it("from a checkout: @lathe/core is file:<this checkout>/packages/core, and the next step is printed", async () => {
    const { project, env } = sandbox()
    const run = await runLathe(["plugin", "init", "@acme/lathe-word-count"], { cwd: project, env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const dir = join(project, "lathe-word-count")
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest
    const core = manifest.devDependencies["@lathe/core"] ?? ""
    expect(core).toBe(`file:${checkoutCore}`)
    // The folder it names is this checkout's @lathe/core.
    expect(JSON.parse(readFileSync(join(core.slice("file:".length), "package.json"), "utf8")).name).toBe("@lathe/core")
    // The test loads the checkout's source, so it needs no build of packages/core.
    expect(readFileSync(join(dir, "vitest.config.ts"), "utf8")).toContain('conditions: ["@lathe/source"]')
    expect(run.stdout).toContain(`@lathe/core comes from this Lathe checkout (file:${checkoutCore})`)
    expect(run.stdout).toContain(`Next: cd ${dir} && npm install && npm test`)
    expect(readFileSync(join(dir, "README.md"), "utf8")).toContain("while it is not on npm")
  })

  it("installed from npm: @lathe/core is the CLI's own version range, and no checkout config is written", () => {
    const base = mkdtempSync(join(tmpdir(), "lathe-npm-install-"))
    const cli = join(base, "node_modules", "@lathe", "cli")
    mkdirSync(join(cli, "dist", "bundle"), { recursive: true })
    mkdirSync(join(base, "node_modules", "@lathe", "core"), { recursive: true })
    writeFileSync(join(base, "node_modules", "@lathe", "core", "package.json"), '{ "name": "@lathe/core" }')
    writeFileSync(join(cli, "package.json"), JSON.stringify({ name: "@lathe/cli", version: "1.4.2" }))
    expect(coreSource(join(cli, "dist", "bundle", "chunk-x.js"))).toEqual({ kind: "npm", version: "1.4.2" })
    // This checkout, as the CLI sees it from its source and from its bundle.
    const cliDir = fileURLToPath(new URL("..", import.meta.url))
    const checkout = { kind: "checkout", path: checkoutCore }
    expect(coreSource(join(cliDir, "src", "commands", "plugin.ts"))).toEqual(checkout)
    expect(coreSource(join(cliDir, "dist", "bundle", "lathe.js"))).toEqual(checkout)
  })

  // npm install (from the npm cache when it has the packages) and the scaffold's vitest take 20-40 s on a busy
  // machine: opt in with LATHE_TEST_NPM=1.
  it.runIf(process.env.LATHE_TEST_NPM === "1")(
    "the printed next step, npm install && npm test, passes in the scaffold",
    { timeout: 240_000 },
    async () => {
      const { project, env } = sandbox()
      const run = await runLathe(["plugin", "init", "lathe-shout"], { cwd: project, env })
      expect(run.code).toBe(0)
      const dir = join(project, "lathe-shout")
      const npmEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false" }
      const install = spawnSync("npm", ["install", "--prefer-offline"], { cwd: dir, env: npmEnv, encoding: "utf8" })
      expect(install.status, install.stderr).toBe(0)
      expect(existsSync(join(dir, "node_modules", "@lathe", "core", "src", "index.ts"))).toBe(true)
      const test = spawnSync("npm", ["test"], { cwd: dir, env: npmEnv, encoding: "utf8" })
      expect(test.status, `${test.stdout}\n${test.stderr}`).toBe(0)
      expect(test.stdout).toMatch(/1 passed/)
    }
  )
})
