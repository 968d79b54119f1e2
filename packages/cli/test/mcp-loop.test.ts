// @lathe/mcp in core's real host and loop (the config loader, Plugins, the scripted model): tests of the two together,
// so they live with the CLI, the one package that knows both (a feature package's tests see the kit alone).
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import {
  Bus,
  Config,
  createSession,
  Paths,
  type PermissionAsk,
  PermissionNext,
  Plugins,
  SessionPrompt,
  SessionStore
} from "@lathe/core"
import { chunks, ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import { CHARS_PER_TOKEN, createMcpPlugin } from "@lathe/mcp"
import { Effect, Layer } from "effect"
import { mcpCredentials } from "../src/plugins.js"

const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), "lathe-mcp-loop-")))

// Through the loop: the plugin with a real server of 300 generated tools (the SDK's McpServer over stdio) and a
// scripted model whose context is 200k tokens, so the budget is 20k tokens and the 300 definitions (~40k) exceed it.
const manyTools = fileURLToPath(new URL("./fixtures/many-tools-server.mjs", import.meta.url))
const BUDGET = 20_000

/** Estimated tokens of the tool definitions a request offered, as the plugin estimates them. */
const offeredTokens = (
  tools: Readonly<Record<string, { readonly description: string; readonly inputSchema: unknown }>>
) =>
  Object.entries(tools).reduce(
    (sum, [name, spec]) =>
      sum +
      JSON.stringify({ name, description: spec.description, input_schema: spec.inputSchema }).length / CHARS_PER_TOKEN,
    0
  )

/** A permission layer that allows every ask and records it. */
const recording = (asks: Array<PermissionAsk>) =>
  Layer.succeed(
    PermissionNext,
    PermissionNext.of({
      ask: (request) => Effect.sync(() => void asks.push(request)),
      reply: () => Effect.void,
      pending: Effect.succeed([])
    })
  )

const loop = (options: {
  readonly steps: Parameters<typeof testLoopLayer>[0]["steps"]
  readonly asks: Array<PermissionAsk>
  readonly search?: number | false
}) =>
  testLoopLayer({
    root: tempDir(),
    plugins: [createMcpPlugin({ env: {} })],
    config: {
      model: "anthropic/claude-sonnet-4-5",
      mcp: { many: { type: "local", command: [process.execPath, manyTools], wait: true } },
      ...(options.search !== undefined ? { mcp_tool_search: options.search } : {})
    },
    permissionLayer: recording(options.asks),
    scripted: { model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" } },
    steps: options.steps
  })

const prompt = (text: string) =>
  Effect.gen(function* () {
    const session = yield* createSession({ title: "search" })
    yield* (yield* SessionPrompt).prompt({ sessionID: session.id, parts: [{ type: "text", text }], title: false })
    return yield* (yield* ScriptedLLM).requests
  })

describe("MCP tool search through the loop", () => {
  it.live(
    "300 tools: the first request stays under the budget and the model reaches a tool it searched for",
    () => {
      const asks: Array<PermissionAsk> = []
      return Effect.gen(function* () {
        const [first, second, third] = yield* prompt("archive invoice inv-7")
        const offered = Object.keys(first?.tools ?? {})
        assert.includeMembers(offered, ["mcp_search", "mcp_call"])
        assert.isFalse(
          offered.some((name) => name.startsWith("many_")),
          "no server tool is offered directly"
        )
        assert.isBelow(offeredTokens(first?.tools ?? {}), BUDGET)
        const found = JSON.stringify(second?.messages)
        assert.include(found, "many_archive_invoice")
        assert.include(found, "list_invoice", "the search result carries the input schema")
        assert.include(JSON.stringify(third?.messages), 'archive_invoice ran with {\\"id\\":\\"inv-7\\"}')
        assert.deepStrictEqual(
          asks.map((ask) => ask.permission),
          ["many_archive_invoice"],
          "the call asks under the MCP tool's own name, never mcp_call"
        )
      }).pipe(
        Effect.provide(
          loop({
            asks,
            steps: [
              [
                chunks.toolCall("c1", "mcp_search", { query: "archive invoice" }),
                chunks.finish({ input: 1, output: 1 }, "tool-calls")
              ],
              [
                chunks.toolCall("c2", "mcp_call", { tool: "many_archive_invoice", arguments: { id: "inv-7" } }),
                chunks.finish({ input: 1, output: 1 }, "tool-calls")
              ],
              [chunks.text("archived"), chunks.finish({ input: 1, output: 1 })]
            ]
          })
        )
      )
    },
    60_000
  )

  it.live(
    "mcp_tool_search: false sends every tool",
    () => {
      const asks: Array<PermissionAsk> = []
      return Effect.gen(function* () {
        const [first] = yield* prompt("hello")
        const offered = Object.keys(first?.tools ?? {})
        assert.include(offered, "many_archive_invoice")
        assert.notInclude(offered, "mcp_search")
        assert.isAbove(offeredTokens(first?.tools ?? {}), BUDGET, "the fixture is larger than the default budget")
      }).pipe(
        Effect.provide(
          loop({ asks, search: false, steps: [[chunks.text("hi"), chunks.finish({ input: 1, output: 1 })]] })
        )
      )
    },
    60_000
  )
})

describe("the MCP plugin in the host", () => {
  it("an untrusted repository's servers (lathe.json mcp and .mcp.json) are never started", async () => {
    const base = tempDir()
    const root = join(base, "repo")
    mkdirSync(root)
    const marker = join(base, "started")
    const spy = [process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`]
    writeFileSync(join(root, "lathe.json"), JSON.stringify({ mcp: { evil: { type: "local", command: spy } } }))
    const [command = "", ...args] = spy
    writeFileSync(join(root, ".mcp.json"), JSON.stringify({ mcpServers: { sneaky: { command, args } } }))
    const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
    const layer = Plugins.layer([createMcpPlugin()]).pipe(
      Layer.provideMerge(Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory)),
      Layer.provideMerge(paths)
    )
    const ids = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          return (yield* Plugins).tools.map((t) => t.id)
        }).pipe(Effect.provide(layer))
      )
    )
    assert.deepStrictEqual(ids, [])
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.isFalse(existsSync(marker))
  })

  it("mcpCredentials: a provider's apiKey and the provider key variables, not MCP servers' own settings", () => {
    const env = {
      ANTHROPIC_API_KEY: "sk-ant-person-key-0123456789",
      CORP_LLM_TOKEN: "corp-gateway-secret-0123456789",
      HOME: "/home/person"
    }
    const { credentials, credentialNames } = mcpCredentials(
      { provider: { gateway: { apiKey: env.CORP_LLM_TOKEN, baseURL: "https://llm.corp.example/v1" } } },
      env
    )
    assert.includeMembers([...credentials], [env.CORP_LLM_TOKEN, env.ANTHROPIC_API_KEY])
    assert.notInclude([...credentials], "/home/person")
    assert.includeMembers([...credentialNames], ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LATHE_API_KEY"])
  })
})
