/**
 * Amazon Bedrock's descriptor against a real ConverseStream server on 127.0.0.1 (binary event-stream frames): a
 * SigV4-signed tool-call step and the follow-up carrying the tool result, with the descriptor's cache mark and reasoning
 * mapping applied as the LLM layer applies them (cache points after the system prompt and the last two messages,
 * Claude's reasoning budget as `thinking`), usage with cache reads and writes priced at the catalogue's Bedrock prices; then the
 * bearer Bedrock API key, and what `missing` says when credentials or the region are not set.
 */
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Stream } from "effect"
import { ModelCatalog } from "../src/catalog/model-catalog.js"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { type LLMEvent, type LLMRequest, streamWithModel } from "../src/llm/llm.js"
import { stepCost, tokensFromUsage } from "../src/llm/usage.js"
import { amazonBedrock } from "../src/provider/amazon-bedrock.js"
import type { ProviderEnv, ProviderSettings } from "../src/provider/descriptor.js"
import { nodeFetch } from "../src/provider/http-fetch.js"
import { descriptorFor } from "../src/provider/registry.js"
import type { ScriptedServer } from "../src/testing/scripted-server.js"
import { type BedrockScript, type BedrockWireOptions, startBedrockWireServer } from "../src/testing/wire-bedrock.js"

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
const KEYS = {
  AWS_REGION: "us-west-2",
  AWS_ACCESS_KEY_ID: "AKIDLATHETEST0000001",
  AWS_SECRET_ACCESS_KEY: "lathe-test-secret",
  AWS_SESSION_TOKEN: "lathe-test-session"
}

const bedrockServer = (script: BedrockScript, options?: BedrockWireOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startBedrockWireServer(script, options)),
    (server) => Effect.promise(() => server.close())
  )

const settingsFor = (server: ScriptedServer, env: ProviderEnv): ProviderSettings => ({
  id: "amazon-bedrock",
  apiKey: undefined,
  baseURL: server.url,
  headers: undefined,
  options: {},
  env,
  fetch: nodeFetch as typeof fetch
})

/** The catalogue shipped with Lathe (no refresh, no cached copy). */
const catalogInfo = (modelID: string) =>
  ModelCatalog.make({
    dataDir: join(tmpdir(), "lathe-no-catalog"),
    url: "http://127.0.0.1:9/none",
    refresh: false
  }).info(amazonBedrock.catalogID, modelID)

const schema = { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }

const request = (model: ModelInfo, messages: ReadonlyArray<ModelMessage>): LLMRequest => ({
  sessionID: "ses_bedrock",
  model,
  system: ["You are Lathe."],
  messages,
  tools: { read: { description: "Read a file", inputSchema: schema } },
  abort: new AbortController().signal
})

const step = (settings: ProviderSettings, req: LLMRequest) =>
  Effect.gen(function* () {
    const model = yield* Effect.promise(() => amazonBedrock.load(settings, req.model.modelID))
    const events = yield* Stream.runCollect(
      streamWithModel(model, req, {
        imagesInToolResults: amazonBedrock.imagesInToolResults,
        cache: amazonBedrock.cache?.(req.model.modelID),
        reasoning: amazonBedrock.reasoning
      })
    )
    return [...events] as Array<LLMEvent>
  })

const finishOf = (events: ReadonlyArray<LLMEvent>) => {
  const finish = events.find((event) => event.type === "finish-step")
  if (finish?.type !== "finish-step") throw new Error("the step did not finish")
  return finish
}

interface ConverseBody {
  readonly system?: ReadonlyArray<Record<string, unknown>>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }>
  readonly toolConfig?: { readonly tools: ReadonlyArray<{ readonly toolSpec?: { readonly name: string } }> }
  readonly inferenceConfig?: { readonly maxTokens?: number }
  readonly additionalModelRequestFields?: { readonly thinking?: unknown }
}

const cachePoint = { cachePoint: { type: "default" } }

/** The server checks signatures against the test key pair, as Bedrock does. */
const signedWith = { credentials: { accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY } }

describe("Amazon Bedrock (ConverseStream)", () => {
  it.effect("signs with SigV4, calls a tool, sends its result back, marks cache points and prices the usage", () =>
    Effect.gen(function* () {
      const server = yield* bedrockServer(
        [
          {
            reasoning: "The file name is given; read it.",
            tool: { name: "read", input: { path: "a.txt" }, id: "tooluse_read_1" },
            usage: { input: 20_000, output: 1_000, cacheWrite: 100_000 }
          },
          { text: "It says hello.", usage: { input: 2_000, output: 500, cacheRead: 100_000, cacheWrite: 3_000 } }
        ],
        signedWith
      )
      const settings = settingsFor(server, KEYS)
      assert.strictEqual(amazonBedrock.missing?.(settings), undefined)
      const info = yield* catalogInfo(MODEL)
      assert.deepStrictEqual(info.cost, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
      assert.deepStrictEqual(amazonBedrock.reasoning?.(info, "medium"), {
        bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 16_000 } }
      })
      const model: ModelInfo = { ...info, reasoning: "medium" }

      const first = yield* step(settings, request(model, [{ role: "user", content: "read a.txt" }]))
      const call = first.find((event) => event.type === "tool-call")
      assert.deepStrictEqual(call?.type === "tool-call" ? [call.toolName, call.input] : [], ["read", { path: "a.txt" }])
      assert.isTrue(first.some((event) => event.type === "reasoning-delta"))
      const firstFinish = finishOf(first)
      assert.strictEqual(firstFinish.finishReason, "tool-calls")

      const history: Array<ModelMessage> = [
        { role: "user", content: "read a.txt" },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "tooluse_read_1", toolName: "read", input: { path: "a.txt" } }]
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "tooluse_read_1",
              toolName: "read",
              output: { type: "text", value: "hello" }
            }
          ]
        }
      ]
      const second = yield* step(settings, request(model, history))
      const text = second.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("")
      assert.strictEqual(text, "It says hello.")
      const secondFinish = finishOf(second)
      assert.strictEqual(secondFinish.finishReason, "stop")

      // The wire: the path, SigV4 with the test key for us-west-2's bedrock service, the session token.
      assert.deepStrictEqual(
        server.requests.map((r) => [r.method, r.path]),
        [
          ["POST", `/model/${encodeURIComponent(MODEL)}/converse-stream`],
          ["POST", `/model/${encodeURIComponent(MODEL)}/converse-stream`]
        ]
      )
      const headers = server.requests[0]?.headers ?? {}
      const date = String(headers["x-amz-date"])
      expect(date).toMatch(/^\d{8}T\d{6}Z$/)
      expect(String(headers.authorization)).toMatch(
        new RegExp(
          `^AWS4-HMAC-SHA256 Credential=${KEYS.AWS_ACCESS_KEY_ID}/${date.slice(0, 8)}/us-west-2/bedrock/aws4_request, ` +
            "SignedHeaders=[a-z0-9;-]*host;[a-z0-9;-]*x-amz-date[a-z0-9;-]*, Signature=[0-9a-f]{64}$"
        )
      )
      assert.strictEqual(headers["x-amz-security-token"], KEYS.AWS_SESSION_TOKEN)

      const body1 = server.requests[0]?.body as ConverseBody
      assert.deepStrictEqual(body1.system, [{ text: "You are Lathe." }, cachePoint])
      assert.deepStrictEqual(body1.messages, [{ role: "user", content: [{ text: "read a.txt" }, cachePoint] }])
      assert.deepStrictEqual(
        body1.toolConfig?.tools.map((tool) => tool.toolSpec?.name),
        ["read"]
      )
      assert.deepStrictEqual(body1.additionalModelRequestFields?.thinking, { type: "enabled", budget_tokens: 16_000 })

      // The second step moves the marks to its last two messages: three cache points, under Bedrock's four.
      const body2 = server.requests[1]?.body as ConverseBody
      assert.deepStrictEqual(body2.messages[0], { role: "user", content: [{ text: "read a.txt" }] })
      assert.deepStrictEqual(body2.messages.at(-2), {
        role: "assistant",
        content: [{ toolUse: { toolUseId: "tooluse_read_1", name: "read", input: { path: "a.txt" } } }, cachePoint]
      })
      assert.deepStrictEqual(body2.messages.at(-1), {
        role: "user",
        content: [{ toolResult: { toolUseId: "tooluse_read_1", content: [{ text: "hello" }] } }, cachePoint]
      })

      // Usage: Bedrock's inputTokens exclude the cache; reads and writes are priced at their own rates.
      const tokens1 = tokensFromUsage(firstFinish.usage)
      const tokens2 = tokensFromUsage(secondFinish.usage)
      assert.deepStrictEqual(tokens1, {
        input: 20_000,
        output: 1_000,
        reasoning: 0,
        cache: { read: 0, write: 100_000 }
      })
      assert.deepStrictEqual(tokens2, {
        input: 2_000,
        output: 500,
        reasoning: 0,
        cache: { read: 100_000, write: 3_000 }
      })
      // 20,000 × $3 + 1,000 × $15 + 100,000 × $3.75 per million = $0.45
      expect(stepCost(tokens1, info)).toBeCloseTo(0.45, 10)
      // 2,000 × $3 + 500 × $15 + 100,000 × $0.30 + 3,000 × $3.75 per million = $0.05475
      expect(stepCost(tokens2, info)).toBeCloseTo(0.05475, 10)
      assert.strictEqual((stepCost(tokens1, info) + stepCost(tokens2, info)).toFixed(2), "0.50")
    }).pipe(Effect.scoped)
  )

  it.effect("sends a Bedrock API key as the bearer token, without signing or a region", () =>
    Effect.gen(function* () {
      const server = yield* bedrockServer([{ text: "Hi." }], { bearer: "bedrock-api-key-test" })
      const settings = settingsFor(server, { AWS_BEARER_TOKEN_BEDROCK: "bedrock-api-key-test" })
      assert.strictEqual(amazonBedrock.missing?.(settings), undefined)
      const info = yield* catalogInfo("amazon.nova-pro-v1:0")
      const events = yield* step(settings, request(info, [{ role: "user", content: "hi" }]))
      assert.strictEqual(finishOf(events).finishReason, "stop")
      const headers = server.requests[0]?.headers ?? {}
      assert.strictEqual(headers.authorization, "Bearer bedrock-api-key-test")
      assert.isUndefined(headers["x-amz-date"])
      assert.strictEqual(server.requests[0]?.path, "/model/amazon.nova-pro-v1%3A0/converse-stream")
    }).pipe(Effect.scoped)
  )
  it.effect("a wrong secret is refused by the signature check: an Auth error, no retry", () =>
    Effect.gen(function* () {
      const server = yield* bedrockServer([{ text: "never sent" }], signedWith)
      const settings = settingsFor(server, { ...KEYS, AWS_SECRET_ACCESS_KEY: "not-the-secret" })
      const info = yield* catalogInfo(MODEL)
      const model = yield* Effect.promise(() => amazonBedrock.load(settings, MODEL))
      const error = yield* Effect.flip(
        Stream.runCollect(streamWithModel(model, request(info, [{ role: "user", content: "hi" }])))
      )
      assert.strictEqual(error.reason._tag, "Auth")
      assert.strictEqual(server.requests.length, 1)
    }).pipe(Effect.scoped)
  )
})

describe("Amazon Bedrock descriptor", () => {
  const settings = (env: ProviderEnv, baseURL?: string): ProviderSettings => ({
    id: "amazon-bedrock",
    apiKey: undefined,
    baseURL,
    headers: undefined,
    options: {},
    env,
    fetch: nodeFetch as typeof fetch
  })

  it("says what to set when credentials or the region are missing", () => {
    expect(amazonBedrock.missing?.(settings({}))).toMatch(/AWS_BEARER_TOKEN_BEDROCK.*AWS_ACCESS_KEY_ID/)
    expect(amazonBedrock.missing?.(settings({ AWS_PROFILE: "work" }))).toContain(
      'eval "$(aws configure export-credentials --profile work --format env)"'
    )
    expect(amazonBedrock.missing?.(settings({ AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b" }))).toMatch(
      /AWS_REGION/
    )
    expect(amazonBedrock.missing?.(settings({ AWS_BEARER_TOKEN_BEDROCK: "k" }))).toMatch(/AWS_REGION/)
    const keys = { AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b", AWS_DEFAULT_REGION: "eu-west-1" }
    assert.strictEqual(amazonBedrock.missing?.(settings(keys)), undefined)
    assert.strictEqual(amazonBedrock.missing?.(settings({ AWS_BEARER_TOKEN_BEDROCK: "k" }, "http://x")), undefined)
  })

  it("caches Claude 3.5 Haiku, 3.7 and 4+ and Nova, reasons per family, and answers to bedrock", () => {
    const cached = (id: string) => amazonBedrock.cache?.(id)?.kind
    assert.strictEqual(cached("global.anthropic.claude-opus-4-5-20251101-v1:0"), "breakpoints")
    assert.strictEqual(cached("anthropic.claude-3-7-sonnet-20250219-v1:0"), "breakpoints")
    assert.strictEqual(cached("us.amazon.nova-lite-v1:0"), "breakpoints")
    assert.isUndefined(cached("anthropic.claude-3-5-sonnet-20241022-v2:0"))
    assert.isUndefined(cached("meta.llama3-3-70b-instruct-v1:0"))
    const target = (modelID: string) => ({
      modelID,
      limit: { context: 300_000, output: 8_192 },
      capabilities: { reasoning: true }
    })
    assert.deepStrictEqual(amazonBedrock.reasoning?.(target("amazon.nova-2-lite-v1:0"), "high"), {
      bedrock: { reasoningConfig: { type: "enabled", maxReasoningEffort: "high" } }
    })
    assert.deepStrictEqual(amazonBedrock.reasoning?.(target("us.deepseek.r1-v1:0"), "high"), {})
    assert.strictEqual(amazonBedrock.prompt instanceof Function ? amazonBedrock.prompt(MODEL) : "", "anthropic")
    assert.strictEqual(descriptorFor("bedrock"), amazonBedrock)
  })
})
