import { mkdirSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe doctor`'s model lines, through the real CLI: a real HTTP server on 127.0.0.1 stands for the model server,
// and a port nobody listens on for one that is down.

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
}

let server: Server
let port = 0
const seen: Array<Seen> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers })
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({ object: "list", data: [{ id: "qwen3-coder", object: "model" }] }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** A port that was free a moment ago: connecting to it is refused. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address() as AddressInfo
      probe.close(() => resolve(address.port))
    })
  })

/** A sandbox whose user config (trusted) sets `config`. */
const withUserConfig = (config: unknown) => {
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(config))
  return box
}

const localProvider = (baseURL: string, model = "qwen3-coder") => ({
  model: `local/${model}`,
  provider: { local: { type: "openai-compatible", baseURL } }
})

describe("lathe doctor checks the model", () => {
  it("no model configured: a FAIL line, the set-up help and exit 1", async () => {
    const box = sandbox()
    const run = await runLathe(["doctor"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1, run.stdout + run.stderr)
    assert.match(run.stdout, /^FAIL {2}model {4}No model provider is configured\. \(how to set one up is below\)$/m)
    assert.include(run.stdout, "Lathe needs one model. Any of these three works:")
    assert.include(run.stdout, "LATHE_BASE_URL=http://127.0.0.1:11434/v1")
    assert.notMatch(run.stdout, /^\S+ +endpoint/m)
  })

  it("an openai-compatible model whose server answers: ok, and only a GET /models is sent", async () => {
    // A proxy serving a model the catalogue knows, so its limits are named.
    const box = withUserConfig(localProvider(`http://127.0.0.1:${port}/v1`, "gpt-4.1"))
    seen.length = 0
    const run = await runLathe(["doctor"], { cwd: box.project, env: box.env })
    assert.match(
      run.stdout,
      /^ok {4}model {4}local\/gpt-4\.1 \(GPT-4\.1, [\d,]+-token context\), no key \(none needed/m
    )
    assert.match(
      run.stdout,
      new RegExp(`^ok {4}endpoint http://127\\.0\\.0\\.1:${port}/v1 answered \\(HTTP 200 to GET /models\\)$`, "m")
    )
    assert.deepStrictEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      ["GET /v1/models"]
    )
    // Nothing else about the model fails, so the model lines do not make the exit code 1.
    assert.notMatch(run.stdout, /^FAIL {2}(model|endpoint)/m)

    // The same through LATHE_BASE_URL / LATHE_MODEL, with a key that is named and never printed.
    const env = {
      ...sandbox().env,
      LATHE_BASE_URL: `http://127.0.0.1:${port}/v1`,
      LATHE_MODEL: "my-own-model",
      LATHE_API_KEY: "sk-doctor-secret-123"
    }
    const viaEnv = await runLathe(["doctor", "--json"], { cwd: box.project, env })
    const report = JSON.parse(viaEnv.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }
    const model = report.checks.find((c) => c.name === "model")
    assert.isTrue(model?.ok)
    assert.match(model?.detail ?? "", /^env\/my-own-model, key from LATHE_API_KEY; not in Lathe's model catalogue/)
    assert.include(model?.detail ?? "", '{ "provider": { "env": { "models": { "my-own-model": { "context": 128000')
    assert.isTrue(report.checks.find((c) => c.name === "endpoint")?.ok)
    assert.notInclude(viaEnv.stdout + viaEnv.stderr, "sk-doctor-secret-123")
    // The probe does not carry the key either.
    assert.isUndefined(seen.at(-1)?.headers.authorization)
  }, 60_000)

  it("the same model pointing at a closed port: not reachable, what to do, exit 1", async () => {
    const closed = await closedPort()
    // Without Lathe: the port really refuses connections.
    const plain = await fetch(`http://127.0.0.1:${closed}/v1/models`).then(
      () => "answered",
      (error: Error) => String((error.cause as { code?: string } | undefined)?.code)
    )
    assert.strictEqual(plain, "ECONNREFUSED")
    const box = withUserConfig(localProvider(`http://127.0.0.1:${closed}/v1`))
    const run = await runLathe(["doctor"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1, run.stdout + run.stderr)
    assert.match(run.stdout, /^ok {4}model {4}local\/qwen3-coder/m)
    assert.match(
      run.stdout,
      new RegExp(
        `^FAIL {2}endpoint http://127\\.0\\.0\\.1:${closed}/v1 is not reachable \\(connection refused\\): ` +
          "start the model server, or fix provider\\.local\\.baseURL in lathe\\.json",
        "m"
      )
    )
    assert.include(run.stdout, "Something Lathe needs is missing or broken")
  }, 60_000)

  it("an anthropic model with no key: says which key, exit 1", async () => {
    const box = withUserConfig({ model: "anthropic/claude-sonnet-4-5" })
    const run = await runLathe(["doctor"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1, run.stdout + run.stderr)
    assert.match(
      run.stdout,
      /^FAIL {2}model {4}The model anthropic\/claude-sonnet-4-5 needs ANTHROPIC_API_KEY, which is not set\./m
    )
    // A provider block for anthropic without a key names both places the key can go.
    const named = withUserConfig({ model: "work/claude-sonnet-4-5", provider: { work: { type: "anthropic" } } })
    const second = await runLathe(["doctor"], { cwd: named.project, env: named.env })
    assert.strictEqual(second.code, 1)
    assert.match(
      second.stdout,
      /^FAIL {2}model {4}Provider "work" has no API key: set provider\.work\.apiKey in lathe\.json, or ANTHROPIC_API_KEY\./m
    )
  }, 60_000)
})
