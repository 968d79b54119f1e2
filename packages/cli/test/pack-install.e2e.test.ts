/**
 * Installing Lathe à la carte, as a user does: `npm pack` @lathe/core, @lathe/tools and @lathe/permission (and
 * @lathe/plugin, which @lathe/tools depends on), install only those tarballs (their dependencies come from the registry or the npm cache; nothing from the monorepo's
 * node_modules), plus the `effect` and `zod` the program imports, in an empty project outside the monorepo, and run
 * there the program of core's README ("Use the packages on their own") with the Node running this test; then
 * type-check a consumer with TypeScript. Needs every package built (`npx nx run @lathe/cli:build`; Nx does it before
 * this package's tests) and the npm registry or a warm npm cache. Takes about 10 s.
 */
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  buildProblem,
  manifest,
  PACKAGES,
  readmeProgram,
  repo,
  runChild,
  runtimeImports
} from "./pack-install-helpers.js"

const PACKED = ["@lathe/core", "@lathe/tools", "@lathe/permission", "@lathe/plugin"] as const
const REGISTRY_HINT =
  "npm install needs the npm registry (or a warm npm cache) for the packages' own dependencies: check the network."

/** What `npm pack --json` prints per package (the fields read here). */
interface PackResult {
  readonly name: string
  readonly filename: string
  readonly files: ReadonlyArray<{ readonly path: string }>
}

describe("the published packages", () => {
  it("are built, and their dist imports only packages they declare as dependencies", async () => {
    const unbuilt = PACKAGES.map(buildProblem).filter((problem) => problem !== undefined)
    assert.deepStrictEqual(unbuilt, [], unbuilt.join("\n"))
    for (const dir of PACKAGES) {
      const pkg = manifest(dir)
      // A peer dependency counts: an opt-in entry (core's store-contract suite needs @effect/vitest) declares it so.
      const undeclared = [...(await runtimeImports(dir))].filter(
        (name) => pkg.dependencies?.[name] === undefined && pkg.peerDependencies?.[name] === undefined
      )
      assert.deepStrictEqual(undeclared, [], `${pkg.name} imports ${undeclared.join(", ")} without depending on it`)
    }
  }, 30_000)
})

describe("core, tools and permission installed on their own", () => {
  let dir = ""
  let app = ""
  let packed: ReadonlyArray<PackResult> = []

  beforeAll(async () => {
    const unbuilt = ["packages/core", "packages/tools", "packages/permission", "packages/plugin"].map(buildProblem)
    for (const problem of unbuilt) if (problem !== undefined) throw new Error(problem)
    dir = mkdtempSync(join(tmpdir(), "lathe-pack-install-"))
    app = join(dir, "app")
    assert.isFalse(realpathSync(dir).startsWith(realpathSync(repo)), `${dir} must be outside the monorepo`)

    const pack = await runChild(
      "npm",
      ["pack", "--json", ...PACKED.flatMap((name) => ["-w", name]), "--pack-destination", dir],
      {
        cwd: repo,
        timeoutMs: 30_000,
        hint: "npm pack reads only the workspace."
      }
    )
    assert.strictEqual(pack.code, 0, `npm pack failed:\n${pack.stderr}`)
    packed = JSON.parse(pack.stdout) as ReadonlyArray<PackResult>

    mkdirSync(app)
    writeFileSync(
      join(app, "package.json"),
      `${JSON.stringify({ name: "a-la-carte", private: true, type: "module" })}\n`
    )
    // The README's program imports effect and zod itself: the versions @lathe/core pins, so there is one copy of each.
    const pins = manifest("packages/core").dependencies ?? {}
    const install = await runChild(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--fetch-retries=1",
        "--fetch-retry-mintimeout=1000",
        "--fetch-retry-maxtimeout=3000",
        "--fetch-timeout=20000",
        ...packed.map((result) => join(dir, result.filename)),
        `effect@${pins.effect}`,
        `zod@${pins.zod}`
      ],
      { cwd: app, timeoutMs: 75_000, hint: REGISTRY_HINT }
    )
    assert.strictEqual(install.code, 0, `npm install failed. ${REGISTRY_HINT}\n${install.stderr.slice(-3000)}`)
  }, 110_000)

  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("packs dist with types, the files read at run time, and no build leftovers", () => {
    const files = (name: string) => packed.find((result) => result.name === name)?.files.map((file) => file.path) ?? []
    assert.deepStrictEqual(
      packed.map((result) => result.name),
      [...PACKED]
    )
    const core = files("@lathe/core")
    for (const file of ["dist/index.js", "dist/index.d.ts", "dist/testing.js", "dist/testing.d.ts"])
      assert.include(core, file)
    assert.includeMembers(files("@lathe/tools"), ["dist/index.js", "dist/index.d.ts", "src/read.txt", "src/bash.txt"])
    assert.includeMembers(files("@lathe/permission"), ["dist/index.js", "dist/index.d.ts", "dist/bash.js"])
    const leftovers = packed.flatMap((result) =>
      result.files.filter((file) => /tsbuildinfo|(^|\/)test\//.test(file.path)).map((file) => file.path)
    )
    assert.deepStrictEqual(leftovers, [])
  })

  it("installs real copies, not links into the monorepo, with one @lathe/core", () => {
    for (const name of PACKED) {
      const installed = join(app, "node_modules", name)
      assert.isFalse(lstatSync(installed).isSymbolicLink(), `${name} is a link`)
      assert.isFalse(realpathSync(installed).startsWith(realpathSync(repo)), `${name} resolves into the monorepo`)
    }
    for (const name of ["@lathe/tools", "@lathe/permission"]) {
      const nested = join(app, "node_modules", name, "node_modules/@lathe/core")
      assert.throws(() => lstatSync(nested), /ENOENT/, `${name} got its own @lathe/core`)
    }
  })

  it("runs core's README program: a loop with a built-in tool and a plugin's tool and system text", async () => {
    writeFileSync(
      join(app, "agent.mjs"),
      readmeProgram(join(repo, "packages/core/README.md"), "Use the packages on their own")
    )
    const run = await runChild(process.execPath, ["agent.mjs"], {
      cwd: app,
      timeoutMs: 30_000,
      hint: "The program runs one scripted turn; it should take about a second."
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "") as {
      system: string
      toolResults: ReadonlyArray<string>
      answer: string
      commands: ReadonlyArray<string>
    }
    assert.strictEqual(summary.system, "Talk like a pirate.") // the plugin's system.transform reached the model
    assert.lengthOf(summary.toolResults, 2)
    assert.include(summary.toolResults[0], "the answer is 42") // @lathe/tools' read, reading the file
    assert.strictEqual(summary.toolResults[1], "AHOY") // the plugin's own tool
    assert.strictEqual(summary.answer, "Arr, the answer be 42.")
    // @lathe/permission found its tree-sitter grammar through its own dependencies.
    assert.deepStrictEqual(summary.commands, ["git push", "rm -rf build"])
  }, 40_000)

  it("gives a TypeScript consumer real types for every entry point (`types` of the exports maps)", async () => {
    const dev = manifest(".").devDependencies ?? {}
    const install = await runChild(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "-D",
        `typescript@${dev.typescript}`,
        `@types/node@${dev["@types/node"]}`
      ],
      { cwd: app, timeoutMs: 60_000, hint: REGISTRY_HINT }
    )
    assert.strictEqual(
      install.code,
      0,
      `npm install of TypeScript failed. ${REGISTRY_HINT}\n${install.stderr.slice(-3000)}`
    )
    writeFileSync(join(app, "consumer.mts"), CONSUMER)
    const options = {
      module: "nodenext",
      target: "es2023",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"]
    }
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: options, files: ["consumer.mts"] }))
    const tsc = await runChild(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", "."], {
      cwd: app,
      timeoutMs: 60_000,
      hint: "tsc checks one small file."
    })
    assert.strictEqual(tsc.code, 0, `tsc found errors in a consumer of the packages:\n${tsc.stdout}${tsc.stderr}`)
  }, 90_000)
})

/** Uses each entry point's types; the `@ts-expect-error` lines fail to compile if a type degraded to `any`. */
const CONSUMER = `import { chunks, type TestLoopOptions, testLoopLayer } from "@lathe/core/testing"
import { analyzeCommand, fromConfig } from "@lathe/permission"
import { definePlugin, evaluate, type Plugin, type Rule, Tool } from "@lathe/plugin"
import { type ReadInput, ReadTool } from "@lathe/tools"
import { z } from "zod"

const echo = Tool.define("echo", {
  description: "Echo",
  parameters: z.object({ text: z.string() }),
  mutates: false,
  execute: async ({ text }) => ({ title: "echo", output: text })
})
const plugin: Plugin = definePlugin(async () => ({
  tools: [ReadTool, echo],
  "system.transform": async (_input, output) => {
    output.system.push("hi")
  }
}))
const options: TestLoopOptions = { root: "/tmp", steps: [[chunks.text("hi")]], plugins: [plugin] }
const rule: Rule = evaluate("bash", "rm -rf x", fromConfig({ bash: { "rm *": "deny" } }))
const commands: ReadonlyArray<string> = (await analyzeCommand("ls")).commands.map((command) => command.text)
const input: ReadInput = { filePath: "a.txt" }
// @ts-expect-error filePath is a string
const wrongInput: ReadInput = { filePath: 1 }
// @ts-expect-error steps is required
const wrongOptions: TestLoopOptions = { root: "/tmp" }
export { commands, input, options, rule, testLoopLayer, wrongInput, wrongOptions }
`
