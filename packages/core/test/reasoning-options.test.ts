/**
 * Reasoning controls: `low`/`medium`/`high`/`{ budget }` become each provider's own field in the request body
 * (Anthropic `thinking.budget_tokens`, OpenAI Responses `reasoning.effort`, OpenAI-compatible `reasoning_effort`),
 * only for models whose catalogue entry (or config entry) says they reason. Real SDKs against real HTTP servers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { ConfigFile } from "../src/config/config-schema.js"
import { LLM, type LLMRequest, type ProviderEnv } from "../src/llm/llm.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { type Reasoning, reasoningBudget } from "../src/provider/reasoning.js"
import { createSession } from "../src/store/session.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { startScriptedServer } from "../src/testing/scripted-server.js"
import { startWireServer, type WireFormat } from "../src/testing/scripted-wire.js"
import { tempRoot } from "./loop-helpers.js"

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

/** Streams one step of `model` with `reasoning` (none: the model's own setting) and returns the body sent. */
const bodyFor = (
  format: WireFormat | "chat",
  config: (url: string) => ConfigTestInput,
  env: ProviderEnv,
  reasoning?: Reasoning
) =>
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(
      Effect.promise(() =>
        format === "chat"
          ? startScriptedServer([{ steps: [{ text: "ok" }] }])
          : startWireServer(format, [{ text: "ok" }])
      ),
      (s) => Effect.promise(() => s.close())
    )
    yield* Effect.gen(function* () {
      const llm = yield* LLM
      const model = yield* Effect.orDie(llm.resolve())
      const request: LLMRequest = {
        sessionID: "ses_r",
        model: reasoning === undefined ? model : { ...model, reasoning },
        system: ["You are Lathe."],
        messages: [{ role: "user", content: "hi" }],
        tools: {},
        abort: new AbortController().signal
      }
      yield* Stream.runDrain(llm.stream(request))
    }).pipe(Effect.provide(llmLayer(config(server.url), env)))
    return server.requests[0]?.body as Record<string, unknown>
  })

const anthropic = (model: string) => (url: string) => ({
  model: `anthropic/${model}`,
  provider: { anthropic: { baseURL: url } }
})
const antKey = { ANTHROPIC_API_KEY: "sk-ant-test" }
const openai = (model: string) => (url: string) => ({
  model: `openai/${model}`,
  provider: { openai: { baseURL: url } }
})
const oaiKey = { OPENAI_API_KEY: "sk-oai-test" }

describe("reasoning on Anthropic: a thinking budget", () => {
  it.effect("low, medium, high and { budget } send thinking.budget_tokens 4,000 / 16,000 / 32,000 / the budget", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<[Reasoning, number]> = [
        ["low", 4_000],
        ["medium", 16_000],
        ["high", 32_000],
        [{ budget: 10_000 }, 10_000]
      ]
      for (const [reasoning, budget] of cases) {
        const body = yield* bodyFor("anthropic", anthropic("claude-sonnet-4-5"), antKey, reasoning)
        assert.deepStrictEqual(body.thinking, { type: "enabled", budget_tokens: budget }, JSON.stringify(reasoning))
        assert.isAbove(body.max_tokens as number, budget, "max_tokens leaves room for the answer")
      }
    })
  )

  it.effect("a budget stays below the model's output limit (Claude Opus 4.1: 32,000 out, high → 27,904)", () =>
    Effect.gen(function* () {
      const body = yield* bodyFor("anthropic", anthropic("claude-opus-4-1"), antKey, "high")
      assert.deepStrictEqual(body.thinking, { type: "enabled", budget_tokens: 27_904 })
      const model = { limit: { context: 8_000, output: 4_096 } } as Parameters<typeof reasoningBudget>[1]
      assert.strictEqual(reasoningBudget("high", model), 1_024, "never under Anthropic's minimum")
    })
  )

  it.effect("a model that does not reason (Claude Haiku 3.5) and no setting both send no thinking", () =>
    Effect.gen(function* () {
      const haiku = yield* bodyFor("anthropic", anthropic("claude-3-5-haiku"), antKey, "high")
      assert.notProperty(haiku, "thinking")
      const unset = yield* bodyFor("anthropic", anthropic("claude-sonnet-4-5"), antKey)
      assert.notProperty(unset, "thinking")
    })
  )

  it.effect('a model entry\'s "reasoning": "low" is the default setting of that model', () =>
    Effect.gen(function* () {
      const config = (url: string) => ({
        model: "anthropic/claude-sonnet-4-5",
        provider: { anthropic: { baseURL: url, models: { "claude-sonnet-4-5": { reasoning: "low" as const } } } }
      })
      const body = yield* bodyFor("anthropic", config, antKey)
      assert.deepStrictEqual(body.thinking, { type: "enabled", budget_tokens: 4_000 })
    })
  )
})

describe("reasoning on OpenAI and OpenAI-compatible: an effort", () => {
  it.effect("the Responses API gets reasoning.effort; a budget maps to the nearest level", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<[Reasoning, string]> = [
        ["low", "low"],
        ["medium", "medium"],
        ["high", "high"],
        [{ budget: 20_000 }, "high"]
      ]
      for (const [reasoning, effort] of cases) {
        const body = yield* bodyFor("openai-responses", openai("gpt-5"), oaiKey, reasoning)
        assert.deepInclude(body.reasoning as object, { effort }, JSON.stringify(reasoning))
      }
    })
  )

  it.effect("a model that does not reason (GPT-4.1) sends no reasoning field", () =>
    Effect.gen(function* () {
      const body = yield* bodyFor("openai-responses", openai("gpt-4.1"), oaiKey, "high")
      assert.notProperty(body, "reasoning")
    })
  )

  it.effect("an openai-compatible server gets reasoning_effort when its model entry says it reasons", () =>
    Effect.gen(function* () {
      const local = (reasoning?: "medium") => (url: string) => ({
        model: "local/qwen3-coder",
        provider: {
          local: {
            type: "openai-compatible" as const,
            baseURL: url,
            models: { "qwen3-coder": reasoning ? { reasoning } : {} }
          }
        }
      })
      const reasoning = yield* bodyFor("chat", local("medium"), {})
      assert.strictEqual(reasoning.reasoning_effort, "medium")
      // The same model without the entry: not known to reason, so nothing is sent even when asked.
      const plain = yield* bodyFor("chat", local(), {}, "high")
      assert.notProperty(plain, "reasoning_effort")
    })
  )
})

describe("reasoning in config", () => {
  it("a model entry and an agent take a level or a budget; anything else is refused with what is expected", () => {
    const parsed = ConfigFile.parse({
      provider: { a: { type: "anthropic", models: { m: { reasoning: { budget: 8_000 } }, n: { reasoning: false } } } },
      agent: { build: { reasoning: "high" } }
    })
    assert.deepStrictEqual(parsed.provider?.a?.models?.m, { reasoning: true, reasoning_effort: { budget: 8_000 } })
    assert.deepStrictEqual(parsed.provider?.a?.models?.n, { reasoning: false })
    assert.strictEqual(parsed.agent?.build?.reasoning, "high")
    assert.isFalse(ConfigFile.safeParse({ agent: { build: { reasoning: "max" } } }).success)
    assert.isFalse(ConfigFile.safeParse({ agent: { build: { reasoning: { budget: 10 } } } }).success)
  })
})

describe("reasoning of a turn", () => {
  const done = [chunks.text("done"), chunks.finish({ input: 10, output: 5 })]
  /** The reasoning setting each prompt's model request carried: `variants` in order, on an agent with `high`. */
  const turns = (variants: ReadonlyArray<Reasoning | undefined>) =>
    Effect.gen(function* () {
      const session = yield* createSession({})
      for (const variant of variants)
        yield* (yield* SessionPrompt).prompt({
          sessionID: session.id,
          parts: [{ type: "text", text: "hello" }],
          title: false,
          ...(variant ? { variant } : {})
        })
      return (yield* (yield* ScriptedLLM).requests).map((request) => request.model.reasoning)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          config: { model: "local/alpha", agent: { build: { reasoning: "high" } } },
          steps: [done, done]
        })
      )
    )

  it.live("the agent's setting applies, and a prompt's variant overrides it for that prompt only", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* turns(["low", undefined]), ["low", "high"])
    })
  )
})
