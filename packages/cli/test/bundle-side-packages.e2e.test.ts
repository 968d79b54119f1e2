import { spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer, startWireServer, type WireFormat } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { sandbox } from "./helpers.js"

// The run build's side packages (`RUN_SIDE_PACKAGES` in scripts/bundle.mjs): the OpenAI, Anthropic and MCP SDKs live
// beside run.cjs (`side-<name>.cjs`), take zod and the AI SDK's provider packages from it, and are loaded with a V8
// code cache of their own (`loadWithCodeCache`), so the caches a run leaves show which it loaded. Runs the bundled
// CLI, which Nx builds before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const runDir = join(dirname(bundle), "run")
// The runs use a copy of the bundle outside the repository: no node_modules above it, so a shared package a side
// file did not get from run.cjs fails instead of being found in the repository's node_modules.
let copied: string | undefined
const isolated = () => {
  if (copied === undefined) {
    copied = join(mkdtempSync(join(tmpdir(), "lathe-side-packages-")), "bundle")
    cpSync(dirname(bundle), copied, { recursive: true })
  }
  return join(copied, "lathe.js")
}
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/**
 * Runs the bundle with its code caches in a folder of their own; `loaded` is the side packages that left a cache there
 * (their names, sorted), and `required` every file Node's `require` loaded from the run build's folder.
 */
const runRecorded = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>, dir: string) => {
  const caches = join(dir, "code-cache")
  const record = join(dir, "required.txt")
  const hook = join(dir, "record.cjs")
  writeFileSync(
    hook,
    'const Module = require("node:module")\n' +
      "const load = Module._load\n" +
      "Module._load = function (request, ...rest) {\n" +
      '  if (/-[\\w-]+\\.cjs$/.test(request)) require("node:fs").appendFileSync(process.env.RECORD_TO, request + "\\n")\n' +
      "  return load.call(this, request, ...rest)\n" +
      "}\n"
  )
  return new Promise<{
    code: number | null
    stdout: string
    stderr: string
    loaded: ReadonlyArray<string>
    required: string
  }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--require", hook, isolated(), ...args], {
      cwd,
      env: { ...env, RECORD_TO: record, LATHE_CODE_CACHE: caches },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) =>
      resolve({
        code,
        stdout,
        stderr,
        loaded: (existsSync(caches) ? readdirSync(caches) : [])
          .flatMap((name) => /^side-([\w-]+)\.cjs-.*\.v8cache$/.exec(name)?.[1] ?? [])
          .sort(),
        required: existsSync(record) ? readFileSync(record, "utf8") : ""
      })
    )
  })
}

/** A sandbox whose user config points the provider at `url`, with a key for it. */
const providerBox = (provider: string, model: string, url: string, keyVariable: string) => {
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({ model: `${provider}/${model}`, provider: { [provider]: { baseURL: url } } })
  )
  return { ...box, env: { ...box.env, [keyVariable]: "sk-test" } }
}

describe("the run build's side packages", () => {
  it("keeps the OpenAI, Anthropic and MCP SDKs out of run.cjs, with no copy of zod of their own", () => {
    const runBuild = readFileSync(join(runDir, "run.cjs"), "utf8")
    const sides = {
      openai: "OpenAI-Organization",
      anthropic: "anthropic-version",
      mcp: "Server does not support tools"
    }
    for (const [name, marker] of Object.entries(sides)) {
      const side = readFileSync(join(runDir, `side-${name}.cjs`), "utf8")
      assert.include(side, marker, `side-${name}.cjs holds the package`)
      assert.notInclude(runBuild, marker, `run.cjs does not hold ${name}`)
      // zod's classes are named by these strings: the side file uses run.cjs's zod.
      assert.notInclude(side, '"$ZodType"', `side-${name}.cjs has no zod of its own`)
    }
    assert.include(runBuild, '"$ZodType"')
  })

  const cases: ReadonlyArray<{ provider: string; model: string; wire: WireFormat; key: string }> = [
    { provider: "anthropic", model: "claude-sonnet-4-5", wire: "anthropic", key: "ANTHROPIC_API_KEY" },
    { provider: "openai", model: "gpt-5", wire: "openai-responses", key: "OPENAI_API_KEY" }
  ]
  for (const { provider, model, wire, key } of cases) {
    it(`a run on ${provider} loads its SDK from side-${provider}.cjs with a code cache, and nothing else`, async () => {
      server = await startWireServer(wire, [{ text: `answer from ${provider}` }])
      const box = providerBox(provider, model, server.url, key)
      for (const attempt of ["first", "second (from the caches)"]) {
        const run = await runRecorded(["run", "--format", "json", "hi"], box.project, box.env, box.dir)
        assert.strictEqual(run.code, 0, `${attempt}: ${run.stderr}`)
        assert.include(run.stdout, `answer from ${provider}`, attempt)
        assert.deepStrictEqual(run.loaded, [provider], attempt)
        assert.strictEqual(run.required, "", `${attempt}: nothing through Node's require`)
      }
      assert.strictEqual(server.requests.length, 2)
    })
  }

  it("a plain run loads no side package", async () => {
    server = await startScriptedServer([{ steps: [{ text: "plain" }] }])
    const box = sandbox()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const run = await runRecorded(["run", "--format", "json", "hi"], box.project, env, box.dir)
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(run.loaded, [])
    assert.strictEqual(run.required, "")
  })

  it("a run with an MCP server loads the MCP SDK from side-mcp.cjs and calls its tool", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "everything_echo", input: { message: "via side file" } }] },
      { steps: [{ text: "Echoed." }] }
    ])
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({
        mcp: { everything: { type: "local", command: [process.execPath, everything, "stdio"], wait: true } }
      })
    )
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const run = await runRecorded(["run", "--format", "json", "echo it"], box.project, env, box.dir)
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(run.loaded, ["mcp"])
    assert.include(JSON.stringify(server.requests[1]?.body), "Echo: via side file")
  }, 60_000)
})
