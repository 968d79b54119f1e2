import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { permissionRules } from "@lathe/plugin/host"
import { Effect, Layer } from "effect"
import { Config, type ConfigEnv, ConfigError } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { PROVIDER_TYPES } from "../src/provider/registry.js"

/** A temp world: `project/` (the root), `global/` (Paths.config), `data/` (Paths.data), files relative to it. */
const world = (files: Record<string, string> = {}) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-config-")))
  for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true })
    writeFileSync(join(base, path), text)
  }
  const root = join(base, "project")
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const load = (env: ConfigEnv = {}) =>
    Effect.gen(function* () {
      return yield* Config
    }).pipe(Effect.provide(Config.layerWith(env).pipe(Layer.provide(paths))))
  return { base, root, file: (path: string) => join(base, path), load }
}

describe("Config merge order", () => {
  it.effect("global < project < LATHE_CONFIG < env, deep-merged; permission rules concatenate in order", () => {
    const w = world({
      "global/lathe.json": JSON.stringify({
        model: "anthropic/global",
        provider: { env: { type: "openai-compatible", name: "Global name", baseURL: "http://global.test/v1" } },
        permission: { bash: "ask" },
        agent: { build: { prompt: "global prompt", permission: { edit: "ask" } } },
        plugin: ["shared", ["configured", { a: 1 }]],
        instructions: ["RULES.md"]
      }),
      "project/lathe.json": JSON.stringify({
        model: "anthropic/project",
        provider: { env: { baseURL: "http://project.test/v1", models: { m: { context: 1000 } } } },
        permission: { edit: "deny" },
        agent: { build: { permission: { edit: "allow" } } },
        plugin: ["shared", ["configured", { a: 2 }], "project-plugin"],
        instructions: ["RULES.md", "docs/*.md"]
      }),
      "explicit.json": JSON.stringify({
        model: "anthropic/explicit",
        provider: { env: { baseURL: "http://explicit.test/v1" } },
        permission: { bash: { "git *": "allow" } }
      })
    })
    writeFileSync(w.file("data/trust.json"), JSON.stringify({ trusted: [w.root] }))
    return Effect.gen(function* () {
      const explicitOnly = yield* w.load({ LATHE_CONFIG: w.file("explicit.json") })
      assert.strictEqual(explicitOnly.info.model, "anthropic/explicit")
      assert.strictEqual(explicitOnly.info.provider?.env?.baseURL, "http://explicit.test/v1")

      const config = yield* w.load({
        LATHE_CONFIG: w.file("explicit.json"),
        LATHE_MODEL: "qwen3-coder",
        LATHE_BASE_URL: "http://127.0.0.1:8080/v1",
        LATHE_API_KEY: "k"
      })
      assert.strictEqual(config.info.model, "env/qwen3-coder")
      assert.deepStrictEqual(config.info.provider?.env, {
        type: "openai-compatible",
        name: "Global name",
        baseURL: "http://127.0.0.1:8080/v1",
        apiKey: "k",
        models: { m: { context: 1000 } }
      })
      assert.deepStrictEqual(config.info.permission, [
        { permission: "bash", pattern: "*", action: "ask", source: w.file("global/lathe.json") },
        { permission: "edit", pattern: "*", action: "deny", source: w.file("project/lathe.json") },
        { permission: "bash", pattern: "git *", action: "allow", source: w.file("explicit.json") }
      ])
      assert.deepStrictEqual(config.info.agent.build, {
        prompt: "global prompt",
        permission: [
          { permission: "edit", pattern: "*", action: "ask", source: w.file("global/lathe.json") },
          { permission: "edit", pattern: "*", action: "allow", source: w.file("project/lathe.json") }
        ]
      })
      assert.deepStrictEqual(config.info.plugin, ["shared", ["configured", { a: 2 }], "project-plugin"])
      assert.deepStrictEqual(config.info.instructions, ["RULES.md", "docs/*.md"])
      assert.deepStrictEqual(config.sources, [
        { file: w.file("global/lathe.json"), scope: "global", trusted: true },
        { file: w.file("project/lathe.json"), scope: "project", trusted: true },
        { file: w.file("explicit.json"), scope: "explicit", trusted: true },
        { file: "env", scope: "env", trusted: true }
      ])
      assert.deepStrictEqual(config.notices, [])
      assert.isTrue(config.trusted)

      // LATHE_MODEL alone overrides the model; an "env/" prefix is not doubled
      assert.strictEqual((yield* w.load({ LATHE_MODEL: "openai/gpt-5" })).info.model, "openai/gpt-5")
      const prefixed = yield* w.load({ LATHE_MODEL: "env/m", LATHE_BASE_URL: "https://x.test/v1" })
      assert.strictEqual(prefixed.info.model, "env/m")
    })
  })

  it.effect("reads lathe.json then lathe.jsonc then .lathe/ in each dir from the root down to the directory", () => {
    const w = world({
      "project/lathe.jsonc": `{ "model": "a/root-jsonc", "default_agent": "root" }`,
      "project/lathe.json": `{ "model": "a/root-json", "small_model": "a/small" }`,
      "project/sub/.lathe/lathe.json": `{ "model": "a/sub" }`
    })
    writeFileSync(w.file("data/trust.json"), JSON.stringify({ trusted: [w.root] }))
    const layer = Config.layerWith({}).pipe(
      Layer.provide(
        Paths.layerTest(w.root, { directory: join(w.root, "sub"), config: w.file("global"), data: w.file("data") })
      )
    )
    return Effect.gen(function* () {
      const config = yield* Config
      assert.deepStrictEqual(
        config.sources.map((s) => s.file),
        [w.file("project/lathe.json"), w.file("project/lathe.jsonc"), w.file("project/sub/.lathe/lathe.json")]
      )
      assert.strictEqual(config.info.model, "a/sub")
      assert.strictEqual(config.info.small_model, "a/small")
      assert.strictEqual(config.info.default_agent, "root")
    }).pipe(Effect.provide(layer))
  })

  it.effect("accepts JSONC: comments and trailing commas", () => {
    const w = world({
      "global/lathe.jsonc": `{
  // the model
  "model": "anthropic/claude-sonnet-4-5", /* block */
  "instructions": ["a.md", "b.md",],
}`
    })
    return Effect.gen(function* () {
      const config = yield* w.load()
      assert.strictEqual(config.info.model, "anthropic/claude-sonnet-4-5")
      assert.deepStrictEqual(config.info.instructions, ["a.md", "b.md"])
    })
  })
})

describe("Config errors", () => {
  const failure = (files: Record<string, string>, env: ConfigEnv = {}) => {
    const w = world(files)
    return w.load(env).pipe(
      Effect.flip,
      Effect.map((error) => ({ error, file: w.file }))
    )
  }

  it.effect("a syntax error names file, line and column", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({ "global/lathe.json": `{\n  "model": "a/b"\n  "small_model": "a/c"\n}` })
      assert.instanceOf(error, ConfigError)
      assert.strictEqual(error.reason, "InvalidJson")
      assert.strictEqual(error.file, file("global/lathe.json"))
      assert.strictEqual(
        error.message,
        `${file("global/lathe.json")}:3:3: invalid JSON: comma expected (fix the syntax, comments and trailing commas are allowed)`
      )
    })
  )

  it.effect("wrong types: every problem, in file order, with expected and received", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({
        "global/lathe.json": `{
  "model": 42,
  "tool_output": { "max_lines": -1 },
  "permission": { "bash": "yes", "read": { "*.env": 3 } },
  "agent": { "build": { "mode": "main" } }
}`
      })
      const f = file("global/lathe.json")
      assert.strictEqual(error.reason, "InvalidSchema")
      assert.strictEqual(
        error.message,
        [
          `${f}:2:12: model: expected a string like "provider/model", got number 42 (for example "anthropic/claude-sonnet-4-5")`,
          `${f}:3:33: tool_output.max_lines: expected a positive integer, got number -1`,
          `${f}:4:27: permission.bash: expected "allow", "deny" or "ask", or an object of pattern: action, got string "yes"`,
          `${f}:4:53: permission.read["*.env"]: expected "allow", "deny" or "ask", got number 3`,
          `${f}:5:33: agent.build.mode: expected "primary", "subagent" or "all", got string "main"`
        ].join("\n")
      )
    })
  )

  // Every provider type, as the schema lists them, and the hint for a wrong or missing type.
  const typesText = `one of ${PROVIDER_TYPES.map((type) => JSON.stringify(type)).join(", ")}`
  const typeHint =
    'use "openai-compatible" for vLLM, llama.cpp and other OpenAI-style servers; leave "type" out when the provider ' +
    'id is a type ("ollama", "google", …); lathe models lists every provider'

  it.effect("an unknown provider type lists the types", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({
        "global/lathe.json": `{
  "provider": {
    "local": { "type": "llamafile", "baseURL": "http://localhost:11434/v1" }
  }
}`
      })
      assert.strictEqual(
        error.message,
        `${file("global/lathe.json")}:3:24: provider.local.type: expected ${typesText}, got string "llamafile" (${typeHint})`
      )
    })
  )

  it.effect("a provider without type is an error unless its id is a type; a later file may add to it", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({
        "global/lathe.json": `{\n  "provider": {\n    "local": { "baseURL": "http://localhost:1234/v1" }\n  }\n}`
      })
      assert.strictEqual(
        error.message,
        `${file("global/lathe.json")}:3:5: provider.local.type: expected ${typesText}, got nothing (${typeHint})`
      )
      const w = world({
        "global/lathe.json": JSON.stringify({ provider: { local: { type: "openai-compatible" }, anthropic: {} } }),
        "project/lathe.json": JSON.stringify({ provider: { local: { models: { m: { output: 10 } } } } })
      })
      writeFileSync(w.file("data/trust.json"), JSON.stringify({ trusted: [w.root] }))
      const config = yield* w.load()
      assert.deepStrictEqual(config.info.provider, {
        local: { type: "openai-compatible", models: { m: { output: 10 } } },
        anthropic: { type: "anthropic" }
      })
    })
  )

  it.effect("an unknown top-level key is named, with the valid keys", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({ "global/lathe.json": `{\n  "model": "a/b",\n  "modle": "a/c"\n}` })
      assert.strictEqual(
        error.message,
        `${file("global/lathe.json")}:3:3: modle: expected one of the keys "$schema", "model", "small_model", "default_agent", "provider", "permission", "agent", "plugin", "mcp", "mcp_tool_search", "mcp_startup_wait", "disabled_plugins", "plugin_timeout_ms", "hooks", "instructions", "max_steps", "budget", "tool_output", "doom_loop", "retry", "compaction", "summary", "snapshot", "webfetch", "websearch", "lsp", "sandbox", "store", "models", "shell", got unknown key "modle" (did you mean "model"?)`
      )
    })
  )

  it.effect("LATHE_BASE_URL without LATHE_MODEL, or not a URL", () =>
    Effect.gen(function* () {
      const missing = yield* failure({}, { LATHE_BASE_URL: "http://localhost:11434/v1" })
      assert.strictEqual(missing.error.reason, "InvalidEnv")
      assert.strictEqual(
        missing.error.message,
        "LATHE_BASE_URL is set but LATHE_MODEL is not: set LATHE_MODEL to the id of a model the server at http://localhost:11434/v1 serves (for example LATHE_MODEL=qwen3-coder)."
      )
      const bad = yield* failure({}, { LATHE_BASE_URL: "localhost:11434", LATHE_MODEL: "m" })
      assert.strictEqual(
        bad.error.message,
        'LATHE_BASE_URL is not an http(s) URL: "localhost:11434" (for example LATHE_BASE_URL=http://localhost:11434/v1).'
      )
    })
  )

  it.effect("a missing $LATHE_CONFIG file names the variable (a relative one is taken from home)", () =>
    Effect.gen(function* () {
      const { error, file } = yield* failure({}, { LATHE_CONFIG: "nope.json" })
      assert.strictEqual(error.reason, "MissingFile")
      assert.strictEqual(
        error.message,
        `LATHE_CONFIG is set to nope.json, but ${file("nope.json")} does not exist ` +
          "(a relative LATHE_CONFIG is taken from your home directory, never from the working directory)."
      )
    })
  )
})

describe("Config substitution", () => {
  it.effect("{env:} and {file:} in string values", () => {
    const w = world({
      "global/lathe.json": JSON.stringify({
        provider: { anthropic: { apiKey: "{env:MY_KEY}", headers: { "x-team": "team-{file:team.txt}" } } },
        agent: { build: { prompt: "{file:~/prompt.md}", description: "[{env:UNSET}]" } }
      }),
      "global/team.txt": "  blue\n",
      "prompt.md": "Be brief.\n"
    })
    return Effect.gen(function* () {
      const config = yield* w.load({ MY_KEY: "sk-1" })
      assert.deepStrictEqual(config.info.provider?.anthropic, {
        type: "anthropic",
        apiKey: "sk-1",
        headers: { "x-team": "team-blue" }
      })
      assert.strictEqual(config.info.agent.build?.prompt, "Be brief.")
      assert.strictEqual(config.info.agent.build?.description, "[]")
    })
  })

  it.effect("a missing {file:} names the config file, the place and the path", () => {
    const w = world({ "global/lathe.json": `{\n  "agent": { "build": { "prompt": "{file:nope.md}" } }\n}` })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(w.load())
      assert.strictEqual(error.reason, "MissingFile")
      assert.strictEqual(error.file, w.file("global/lathe.json"))
      assert.strictEqual(
        error.message,
        `${w.file("global/lathe.json")}:2:35: agent.build.prompt: {file:nope.md} refers to ${w.file("global/nope.md")}, which does not exist`
      )
    })
  })
})

describe("permissionRules", () => {
  it("expands in key order; a bare action is *: *", () => {
    expect(permissionRules("ask", "env")).toEqual([{ permission: "*", pattern: "*", action: "ask", source: "env" }])
    expect(permissionRules(undefined, "x")).toEqual([])
    expect(permissionRules({ read: { "*": "allow", "*.env": "ask" }, bash: "ask", "*": "deny" }, "f")).toEqual([
      { permission: "read", pattern: "*", action: "allow", source: "f" },
      { permission: "read", pattern: "*.env", action: "ask", source: "f" },
      { permission: "bash", pattern: "*", action: "ask", source: "f" },
      { permission: "*", pattern: "*", action: "deny", source: "f" }
    ])
  })
})

describe("Config.layerTest", () => {
  it.effect("builds a trusted config from an object, validated and expanded", () =>
    Effect.gen(function* () {
      const config = yield* Config
      assert.strictEqual(config.info.model, "anthropic/claude-sonnet-4-5")
      assert.deepStrictEqual(config.info.permission, [
        { permission: "*", pattern: "*", action: "ask", source: "config" }
      ])
      assert.deepStrictEqual(config.info.agent, {
        plan: { mode: "primary", permission: [{ permission: "edit", pattern: "*", action: "deny", source: "config" }] }
      })
      assert.deepStrictEqual(config.info.provider, { openai: { type: "openai" } })
      assert.deepStrictEqual(
        [config.info.plugin, config.info.instructions, config.sources, config.notices],
        [[], [], [], []]
      )
      assert.isTrue(config.trusted)
    }).pipe(
      Effect.provide(
        Config.layerTest({
          model: "anthropic/claude-sonnet-4-5",
          permission: "ask",
          agent: { plan: { mode: "primary", permission: { edit: "deny" } } },
          provider: { openai: {} }
        })
      )
    )
  )

  it.effect("an empty input is an empty config", () =>
    Effect.gen(function* () {
      const { info } = yield* Config
      assert.deepStrictEqual(info, { permission: [], agent: {}, plugin: [], instructions: [] })
    }).pipe(Effect.provide(Config.layerTest()))
  )
})
