import { existsSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe models` and the catalogue around a run, end to end: the real CLI, a catalogue server and a scripted model
// server on 127.0.0.1, nothing else on the network.

const slow = { timeout: 60_000 }

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A models.dev-shaped catalogue server that records when each request arrived. */
const catalogueServer = async () => {
  const arrivals: Array<number> = []
  const server: Server = createServer((_req, res) => {
    arrivals.push(performance.now())
    res.writeHead(200, { "content-type": "application/json" })
    res.end(
      JSON.stringify({
        acme: {
          id: "acme",
          name: "Acme AI",
          env: ["ACME_API_KEY"],
          npm: "@ai-sdk/openai-compatible",
          models: {
            "acme-coder-9": {
              id: "acme-coder-9",
              name: "Acme Coder 9",
              tool_call: true,
              reasoning: false,
              attachment: false,
              limit: { context: 777_000, output: 55_000 },
              cost: { input: 0.7, output: 2.8 },
              modalities: { input: ["text"], output: ["text"] }
            }
          }
        }
      })
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api.json`, arrivals }
}

const ROW_KEYS = [
  "abilities",
  "context",
  "cost",
  "id",
  "input",
  "key",
  "knowledge",
  "name",
  "output",
  "provider",
  "ref",
  "release_date",
  "source"
]

describe("lathe models (end to end)", () => {
  it("--all --json prints an array of model objects of the documented shape, keys by name only", slow, async () => {
    const { project, env } = sandbox()
    const run = await runLathe(["models", "--all", "--json"], {
      cwd: project,
      env: { ...env, GEMINI_API_KEY: "gm-secret-value" }
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const rows = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    assert.isAbove(rows.length, 1_000, "the whole catalogue")
    for (const row of rows.slice(0, 50)) assert.deepStrictEqual(Object.keys(row).sort(), ROW_KEYS)
    const gemini = rows.find((row) => row.ref === "google/gemini-2.5-pro")
    assert.deepInclude(gemini, { provider: "google", id: "gemini-2.5-pro", context: 1_048_576, output: 65_536 })
    assert.deepStrictEqual(gemini?.cost, { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 })
    assert.deepInclude(gemini?.abilities as object, { reasoning: true, tool_call: true, image: true })
    // The variables come from Lathe's Google descriptor, in the order it reads them.
    assert.deepStrictEqual(gemini?.key, {
      env: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"],
      from: "GEMINI_API_KEY",
      set: true,
      source: "env"
    })
    // The provider the key set up comes first.
    assert.strictEqual(rows[0]?.provider, "google")
    assert.notInclude(run.stdout, "gm-secret-value")
  })

  it(
    "with no provider named, lists the providers with their key variables and the --all hint, not every model",
    slow,
    async () => {
      const { project, env } = sandbox()
      const run = await runLathe(["models"], { cwd: project, env })
      assert.strictEqual(run.code, 0, run.stderr)
      const lines = run.stdout.trimEnd().split("\n")
      assert.isBelow(lines.length, 200, "one line per provider, not the catalogue's thousands of models")
      assert.match(run.stdout, /^No provider is set up yet\./)
      assert.match(run.stdout, /^ {2}anthropic +Anthropic: ANTHROPIC_API_KEY \(not set\)$/m)
      assert.match(run.stdout, /^ {2}openai +OpenAI: OPENAI_API_KEY \(not set\)$/m)
      assert.match(run.stdout, /^ {2}ollama +Ollama: server http:\/\/127\.0\.0\.1:11434\/v1, key optional$/m)
      assert.include(run.stdout, "lathe auth login <provider>")
      assert.match(run.stdout, /lathe models --all lists every model of the \d+ providers in the catalogue/)
      assert.notInclude(run.stdout, "claude-sonnet-4-5", "no model rows")

      // Once a key is set, that provider comes first, with where its key comes from; still no model rows.
      const set = await runLathe(["models"], { cwd: project, env: { ...env, ANTHROPIC_API_KEY: "sk-ant-x2" } })
      assert.strictEqual(set.code, 0, set.stderr)
      assert.match(set.stdout, /^Your providers:\n {2}anthropic +Anthropic: key ANTHROPIC_API_KEY \(set\)$/m)
      assert.notInclude(set.stdout, "claude-sonnet-4-5", "no model rows")
      assert.notInclude(set.stdout, "sk-ant-x2")
    }
  )

  it("lathe models anthropic lists Claude models and where the key comes from, set or not", slow, async () => {
    const { project, env } = sandbox()
    const unset = await runLathe(["models", "anthropic"], { cwd: project, env })
    assert.strictEqual(unset.code, 0, unset.stderr)
    const lines = unset.stdout.trim().split("\n")
    assert.strictEqual(lines[0], "anthropic (Anthropic): key ANTHROPIC_API_KEY (not set)")
    assert.isTrue(
      lines.slice(1).every((line) => line.trimStart().startsWith("claude-")),
      unset.stdout
    )
    assert.match(
      unset.stdout,
      /^ {2}claude-sonnet-4-5 +Claude Sonnet 4\.5 \(latest\) {2}200K context, 64K output, \$3\/\$15 per M \(cache \$0\.3\/\$3\.75\), reasoning tools images$/m
    )

    const set = await runLathe(["models", "anthropic"], {
      cwd: project,
      env: { ...env, ANTHROPIC_API_KEY: "sk-ant-x1" }
    })
    assert.include(set.stdout, "key ANTHROPIC_API_KEY (set)")
    assert.notInclude(set.stdout, "sk-ant-x1")

    const unknown = await runLathe(["models", "anthropc"], { cwd: project, env })
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, 'no provider "anthropc"')
  })

  it("--refresh downloads the catalogue into the data directory and lists from it", slow, async () => {
    const { project, env } = sandbox()
    const catalogue = await catalogueServer()
    const run = await runLathe(["models", "acme", "--refresh", "--json"], {
      cwd: project,
      env: { ...env, LATHE_MODELS_URL: catalogue.url }
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(catalogue.arrivals.length, 1)
    assert.isTrue(existsSync(join(env.LATHE_DATA_DIR as string, "models.dat")))
    const rows = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    assert.deepStrictEqual(
      rows.map((row) => [row.ref, row.context, row.key]),
      [["acme/acme-coder-9", 777_000, { env: ["ACME_API_KEY"], from: "ACME_API_KEY", set: false, source: "none" }]]
    )
  })

  it(
    "a run refreshes the catalogue only after its first model request, and names an unknown model's limits once",
    slow,
    async () => {
      const { project, env } = sandbox()
      const catalogue = await catalogueServer()
      const model: ScriptedServer = await startScriptedServer([
        { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
        { steps: [{ text: "Done." }] }
      ])
      closers.push(() => model.close())
      writeFileSync(join(project, "a.txt"), "alpha\n")
      const run = await runLathe(["run", "read a.txt"], {
        cwd: project,
        env: { ...env, LATHE_BASE_URL: model.url, LATHE_MODEL: "my-finetune-v3", LATHE_MODELS_URL: catalogue.url }
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const notices = run.stderr.split("\n").filter((line) => line.includes("not in Lathe's model catalogue"))
      assert.lengthOf(notices, 1, run.stderr)
      assert.include(notices[0], 'The model "my-finetune-v3" (LATHE_MODEL)')
      assert.include(notices[0], '"provider": { "env": { "models": { "my-finetune-v3": { "context"')
      assert.include(notices[0], "32,768-token context, 4,096 output tokens")
      assert.strictEqual(model.requests.length, 2)
      assert.strictEqual(catalogue.arrivals.length, 1, "one refresh, in the background")
      // The first model request was answered before the catalogue was asked for anything.
      const first = model.requests[0]?.receivedAt ?? Number.POSITIVE_INFINITY
      assert.isAbove(catalogue.arrivals[0] ?? 0, first, "never before the first request")
    }
  )
})
