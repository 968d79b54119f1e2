import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { describe, expect, it } from "vitest"
import { coreSource } from "../src/commands/plugin.js"
import { runLathe, runProgram, sandbox } from "./helpers.js"

const checkoutCore = fileURLToPath(new URL("../../core", import.meta.url))
const checkoutKit = fileURLToPath(new URL("../../plugin", import.meta.url))
const workspaceModules = fileURLToPath(new URL("../../../node_modules", import.meta.url))
// The bundled CLI (what `./lathe` and the published `lathe` run); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

/** The kit as an outsider receives it: `npm pack` of packages/plugin (its built dist, its source), into `dir`. */
const packKit = (dir: string): string => {
  const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", dir, checkoutKit], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" }
  })
  expect(pack.status, pack.stderr).toBe(0)
  const [packed] = JSON.parse(pack.stdout) as ReadonlyArray<{ readonly filename: string }>
  return join(dir, packed?.filename ?? "")
}

/**
 * What `npm install` would leave in the scaffold, without the registry (CI and this machine may have none): the kit's
 * tarball unpacked where npm puts it, and the scaffold's other devDependencies (zod, vitest, typescript, @types/node)
 * linked from this workspace's node_modules, at the versions the scaffold pins. Nothing of Lathe's but the kit.
 */
const installOffline = (dir: string, tarball: string): void => {
  const modules = join(dir, "node_modules")
  mkdirSync(join(modules, "@lathe", "plugin"), { recursive: true })
  mkdirSync(join(modules, "@types"), { recursive: true })
  const untar = spawnSync("tar", ["-xzf", tarball, "-C", join(modules, "@lathe", "plugin"), "--strip-components=1"], {
    encoding: "utf8"
  })
  expect(untar.status, untar.stderr).toBe(0)
  // The kit's own dependencies, and the scaffold's tools.
  for (const name of ["effect", "zod", "vitest", "typescript", "@types/node"])
    symlinkSync(join(workspaceModules, name), join(modules, name))
}

interface Manifest {
  readonly devDependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
}

describe("lathe plugin init: a scaffold on the author kit alone, whose next step works before the kit is published", () => {
  it("from a checkout: @lathe/plugin is file:<this checkout>/packages/plugin, no @lathe/core, and the next step is printed", async () => {
    const { project, env } = sandbox()
    const run = await runLathe(["plugin", "init", "@acme/lathe-word-count"], { cwd: project, env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const dir = join(project, "lathe-word-count")
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest
    const kit = manifest.devDependencies["@lathe/plugin"] ?? ""
    expect(kit).toBe(`file:${checkoutKit}`)
    expect(JSON.stringify(manifest)).not.toContain("@lathe/core")
    // The folder it names is this checkout's @lathe/plugin.
    expect(JSON.parse(readFileSync(join(kit.slice("file:".length), "package.json"), "utf8")).name).toBe("@lathe/plugin")
    // The test and the type-check load the checkout's source, so it needs no build of packages/plugin.
    expect(readFileSync(join(dir, "vitest.config.ts"), "utf8")).toContain('conditions: ["@lathe/source"]')
    expect(readFileSync(join(dir, "tsconfig.json"), "utf8")).toContain('"customConditions"')
    // A command is scaffolded, and the test asserts on what the kit returns (no model's wire format).
    expect(readFileSync(join(dir, "src", "index.ts"), "utf8")).toContain('name: "wc"')
    const test = readFileSync(join(dir, "test", "index.test.ts"), "utf8")
    expect(test).toContain('runCommand(plugin, "wc"')
    expect(test).not.toContain("requests")
    expect(run.stdout).toContain(`@lathe/plugin comes from this Lathe checkout (file:${checkoutKit})`)
    expect(run.stdout).toContain(`Next: cd ${dir} && npm install && npm test`)
    const readme = readFileSync(join(dir, "README.md"), "utf8")
    expect(readme).toContain("while it is not on npm")
    expect(readme).toContain("[Lathe](https://github.com/lathe-dev/lathe)")
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

  it("as an outsider builds it: the kit from its packed tarball, tests with the harness, and a run of the bundled CLI", {
    timeout: 180_000
  }, async () => {
    const { dir: box, project, env } = sandbox()
    const run = await runLathe(["plugin", "init", "lathe-shout"], { cwd: box, env })
    expect(run.code, run.stderr).toBe(0)
    const dir = join(box, "lathe-shout")
    // Outside this repository, with the kit from its tarball: no checkout source (vitest.config.ts, customConditions),
    // as the README says to do once the kit is on npm.
    expect(dir.startsWith(fileURLToPath(new URL("../../..", import.meta.url)))).toBe(false)
    const tarball = packKit(mkdtempSync(join(tmpdir(), "lathe-kit-pack-")))
    const manifestFile = join(dir, "package.json")
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as Manifest
    writeFileSync(
      manifestFile,
      JSON.stringify({
        ...manifest,
        devDependencies: { ...manifest.devDependencies, "@lathe/plugin": `file:${tarball}` }
      })
    )
    rmSync(join(dir, "vitest.config.ts"))
    const tsconfigFile = join(dir, "tsconfig.json")
    const tsconfig = JSON.parse(readFileSync(tsconfigFile, "utf8")) as { compilerOptions: Record<string, unknown> }
    delete tsconfig.compilerOptions.customConditions
    writeFileSync(tsconfigFile, JSON.stringify(tsconfig))
    installOffline(dir, tarball)
    expect(existsSync(join(dir, "node_modules", "@lathe", "plugin", "dist", "index.js"))).toBe(true)
    expect(existsSync(join(dir, "node_modules", "@lathe", "core"))).toBe(false)
    const childEnv = { ...env, PATH: `${join(workspaceModules, ".bin")}:${env.PATH}` }

    // Its tests pass with the kit's harness alone: the hook, the tool, the command (a plain string) and the resource.
    const test = await runProgram(
      process.execPath,
      [join(workspaceModules, "vitest", "vitest.mjs"), "run"],
      { cwd: dir, env: childEnv, timeoutMs: 120_000 },
      "vitest"
    )
    expect(test.code, `${test.stdout}\n${test.stderr}`).toBe(0)
    expect(test.stdout).toMatch(/4 passed/)

    // Its type-check reads the kit (its built declarations) and no file of core.
    const tsc = join(workspaceModules, "typescript", "bin", "tsc")
    const files = await runProgram(process.execPath, [tsc, "--listFilesOnly"], { cwd: dir, env: childEnv }, "tsc")
    expect(files.code, files.stdout).toBe(0)
    expect(files.stdout).toContain("node_modules/@lathe/plugin/dist/index.d.ts")
    expect(files.stdout).not.toMatch(/packages\/core\/|@lathe\/core\//)
    const check = await runProgram(process.execPath, [tsc, "--noEmit"], { cwd: dir, env: childEnv }, "tsc")
    expect(check.code, check.stdout).toBe(0)

    // It runs in `lathe run --command` of the bundled CLI, against a scripted model: the command's plain string is
    // the prompt, the model calls the plugin's tool, and the hook's line is in the system prompt.
    const server = await startScriptedServer([
      { steps: [{ tool: "word_count", input: { text: "one two three" } }] },
      { steps: [{ text: "Three words." }] }
    ])
    try {
      writeFileSync(join(project, "lathe.json"), JSON.stringify({ plugin: [join(dir, "src", "index.ts")] }))
      const lathe = (args: ReadonlyArray<string>) =>
        runProgram(
          process.execPath,
          [bundle, ...args],
          { cwd: project, env: { ...env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" } },
          "lathe"
        )
      expect((await lathe(["trust"])).code).toBe(0)
      const turn = await lathe(["run", "--format", "json", "--command", "wc", "one", "two", "three"])
      expect(turn.code, turn.stderr).toBe(0)
      const completed = turn.events.flatMap((event) => (event.type === "tool.completed" ? [event] : []))
      expect(completed.map((event) => (event.state.status === "completed" ? event.state.output : ""))).toEqual(["3"])
      expect(JSON.stringify(server.requests[0]?.body)).toContain('Count the words of \\"one two three\\"')
      expect(JSON.stringify(server.requests[0]?.body)).toContain(`This project lives in ${project}.`)
    } finally {
      await server.close()
    }
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
      expect(existsSync(join(dir, "node_modules", "@lathe", "plugin", "src", "index.ts"))).toBe(true)
      expect(existsSync(join(dir, "node_modules", "@lathe", "core"))).toBe(false)
      const test = spawnSync("npm", ["test"], { cwd: dir, env: npmEnv, encoding: "utf8" })
      expect(test.status, `${test.stdout}\n${test.stderr}`).toBe(0)
      expect(test.stdout).toMatch(/4 passed/)
      // The type-check reads the kit's source and none of core's.
      const files = spawnSync("npx", ["tsc", "--listFilesOnly"], { cwd: dir, env: npmEnv, encoding: "utf8" })
      expect(files.status, files.stdout).toBe(0)
      expect(files.stdout).toContain("/plugin/src/index.ts")
      expect(files.stdout).not.toMatch(/packages\/core\/|@lathe\/core\//)
    }
  )
})
