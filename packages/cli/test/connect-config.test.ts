/**
 * `/connect`'s config writer against real files: it merges one provider and the model into the person's own config
 * (keeping comments and other settings), stores a variable name as `{env:NAME}`, makes a file holding a literal key
 * mode 0600, refuses a broken file without touching it, and what it writes loads through the real config loader.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { catalogReady, loadConfig, type PathsShape } from "@lathe/core"
import { PROVIDER_TYPES } from "@lathe/core/providers"
import { Effect } from "effect"
import { parse } from "jsonc-parser"
import { assert, describe, it } from "vitest"
import { keySetting, writeProviderSetup } from "../src/connect-config.js"
import { answerConnect, connectKey, startConnect } from "../src/tui/connect.js"

const home = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-connect-"))
  const project = join(dir, "project")
  mkdirSync(project)
  const paths: PathsShape = {
    directory: project,
    root: project,
    projectID: "p",
    data: join(dir, "data"),
    config: join(dir, "config", "lathe"),
    home: dir
  }
  return { dir, paths, file: join(paths.config, "lathe.json") }
}

const mode = (file: string) => statSync(file).mode & 0o777

describe("writeProviderSetup", () => {
  it("creates the person's config with an openai-compatible provider that the loader resolves", async () => {
    const { paths, file } = home()
    const written = writeProviderSetup(file, {
      id: "local",
      type: "openai-compatible",
      model: "qwen3-coder",
      baseURL: "http://127.0.0.1:11434/v1"
    })
    assert.deepStrictEqual(written, { file, literalKey: false })
    assert.deepStrictEqual(parse(readFileSync(file, "utf8")), {
      model: "local/qwen3-coder",
      provider: {
        local: { type: "openai-compatible", baseURL: "http://127.0.0.1:11434/v1", models: { "qwen3-coder": {} } }
      }
    })
    assert.notStrictEqual(mode(file), 0o600, "no key in it: the usual mode")
    const config = await Effect.runPromise(loadConfig(paths, {}))
    assert.strictEqual(config.info.model, "local/qwen3-coder")
    assert.strictEqual(config.info.provider?.local?.baseURL, "http://127.0.0.1:11434/v1")
  })

  it("merges into an existing JSONC file: comments, other settings and the provider's other keys stay", () => {
    const { file, paths } = home()
    mkdirSync(paths.config, { recursive: true })
    const before = `{
  // my own rules
  "permission": { "bash": "ask" },
  "model": "old/one",
  "provider": {
    "anthropic": { "headers": { "x-team": "core" } }, // keep this header
  },
}
`
    writeFileSync(file, before)
    const written = writeProviderSetup(file, {
      id: "anthropic",
      type: "anthropic",
      model: "claude-sonnet-4-5",
      key: { env: "MY_ANTHROPIC_KEY" }
    })
    assert.deepStrictEqual(written, { file, literalKey: false })
    const text = readFileSync(file, "utf8")
    assert.include(text, "// my own rules")
    assert.include(text, "// keep this header")
    assert.deepStrictEqual(parse(text, [], { allowTrailingComma: true }), {
      permission: { bash: "ask" },
      model: "anthropic/claude-sonnet-4-5",
      provider: {
        anthropic: { headers: { "x-team": "core" }, type: "anthropic", apiKey: "{env:MY_ANTHROPIC_KEY}" }
      }
    })
  })

  it("a literal key makes the file readable by its owner only (0600); the loader reads the key", async () => {
    const { file, paths } = home()
    mkdirSync(paths.config, { recursive: true })
    writeFileSync(file, "{}\n", { mode: 0o644 })
    const written = writeProviderSetup(file, {
      id: "openai",
      type: "openai",
      model: "gpt-5",
      key: { value: "sk-test-123" }
    })
    assert.deepStrictEqual(written, { file, literalKey: true })
    assert.strictEqual(mode(file), 0o600)
    const config = await Effect.runPromise(loadConfig(paths, {}))
    assert.strictEqual(config.info.provider?.openai?.apiKey, "sk-test-123")
  })

  it("a {env:NAME} key is read from the environment when the config loads", async () => {
    const { file, paths } = home()
    writeProviderSetup(file, {
      id: "local",
      type: "openai-compatible",
      model: "m",
      baseURL: "http://127.0.0.1:1/v1",
      key: { env: "LOCAL_TOKEN" }
    })
    const config = await Effect.runPromise(loadConfig(paths, { LOCAL_TOKEN: "tok" }))
    assert.strictEqual(config.info.provider?.local?.apiKey, "tok")
  })

  it("refuses a broken file without changing it, and an invalid URL without writing", () => {
    const { file, paths } = home()
    mkdirSync(paths.config, { recursive: true })
    writeFileSync(file, '{ "model": ')
    const broken = writeProviderSetup(file, { id: "openai", type: "openai", model: "gpt-5" })
    assert.isString(broken)
    assert.match(String(broken), /lathe\.json:1: .*Fix the file/)
    assert.strictEqual(readFileSync(file, "utf8"), '{ "model": ')
    const other = home()
    const bad = writeProviderSetup(other.file, {
      id: "local",
      type: "openai-compatible",
      model: "m",
      baseURL: "not a url"
    })
    assert.match(String(bad), /baseURL/)
    assert.throws(() => statSync(other.file))
  })

  it("reads a key answer: a variable name is a reference, anything else the key, empty is none", () => {
    assert.deepStrictEqual(keySetting("ANTHROPIC_API_KEY"), { env: "ANTHROPIC_API_KEY" })
    assert.deepStrictEqual(keySetting(" sk-ant-abc "), { value: "sk-ant-abc" })
    assert.strictEqual(keySetting("  "), undefined)
  })
})

describe("/connect's questions", () => {
  it("openai-compatible: provider, URL (checked), model, no key", () => {
    let flow = startConnect()
    assert.deepStrictEqual(flow.step.kind === "choose" ? flow.step.items.map((i) => i.value) : [], [...PROVIDER_TYPES])
    const typed = (text: string) => {
      for (const ch of text) {
        const next = connectKey(flow, ch, {})
        if (next && "flow" in next) flow = next.flow
      }
    }
    const enter = () => connectKey(flow, "", { return: true })
    typed("compat")
    let next = enter()
    assert.ok(next && "flow" in next)
    flow = next.flow
    assert.strictEqual(flow.field, "url")
    typed("nope")
    next = enter()
    assert.ok(next && "flow" in next)
    flow = next.flow
    assert.strictEqual(flow.field, "url")
    assert.match(flow.step.kind === "input" ? (flow.step.problem ?? "") : "", /not an http\(s\) URL/)
    typed("http://127.0.0.1:9/v1")
    next = enter()
    assert.ok(next && "flow" in next)
    flow = next.flow
    typed("my-model")
    next = enter()
    assert.ok(next && "flow" in next)
    flow = next.flow
    assert.strictEqual(flow.field, "key")
    assert.deepStrictEqual(enter(), {
      done: { id: "local", type: "openai-compatible", model: "my-model", baseURL: "http://127.0.0.1:9/v1" }
    })
  })

  it("anthropic: the key defaults to ANTHROPIC_API_KEY as a reference, the model comes from the catalogue", () => {
    const first = answerConnect(startConnect(), "anthropic")
    assert.ok("flow" in first)
    const key = answerConnect(first.flow, "ANTHROPIC_API_KEY")
    assert.ok("flow" in key && key.flow.step.kind === "choose")
    const models = key.flow.step.kind === "choose" ? key.flow.step.items.map((i) => i.value) : []
    assert.strictEqual(models[0], "claude-sonnet-4-5")
    assert.isTrue(models.every((m) => m.startsWith("claude")))
    assert.deepStrictEqual(answerConnect(key.flow, "claude-haiku-4-5"), {
      done: { id: "anthropic", type: "anthropic", model: "claude-haiku-4-5", key: { env: "ANTHROPIC_API_KEY" } }
    })
    assert.deepStrictEqual(connectKey(key.flow, "", { escape: true }), { cancel: true })
  })

  it("a typed key can be stored with lathe auth instead of written into the config", async () => {
    await catalogReady()
    const first = answerConnect(startConnect(), "anthropic")
    assert.ok("flow" in first)
    const typed = answerConnect(first.flow, "sk-ant-typed-0123456789")
    assert.ok("flow" in typed && typed.flow.field === "keep" && typed.flow.step.kind === "choose")
    const places = typed.flow.step.kind === "choose" ? typed.flow.step.items.map((i) => i.value) : []
    assert.deepStrictEqual(places, ["auth", "config"])
    const model = answerConnect(typed.flow, "auth")
    assert.ok("flow" in model && model.flow.field === "model")
    const done = answerConnect(model.flow, "claude-sonnet-4-5")
    assert.deepStrictEqual(done, {
      done: {
        id: "anthropic",
        type: "anthropic",
        model: "claude-sonnet-4-5",
        key: { store: "sk-ant-typed-0123456789" }
      }
    })
    // Written: the key goes to auth.json (0600), the config names the provider and model, with no apiKey left.
    const { file, paths, dir } = home()
    mkdirSync(paths.config, { recursive: true })
    writeFileSync(file, JSON.stringify({ provider: { anthropic: { apiKey: "old-literal-key" } } }))
    const env = { LATHE_DATA_DIR: join(dir, "data") }
    const written = "done" in done ? writeProviderSetup(file, done.done, env) : ""
    const auth = join(dir, "data", "auth.json")
    assert.deepStrictEqual(written, { file, literalKey: false, storedIn: auth })
    assert.deepStrictEqual(JSON.parse(readFileSync(auth, "utf8")), {
      anthropic: { type: "api", key: "sk-ant-typed-0123456789" }
    })
    assert.strictEqual(mode(auth), 0o600)
    const text = readFileSync(file, "utf8")
    assert.notInclude(text, "sk-ant-typed")
    assert.deepStrictEqual(parse(text), {
      provider: { anthropic: { type: "anthropic" } },
      model: "anthropic/claude-sonnet-4-5"
    })
  })

  it("asks each provider type what it needs: its own key variable, nothing for ambient ones, a URL for local ones", () => {
    const google = answerConnect(startConnect(), "google")
    assert.ok("flow" in google && google.flow.field === "key" && google.flow.step.kind === "input")
    assert.match(google.flow.step.kind === "input" ? google.flow.step.fallback : "", /^(GOOGLE|GEMINI)_/)
    const bedrock = answerConnect(startConnect(), "amazon-bedrock")
    assert.ok("flow" in bedrock && bedrock.flow.field === "model")
    const ollama = answerConnect(startConnect(), "ollama")
    assert.ok("flow" in ollama && ollama.flow.field === "url" && ollama.flow.step.kind === "input")
    assert.include(ollama.flow.step.kind === "input" ? ollama.flow.step.fallback : "", "11434")
    const url = answerConnect(ollama.flow, "http://127.0.0.1:11434/v1")
    assert.ok("flow" in url && url.flow.field === "model")
    const refused = answerConnect(url.flow, " ")
    assert.ok("flow" in refused && refused.flow.field === "model")
    assert.deepStrictEqual(answerConnect(url.flow, "qwen3:8b"), {
      done: { id: "ollama", type: "ollama", model: "qwen3:8b", baseURL: "http://127.0.0.1:11434/v1" }
    })
  })
})
