/**
 * The models a person has, in-process: `/models`' list (`availableModels`) over every provider type, with local
 * servers asked within a budget, and `lathe models` reading key sources from the descriptors and asking a running
 * Ollama (a real HTTP server on 127.0.0.1 imitating it) for its models.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { PassThrough } from "node:stream"
import { type ConfigInfo, catalogReady } from "@lathe/core"
import { storeKey } from "@lathe/core/providers"
import { type ScriptedServer, startLocalWireServer } from "@lathe/core/testing"
import { afterEach, assert, beforeAll, describe, it } from "vitest"
import { modelsCommand } from "../src/commands/models.js"
import type { CliIO } from "../src/io.js"
import { availableModels, availableModelsWithLocal } from "../src/tui/models.js"
import { sandbox } from "./helpers.js"

const NO_CONFIG = { permission: [], agent: {}, plugin: [], instructions: [] } as ConfigInfo

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})
beforeAll(catalogReady)

const ollamaServer = async (): Promise<ScriptedServer> => {
  const server = await startLocalWireServer({
    kind: "ollama",
    models: [{ id: "qwen3:8b", parameterSize: "8.2B", quantization: "Q4_K_M" }, { id: "my-finetune:latest" }]
  })
  closers.push(() => server.close())
  return server
}

/** A server that takes requests and never answers them. */
const silentServer = async (): Promise<string> => {
  const server = createServer(() => {})
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

describe("availableModels (/models)", () => {
  it("offers the catalogue of every provider the person has: by variable, by stored key, or configured", () => {
    const info = { ...NO_CONFIG, model: "anthropic/claude-sonnet-4-5", provider: { anthropic: {} } }
    const env = { GEMINI_API_KEY: "gm-1" }
    const models = availableModels(info, env, [], { mistral: "stored-key" })
    assert.strictEqual(models[0], "anthropic/claude-sonnet-4-5")
    assert.include(models, "google/gemini-2.5-pro")
    assert.isTrue(models.some((m) => m.startsWith("mistral/")))
    assert.isFalse(models.some((m) => m.startsWith("openai/")))
    // Configured providers come before detected ones.
    const firstGoogle = models.findIndex((m) => m.startsWith("google/"))
    assert.isBelow(
      models.findLastIndex((m) => m.startsWith("anthropic/")),
      firstGoogle
    )
  })

  it("with nothing set up it offers only the configured and agent models", () => {
    const agents = [{ name: "plan", model: "openai/gpt-5" }] as unknown as Parameters<typeof availableModels>[2]
    assert.deepStrictEqual(availableModels({ ...NO_CONFIG, model: "local/x" }, {}, agents, {}), [
      "local/x",
      "openai/gpt-5"
    ])
  })

  it("adds what a configured local server has, and opens without a server that does not answer", async () => {
    const server = await ollamaServer()
    const info = { ...NO_CONFIG, provider: { ollama: { baseURL: server.url } } }
    const env = sandbox().env
    const models = await availableModelsWithLocal(info, env, [])
    assert.include(models, "ollama/qwen3:8b")
    assert.include(models, "ollama/my-finetune:latest")
    assert.isTrue(server.requests.some((request) => request.path === "/api/tags"))

    const silent = await silentServer()
    const slow = await availableModelsWithLocal(
      { ...NO_CONFIG, provider: { ollama: { baseURL: silent } } },
      env,
      [],
      200
    )
    assert.isFalse(slow.some((m) => m.startsWith("ollama/")))
  })
})

/** Runs `lathe models …` in this process. */
const models = async (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string) => {
  let stdout = ""
  let stderr = ""
  const io: CliIO = {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    env,
    cwd,
    isTTY: false,
    stdin: new PassThrough()
  }
  const code = await modelsCommand(args, io)
  return { code, stdout, stderr }
}

describe("lathe models", () => {
  it("asks a running Ollama for its models, and says so when it cannot", async () => {
    const server = await ollamaServer()
    const { env, project } = sandbox()
    const run = await models(["ollama", "--json"], { ...env, OLLAMA_HOST: server.url.replace(/\/v1$/, "") }, project)
    assert.strictEqual(run.code, 0, run.stderr)
    const rows = JSON.parse(run.stdout) as Array<{ ref: string; source: string; name: string }>
    assert.deepInclude(
      rows.map((r) => [r.ref, r.source]),
      ["ollama/qwen3:8b", "server"]
    )
    assert.include(rows.find((r) => r.ref === "ollama/qwen3:8b")?.name, "8.2B")

    const down = await models(["ollama"], { ...env, OLLAMA_HOST: "127.0.0.1:9" }, project)
    assert.strictEqual(down.code, 1)
    assert.include(down.stderr, "Ollama did not list its models")
    assert.include(down.stderr, "ollama serve")
  })

  it("lists the providers the person has (a stored key shows as lathe auth), --all every one", async () => {
    const { env, project } = sandbox()
    storeKey("mistral", "stored-mistral-key-123", env)
    const yours = await models(["--json"], env, project)
    assert.strictEqual(yours.code, 0, yours.stderr)
    const rows = JSON.parse(yours.stdout) as Array<{ provider: string; key: Record<string, unknown> }>
    assert.deepStrictEqual([...new Set(rows.map((r) => r.provider))], ["mistral"])
    assert.deepInclude(rows[0]?.key, { from: "lathe auth", set: true, source: "auth" })
    assert.notInclude(yours.stdout, "stored-mistral-key-123")

    // Without --json, providers rather than models: yours first, with where the key comes from.
    const text = await models([], env, project)
    assert.match(text.stdout, /^Your providers:\n {2}mistral +Mistral: key stored by lathe auth$/m)
    assert.match(text.stdout, /lathe models --all lists every model of the \d+ providers in the catalogue/)

    const all = await models(["--all", "--json"], env, project)
    const providers = [...new Set((JSON.parse(all.stdout) as Array<{ provider: string }>).map((r) => r.provider))]
    assert.strictEqual(providers[0], "mistral")
    for (const id of ["anthropic", "openai", "google", "amazon-bedrock"]) assert.include(providers, id)
  })
})
