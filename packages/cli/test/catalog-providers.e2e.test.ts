import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Providers of the models.dev catalogue that Lathe ships no descriptor for, through the real CLI: one whose package
// Lathe drives (zhipuai, OpenAI-compatible) runs a turn against a local server speaking its wire format with the key
// from its catalogue variable; one whose package Lathe cannot drive (cohere) is refused in words; `lathe models`
// lists providers, not models, with each one's variables.

const slow = { timeout: 60_000 }
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A sandbox whose own config (it applies everywhere, no trust needed) holds `config`. */
const withConfig = (config: unknown) => {
  const box = sandbox()
  mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
  writeFileSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"), JSON.stringify(config))
  return box
}

describe("a catalogue provider with no descriptor of its own", () => {
  it(
    "zhipuai: provider.zhipuai with only a baseURL, ZHIPU_API_KEY, -m zhipuai/glm-4.6: a turn with a tool",
    slow,
    async () => {
      server = await startScriptedServer([
        { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
        { steps: [{ text: "The file says alpha." }] }
      ])
      // The catalogue's api (open.bigmodel.cn) is overridden by config baseURL: the local server.
      const box = withConfig({ provider: { zhipuai: { baseURL: server.url } } })
      writeFileSync(join(box.project, "a.txt"), "alpha\n")
      const run = await runLathe(["run", "-m", "zhipuai/glm-4.6", "--yes", "what does a.txt say?"], {
        cwd: box.project,
        env: { ...box.env, ZHIPU_API_KEY: "zk-catalogue-key-0123" }
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "The file says alpha.")
      assert.strictEqual(server.requests.length, 2)
      for (const request of server.requests) {
        assert.strictEqual(request.path, "/v1/chat/completions")
        assert.strictEqual(request.headers.authorization, "Bearer zk-catalogue-key-0123")
        assert.strictEqual((request.body as { model?: string }).model, "glm-4.6")
      }
      // The tool result went back in the second request, OpenAI chat style.
      assert.include(
        JSON.stringify((server.requests[1]?.body as { messages?: unknown } | undefined)?.messages),
        "alpha"
      )
      assert.notInclude(run.stdout + run.stderr, "zk-catalogue-key-0123")
    }
  )

  it("without its key, the run says which variable to set", slow, async () => {
    const box = sandbox()
    const run = await runLathe(["run", "-m", "zhipuai/glm-4.6", "hi"], { cwd: box.project, env: box.env })
    assert.notStrictEqual(run.code, 0)
    assert.include(run.stderr, "The model zhipuai/glm-4.6 needs ZHIPU_API_KEY, which is not set.")
    assert.notInclude(run.stderr, "Unknown provider")
  })

  it(
    "a provider whose package Lathe cannot drive (cohere) is refused plainly, key or config notwithstanding",
    slow,
    async () => {
      const box = withConfig({ provider: { cohere: {} } })
      const run = await runLathe(["run", "-m", "cohere/command-a-03-2025", "hi"], {
        cwd: box.project,
        env: { ...box.env, COHERE_API_KEY: "co-key" }
      })
      assert.notStrictEqual(run.code, 0)
      assert.include(run.stderr, "Lathe cannot drive Cohere (cohere)")
      assert.include(run.stderr, "@ai-sdk/cohere, which Lathe does not include")
      assert.include(run.stderr, '"type": "openai-compatible"')
      assert.notInclude(run.stderr, "co-key")

      const models = await runLathe(["models", "cohere"], { cwd: box.project, env: box.env })
      assert.strictEqual(models.code, 0, models.stderr)
      assert.match(models.stdout, /^cohere \(Cohere\): Lathe cannot drive Cohere/)
    }
  )
})

describe("lathe models with no provider lists providers, not models", () => {
  it("shipped and catalogue providers with their key variables, set or not, and how to sign in", slow, async () => {
    const box = sandbox()
    const run = await runLathe(["models"], { cwd: box.project, env: { ...box.env, ZHIPU_API_KEY: "zk-1" } })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /^ {2}anthropic +Anthropic: ANTHROPIC_API_KEY \(not set\)$/m)
    assert.match(run.stdout, /^ {2}zhipuai +Zhipu AI: ZHIPU_API_KEY \(set\)$/m)
    assert.match(run.stdout, /^ {2}moonshotai +Moonshot AI: MOONSHOT_API_KEY \(not set\)$/m)
    assert.match(run.stdout, /^ {2}cohere +Cohere: cannot be used: Lathe does not include @ai-sdk\/cohere/m)
    assert.match(run.stdout, /The other providers of the models\.dev catalogue \(\d+ of \d+ usable/)
    assert.include(run.stdout, "lathe auth login <provider>")
    assert.notInclude(run.stdout, "glm-4.6", "no model rows")
    assert.notInclude(run.stdout, "zk-1")

    const one = await runLathe(["models", "zhipuai"], { cwd: box.project, env: { ...box.env, ZHIPU_API_KEY: "zk-1" } })
    assert.strictEqual(one.code, 0, one.stderr)
    assert.match(one.stdout, /^zhipuai \(Zhipu AI\): key ZHIPU_API_KEY \(set\)$/m)
    assert.match(one.stdout, /^ {2}glm-4\.6 /m)
  })
})
