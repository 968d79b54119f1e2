/**
 * "Install only what you need": `npm pack` @lathe/core and @lathe/plugin, install only those tarballs (their own
 * dependencies from the registry or the npm cache) in an empty project outside the monorepo, and check that no
 * provider SDK came with them (core declares the SDKs as optional peer dependencies; `ai` brings only the shared
 * interfaces and its gateway), that a turn of the real loop runs against an OpenAI-compatible server (Lathe's own
 * Chat Completions client, no SDK), that Anthropic without its SDK ends the turn with a `PackageMissing` provider
 * error naming the package and the command that adds it, and that after `npm i @ai-sdk/anthropic` the same turn
 * works. Needs core and plugin built (`npx nx run @lathe/cli:build`) and the npm registry or a warm npm cache.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { buildProblem, manifest, repo, runChild } from "./pack-install-helpers.js"

const PACKED = ["@lathe/core", "@lathe/plugin"] as const
const REGISTRY_HINT =
  "npm install needs the npm registry (or a warm npm cache) for the packages' own dependencies: check the network."
const INSTALL_FLAGS = [
  "--no-audit",
  "--no-fund",
  "--prefer-offline",
  "--fetch-retries=1",
  "--fetch-retry-mintimeout=1000",
  "--fetch-retry-maxtimeout=3000",
  "--fetch-timeout=20000"
]

/**
 * One turn of the real loop (SessionPrompt, Processor, the LLM layer on config) against a server on 127.0.0.1:
 * `node turn.mjs local` (an OpenAI-compatible server) or `node turn.mjs anthropic` (Anthropic's Messages API).
 * Prints the answer, or the error recorded on the assistant message.
 */
const TURN = `import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  Bus, Config, createSession, LLM, Paths, PermissionNext, Plugins, Question, Retry, SessionPrompt, SessionStore,
  SessionWriter, Snapshot, Subagents
} from "@lathe/core"
import { loopLayer } from "@lathe/core/loop"
import { startScriptedServer, startWireServer } from "@lathe/core/testing"
import { Effect, Layer } from "effect"

const which = process.argv[2]
const server = which === "local"
  ? await startScriptedServer([{ steps: [{ text: "Hello from a local server." }] }])
  : await startWireServer("anthropic", [{ text: "Hello from Claude." }])
const config = which === "local"
  ? { model: "local/coder", provider: { local: { type: "openai-compatible", baseURL: server.url, models: { coder: {} } } } }
  : { model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url, apiKey: "sk-ant-test" } } }
const root = mkdtempSync(join(tmpdir(), "lathe-turn-"))
const services = SessionWriter.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Paths.layerTest(root, {}), Config.layerTest(config), Bus.layer, SessionStore.memory))
)
const features = Layer.mergeAll(
  Plugins.layer([]), Question.layer, Subagents.layer, PermissionNext.allowAll, Snapshot.disabled, Retry.layerTest(0),
  LLM.layerWith({ LATHE_DATA_DIR: root })
).pipe(Layer.provideMerge(services))
const turn = Effect.gen(function* () {
  const { id } = yield* createSession()
  const prompt = yield* SessionPrompt
  return yield* prompt.prompt({ sessionID: id, parts: [{ type: "text", text: "Hello?" }], title: false })
})
// A provider failure that is not retried fails the prompt: printed as the error it is.
const failed = (error) => Effect.succeed({ error: { name: error._tag, message: error.message, reason: error.reason } })
const layer = loopLayer().pipe(Layer.provideMerge(features))
const reply = await Effect.runPromise(turn.pipe(Effect.catchTag("ProviderError", failed), Effect.provide(layer)))
await server.close()
console.log(JSON.stringify({
  answer: reply.parts?.find((part) => part.type === "text")?.text,
  error: reply.error ?? reply.info?.error,
  requests: server.requests.length
}))
`

/** What `turn.mjs` prints. */
interface TurnOutput {
  readonly answer?: string
  readonly error?: { readonly name: string; readonly message: string; readonly reason?: unknown }
  readonly requests: number
}

/** Every provider SDK core can load: its optional peer dependencies (`@effect/vitest` aside). */
const SDKS = Object.keys(manifest("packages/core").peerDependencies ?? {}).filter((name) => name !== "@effect/vitest")

describe("@lathe/core installed alone brings no provider SDK", () => {
  let dir = ""
  let app = ""

  const turn = async (which: "local" | "anthropic"): Promise<TurnOutput> => {
    const run = await runChild(process.execPath, ["turn.mjs", which], {
      cwd: app,
      timeoutMs: 30_000,
      hint: "The program runs one turn against a local server; it should take about a second."
    })
    assert.strictEqual(run.code, 0, run.stderr)
    return JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "") as TurnOutput
  }

  beforeAll(async () => {
    for (const problem of ["packages/core", "packages/plugin"].map(buildProblem))
      if (problem !== undefined) throw new Error(problem)
    dir = mkdtempSync(join(tmpdir(), "lathe-pack-providers-"))
    app = join(dir, "app")
    assert.isFalse(realpathSync(dir).startsWith(realpathSync(repo)), `${dir} must be outside the monorepo`)
    const pack = await runChild(
      "npm",
      ["pack", "--json", ...PACKED.flatMap((name) => ["-w", name]), "--pack-destination", dir],
      { cwd: repo, timeoutMs: 30_000, hint: "npm pack reads only the workspace." }
    )
    assert.strictEqual(pack.code, 0, `npm pack failed:\n${pack.stderr}`)
    const packed = JSON.parse(pack.stdout) as ReadonlyArray<{ readonly filename: string }>
    mkdirSync(app)
    writeFileSync(
      join(app, "package.json"),
      `${JSON.stringify({ name: "core-alone", private: true, type: "module" })}\n`
    )
    const pins = manifest("packages/core").dependencies ?? {}
    const install = await runChild(
      "npm",
      ["install", ...INSTALL_FLAGS, ...packed.map((result) => join(dir, result.filename)), `effect@${pins.effect}`],
      { cwd: app, timeoutMs: 75_000, hint: REGISTRY_HINT }
    )
    assert.strictEqual(install.code, 0, `npm install failed. ${REGISTRY_HINT}\n${install.stderr.slice(-3000)}`)
    writeFileSync(join(app, "turn.mjs"), TURN)
  }, 110_000)

  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("installs none of the provider SDKs: only the AI SDK's shared packages", () => {
    assert.isAbove(SDKS.length, 10, "core lists its provider SDKs as optional peer dependencies")
    const present = SDKS.filter((name) => existsSync(join(app, "node_modules", name)))
    assert.deepStrictEqual(present, [])
    // `ai` itself depends on @ai-sdk/gateway (and the interfaces every provider shares).
    assert.includeMembers(["gateway", "provider", "provider-utils"], readdirSync(join(app, "node_modules/@ai-sdk")))
  })

  it("runs a turn with the OpenAI-compatible provider, on Lathe's own Chat Completions client", async () => {
    const output = await turn("local")
    assert.isUndefined(output.error)
    assert.strictEqual(output.answer, "Hello from a local server.")
    assert.strictEqual(output.requests, 1)
  }, 40_000)

  it("ends an Anthropic turn with PackageMissing, naming the package and the command; after it, the turn works", async () => {
    const missing = await turn("anthropic")
    assert.strictEqual(missing.requests, 0, "nothing was sent")
    assert.strictEqual(missing.error?.name, "ProviderError")
    assert.deepStrictEqual(missing.error?.reason, { _tag: "PackageMissing", package: "@ai-sdk/anthropic" })
    assert.include(missing.error?.message, "npm i @ai-sdk/anthropic")

    const pin = manifest("packages/core").devDependencies?.["@ai-sdk/anthropic"]
    const add = await runChild("npm", ["install", ...INSTALL_FLAGS, `@ai-sdk/anthropic@${pin}`], {
      cwd: app,
      timeoutMs: 60_000,
      hint: REGISTRY_HINT
    })
    assert.strictEqual(
      add.code,
      0,
      `npm install @ai-sdk/anthropic failed. ${REGISTRY_HINT}\n${add.stderr.slice(-3000)}`
    )
    const works = await turn("anthropic")
    assert.isUndefined(works.error)
    assert.strictEqual(works.answer, "Hello from Claude.")
    assert.strictEqual(works.requests, 1)
  }, 100_000)
})
