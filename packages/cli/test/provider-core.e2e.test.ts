/**
 * Providers set up without a `provider` block, through the real CLI: a local Ollama server used by reference alone, a
 * key stored in the data directory as `lathe auth login` stores it, and the message for a provider with no key. Only
 * the model is scripted (a real HTTP server on 127.0.0.1).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { storeKey } from "@lathe/core/providers"
import { type ScriptedServer, startScriptedServer, startWireServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("lathe run: providers from descriptors", () => {
  it("ollama/<model> runs against OLLAMA_HOST with no provider block", async () => {
    server = await startScriptedServer([{ steps: [{ text: "hello from ollama" }] }])
    const box = sandbox()
    const env = { ...box.env, OLLAMA_HOST: new URL(server.url).host, LATHE_MODEL: "ollama/qwen3" }
    const run = await runLathe(["run", "hi"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "hello from ollama")
    assert.strictEqual(server.requests[0]?.path, "/v1/chat/completions")
  })

  it("a key stored in the data directory is the one sent", async () => {
    server = await startWireServer("anthropic", [{ text: "stored key works" }])
    const box = sandbox()
    storeKey("anthropic", "sk-ant-stored-e2e", box.env)
    // The address comes from the person's own config; the key from nowhere but the stored file.
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } })
    )
    const run = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "stored key works")
    assert.strictEqual(server.requests[0]?.headers["x-api-key"], "sk-ant-stored-e2e")
  })

  it("a provider type with no key names its variables and lathe auth login, exit 1", async () => {
    const box = sandbox()
    const env = { ...box.env, LATHE_MODEL: "groq/llama-3.3-70b-versatile" }
    const run = await runLathe(["run", "hi"], { cwd: box.project, env })
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "needs GROQ_API_KEY, which is not set")
    assert.include(run.stderr, "`lathe auth login groq`")
  })
})
