import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Images a tool returns reach a model that takes images as images, and never reach one that does not.
// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64"
)

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const readPicture = async (model: string) => {
  server = await startScriptedServer([
    { steps: [{ tool: "read", input: { filePath: "pic.png" } }] },
    { steps: [{ text: "A single pixel." }] }
  ])
  const box = sandbox()
  writeFileSync(join(box.project, "pic.png"), PNG)
  const run = await runLathe(["run", "--format", "json", "--yes", "what is in pic.png?"], {
    cwd: box.project,
    env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: model }
  })
  assert.strictEqual(run.code, 0, run.stderr)
  assert.strictEqual(server.requests.length, 2)
  const body = server.requests[1]?.body as { messages?: unknown } | undefined
  return JSON.stringify(body?.messages)
}

describe("images from tools", () => {
  it("a model that takes images gets the read tool's image (after the results, for an OpenAI-compatible server)", async () => {
    const messages = await readPicture("gpt-4o")
    assert.include(messages, `data:image/png;base64,${PNG.toString("base64")}`)
    assert.include(messages, "Images returned by read:")
    // The tool result itself stays text (the server would otherwise get the image as a JSON string).
    assert.include(messages, "Image read successfully")
  })

  it("a model the catalogue does not know gets no image data, only the tool's note", async () => {
    const messages = await readPicture("some-local-model")
    assert.notInclude(messages, "data:image/png")
    assert.include(messages, "Image read successfully")
    assert.include(messages, "not shown: this model does not take images")
  })
})
