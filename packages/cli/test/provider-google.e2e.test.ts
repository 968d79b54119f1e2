import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { GEMINI_WIRE_ACCESS_TOKEN, type GeminiServer, startGeminiServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// End to end: the real CLI, the real @ai-sdk/google-vertex and google-auth-library, Gemini's SSE on 127.0.0.1.
let server: GeminiServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("Gemini on Vertex AI (end to end)", () => {
  it("finds the project and application default credentials in the environment, quietly", async () => {
    server = await startGeminiServer([{ text: "Hello from Vertex.", usage: { prompt: 1_000, candidates: 10 } }])
    const box = sandbox()
    const credentials = await server.credentialsFile(box.dir)
    // A base URL (a proxy's; here the local server) keeps the request off the network; the rest comes from env.
    const baseURL = `${server.origin}/v1beta1/projects/lathe-e2e/locations/global/publishers/google`
    const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
    mkdirSync(configDir, { recursive: true })
    writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ provider: { "google-vertex": { baseURL } } }))
    const env = {
      ...box.env,
      GOOGLE_VERTEX_PROJECT: "lathe-e2e",
      GOOGLE_APPLICATION_CREDENTIALS: credentials,
      LATHE_MODEL: "google-vertex/gemini-2.5-flash"
    }
    const run = await runLathe(["run", "say hello"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "Hello from Vertex.")
    // google-auth-library found the file through the process environment: no deprecation warnings on the terminal.
    assert.notMatch(run.stderr, /deprecated|does not validate/)
    const steps = server.requests.filter((request) => request.path !== "/token")
    assert.strictEqual(steps.length, 1)
    assert.strictEqual(
      steps[0]?.path,
      "/v1beta1/projects/lathe-e2e/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert.strictEqual(steps[0]?.headers.authorization, `Bearer ${GEMINI_WIRE_ACCESS_TOKEN}`)
  })
})
