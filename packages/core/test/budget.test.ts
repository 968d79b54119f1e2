// Hard cost budgets: one ledger per turn, shared by every subagent it starts. Each model call reserves its estimate
// before it is sent and settles its actual cost after, so calls running at once never both spend the last of it.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import type { AssistantMessage, MessageWithParts } from "@lathe/plugin/schema"
import { Effect, Exit, Layer, Stream } from "effect"
import { z } from "zod"
import { Config } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { LLM, type LLMRequest } from "../src/llm/llm.js"
import { fitOutputCap } from "../src/llm/output-cap.js"
import {
  Budget,
  BudgetExhausted,
  type CallPrice,
  callPrice,
  estimateCost,
  estimateInputTokens,
  MIN_OUTPUT_TOKENS
} from "../src/loop/budget.js"
import { chunks, ScriptedLLM, SessionStore, scriptedModelInfo, testLoopLayer } from "../src/testing/index.js"
import { startChatWire } from "../src/testing/wire-chat.js"
import { startResponsesWire } from "../src/testing/wire-responses.js"
import { EchoTool, runTurn, tempRoot } from "./loop-helpers.js"

const open = (maxCost?: number, maxSessionCost?: number, sessionSpent = 0) =>
  Effect.gen(function* () {
    const ledger = yield* (yield* Budget).open({ maxCost, maxSessionCost, sessionSpent })
    assert.isDefined(ledger)
    return ledger as NonNullable<typeof ledger>
  }).pipe(Effect.provide(Budget.layer))

/** A call of `input` USD and no output price (its hold is its input alone). */
const flat = (input: number): CallPrice => ({ inputTokens: 1, inputPrice: input, outputPrice: 0, maxOutput: 0 })

describe("the budget ledger", () => {
  it.effect("counts exactly: ten calls of $0.1 spend $1.0, and the eleventh is refused", () =>
    Effect.gen(function* () {
      const ledger = yield* open(1)
      for (let i = 0; i < 10; i++) {
        const hold = yield* ledger.reserve(flat(0.1))
        yield* ledger.settle(hold, 0.1)
      }
      // 0.1 added ten times as floats is 0.9999999999999999; the ledger's nano-dollars are exact.
      assert.strictEqual(yield* ledger.spent, 1)
      const refused = yield* Effect.exit(ledger.reserve(flat(0.000_000_001)))
      assert.isTrue(Exit.isFailure(refused))
    })
  )

  it.effect("gives a call the output what is left pays for, then a small allowance, then refuses (and stays so)", () =>
    Effect.gen(function* () {
      const ledger = yield* open(1)
      // $0.1 of input and $100 per million output tokens: $1 pays for 9,000 output tokens after the input.
      const call: CallPrice = { inputTokens: 1, inputPrice: 0.1, outputPrice: 100e-6, maxOutput: 8_000 }
      const first = yield* ledger.reserve(call)
      assert.strictEqual(first.outputTokens, 8_000)
      yield* ledger.settle(first, 0.5)
      const second = yield* ledger.reserve(call)
      assert.strictEqual(second.outputTokens, 4_000)
      yield* ledger.settle(second, 0.38)
      // $0.12 left: the input and 200 tokens, below the 1,024-token floor.
      const error = yield* Effect.flip(ledger.reserve(call))
      assert.instanceOf(error, BudgetExhausted)
      assert.strictEqual(error.spent, 0.88)
      assert.strictEqual(error.limit, 1)
      assert.include(error.message, "$0.8800 of its $1.0000")
      assert.include(error.message, 'lathe run -c "continue"')
      // A smaller call would fit, but the budget already ran out: nothing squeezes in after a refusal.
      assert.isTrue(Exit.isFailure(yield* Effect.exit(ledger.reserve(flat(0.01)))))
    })
  )

  it.effect("a call that asks for fewer tokens than the floor may take that many", () =>
    Effect.gen(function* () {
      const ledger = yield* open(0.02)
      const hold = yield* ledger.reserve({ inputTokens: 1, inputPrice: 0.01, outputPrice: 10e-6, maxOutput: 500 })
      assert.strictEqual(hold.outputTokens, 500)
      assert.closeTo(hold.nano / 1e9, 0.015, 1e-12)
    })
  )

  it.effect(
    "calls at once never hold more than the cap together: they wait for holds, and stop on what was spent",
    () =>
      Effect.gen(function* () {
        const ledger = yield* open(1)
        let held = 0
        let most = 0
        const call = (i: number) =>
          Effect.gen(function* () {
            const hold = yield* ledger.reserve(flat(0.3))
            held += hold.nano
            most = Math.max(most, held)
            for (let turn = 0; turn <= i % 3; turn++) yield* Effect.yieldNow
            held -= hold.nano
            yield* ledger.settle(hold, 0.2)
          })
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => Effect.exit(call(i))),
          { concurrency: "unbounded" }
        )
        const made = results.filter(Exit.isSuccess).length
        // Each call held $0.3 and spent $0.2: a hold fits while what is spent stays at $0.7 or less.
        assert.strictEqual(made, 4)
        assert.closeTo(yield* ledger.spent, made * 0.2, 1e-12)
        assert.isAtMost(most, 1e9)
        assert.isAbove(most, 0.3e9) // they did run at once
      })
  )

  it.effect("an input the provider counted above its estimate raises later estimates by that ratio (at most 3×)", () =>
    Effect.gen(function* () {
      const ledger = yield* open(100)
      const call: CallPrice = { inputTokens: 1_000, inputPrice: 0.001, outputPrice: 0, maxOutput: 0 }
      const first = yield* ledger.reserve(call)
      assert.strictEqual(first.nano, 1e9)
      // The provider counted 2,000 input tokens where 1,000 were estimated.
      yield* ledger.settle(first, 2, 2_000)
      const second = yield* ledger.reserve(call)
      assert.strictEqual(second.nano, 2e9)
      // A count below the estimate never lowers it; a wild one raises it at most threefold.
      yield* ledger.settle(second, 1, 500)
      const third = yield* ledger.reserve(call)
      assert.strictEqual(third.nano, 2e9)
      yield* ledger.settle(third, 1, 100_000)
      assert.strictEqual((yield* ledger.reserve(call)).nano, 3e9)
    })
  )

  it.effect("an optional call (a title) that does not fit now is refused at once, without stopping the turn", () =>
    Effect.gen(function* () {
      const ledger = yield* open(1)
      const hold = yield* ledger.reserve(flat(0.8))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(ledger.reserve(flat(0.3), { optional: true }))))
      yield* ledger.settle(hold, 0.1)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(ledger.reserve(flat(0.3)))))
    })
  )

  it.effect("the session cap binds when its remainder is smaller than the turn's cap, earlier turns counted", () =>
    Effect.gen(function* () {
      const session = yield* open(2, 5, 4.5)
      assert.strictEqual(session.cap, "session")
      assert.strictEqual(session.limit, 5)
      assert.strictEqual(yield* session.spent, 4.5)
      const error = yield* Effect.flip(session.reserve(flat(0.6)))
      assert.include(error.message, "budget.max_session_cost")
      const turn = yield* open(2, 5, 1)
      assert.strictEqual(turn.cap, "turn")
      assert.strictEqual(turn.limit, 2)
      assert.isUndefined(yield* (yield* Budget).open({ sessionSpent: 3 }).pipe(Effect.provide(Budget.layer)))
    }).pipe(Effect.provide(Budget.layer))
  )

  it("prices a call: input at 3 bytes a token (dearer of input and cache-write price), output up to its limit", () => {
    const model = scriptedModelInfo({
      cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
      limit: { output: 16_000 }
    })
    const request = {
      sessionID: "s",
      model,
      system: ["x".repeat(2_997)],
      messages: [],
      tools: {},
      abort: new AbortController().signal
    } satisfies LLMRequest
    // 2,997 bytes of system text: 999 tokens, and 100 for the provider's framing; at the cache-write price.
    const price = callPrice(request)
    assert.strictEqual(estimateInputTokens(request), 1_099)
    assert.strictEqual(price.inputTokens, 1_099)
    assert.closeTo(price.inputPrice, 2.5 / 1e6, 1e-15)
    assert.closeTo(price.outputPrice, 10 / 1e6, 1e-15)
    assert.strictEqual(price.maxOutput, 16_000)
    assert.strictEqual(callPrice({ ...request, maxOutputTokens: 100 }).maxOutput, 100)
    // Never more than the context has room for after the input (some servers refuse a request that asks for more).
    const small = { ...model, limit: { ...model.limit, context: 3_000 } }
    assert.strictEqual(callPrice({ ...request, model: small }).maxOutput, 3_000 - 1_099)
    assert.closeTo(estimateCost(request), (1_099 * 2.5 + 16_000 * 10) / 1e6, 1e-12)
    // UTF-8 bytes, not characters: "é" is two.
    assert.strictEqual(estimateInputTokens({ ...request, system: ["é".repeat(1_500)] }), 1_100)
    // Tools add their schemas and the provider's tool-use preamble.
    const tools = { echo: { description: "e", inputSchema: { type: "object" as const } } }
    assert.isAbove(estimateInputTokens({ ...request, tools }), 1_099 + 600)
  })

  it("counts an image at 2,500 tokens and a PDF at 3,000 a page, whatever their bytes", () => {
    const base = {
      sessionID: "s",
      model: scriptedModelInfo(),
      system: [],
      tools: {},
      abort: new AbortController().signal
    }
    const pdf = Buffer.from(
      "%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>\n"
    ).toString("base64")
    const image = `data:image/png;base64,${"A".repeat(400_000)}`
    const tokens = (part: object) =>
      estimateInputTokens({ ...base, messages: [{ role: "user", content: [part] }] } as unknown as LLMRequest)
    const framing = tokens({ type: "text", text: "" })
    assert.isBelow(tokens({ type: "file", mediaType: "image/png", data: image }) - framing, 2_520)
    assert.isAtLeast(tokens({ type: "file", mediaType: "image/png", data: image }) - framing, 2_490)
    const pages = tokens({ type: "file", mediaType: "application/pdf", data: { type: "data", data: pdf } }) - framing
    assert.isAtLeast(pages, 5_990)
    assert.isBelow(pages, 6_010)
  })
})

/** Starts the named subagent through `ctx.subagent`, as the task tool does. */
const Delegate = Tool.define("delegate", {
  description: "Runs a subagent",
  parameters: z.object({ agent: z.string() }),
  mutates: false,
  execute: async ({ agent }, ctx) => {
    if (!ctx.subagent) throw new Error("no subagents here")
    const result = await ctx.subagent({ agent, description: "sub", prompt: "do it" })
    return { title: agent, output: result.text }
  }
})

const plugin = definePlugin({
  name: "budget-tools",
  setup: () => ({
    tools: [EchoTool, Delegate],
    agents: [{ name: "worker", mode: "subagent" as const }]
  })
})

// $100 per million tokens both ways: a call of 5,000 input and 20 output tokens costs $0.502.
const price = { input: 100, output: 100, cacheRead: 0, cacheWrite: 0 }
const usage = { input: 5_000, output: 20 }
let echo = 0

/** The input tokens a provider would count for a request: about four characters a token, as real tokenizers do. */
const realInput = (request: LLMRequest) =>
  Math.ceil(JSON.stringify([request.system, request.messages, request.tools]).length / 4)

/** What a call may spend under its hold: its priced input estimate and its whole output allowance. */
const holdOf = (request: LLMRequest) => {
  const call = callPrice(request)
  return call.inputTokens * call.inputPrice + (request.outputCap ?? call.maxOutput) * call.outputPrice
}

/**
 * The lead starts two workers at once, then answers; each worker calls echo for ever (a subagent that would
 * overspend), writing every output token it is allowed (the worst case for a budget). A function of the request, so
 * the order in which the parallel workers' calls arrive does not matter.
 */
const script = (request: LLMRequest) => {
  const text = JSON.stringify(request.messages)
  const input = realInput(request)
  if (text.includes("do it"))
    return [
      chunks.toolCall(`e${++echo}`, "echo", { text: `t${echo}` }),
      chunks.finish({ input, output: request.outputCap ?? 0 }, "tool-calls")
    ]
  if (!text.includes("tool-result"))
    return [
      chunks.toolCall("d1", "delegate", { agent: "worker" }),
      chunks.toolCall("d2", "delegate", { agent: "worker" }),
      chunks.finish({ input, output: 20 }, "tool-calls")
    ]
  return [chunks.text("all done"), chunks.finish({ input, output: 20 })]
}

/** The USD a finished call reported, at `price`. */
const reportedCost = (request: LLMRequest, output: number) => ((realInput(request) + output) * 100) / 1e6

const everyMessage = Effect.gen(function* () {
  const store = yield* SessionStore
  const all: Array<MessageWithParts> = []
  for (const session of yield* store.listSessions()) all.push(...(yield* store.messages(session.id)))
  return all
})

describe("a turn's budget, shared with its subagents", () => {
  it.live("parallel subagents writing every token they may stay within the cap (input estimate errs high)", () =>
    Effect.gen(function* () {
      const cap = 5
      const turn = yield* runTurn("go", { maxCost: cap })
      const requests = yield* (yield* ScriptedLLM).requests
      const calls = yield* (yield* ScriptedLLM).calls
      const info = turn.result.info as AssistantMessage
      assert.strictEqual(info.error?.name, "BudgetExhausted")
      if (info.error?.name !== "BudgetExhausted") return
      assert.strictEqual(info.error.limit, cap)
      // Every request went out with the output limit its hold pays for, in the call the SDK made.
      requests.forEach((request, i) => {
        assert.isDefined(request.outputCap)
        assert.strictEqual(calls[i]?.maxOutputTokens, request.outputCap)
        assert.isAtMost(request.outputCap ?? 0, 20_000)
        assert.isAtLeast(request.outputCap ?? 0, MIN_OUTPUT_TOKENS)
      })
      // Each call spent no more than it held: its real input is below the estimate, its output within its limit.
      const workers = requests.filter((r) => JSON.stringify(r.messages).includes("do it"))
      for (const request of workers) assert.isAtMost(reportedCost(request, request.outputCap ?? 0), holdOf(request))
      // Worst case outputs, and still within the cap: the ledger's total is what the calls reported.
      const spent = requests.reduce(
        (sum, r) => sum + reportedCost(r, JSON.stringify(r.messages).includes("do it") ? (r.outputCap ?? 0) : 20),
        0
      )
      assert.closeTo(info.error.spent, spent, 1e-9)
      assert.isAtMost(info.error.spent, cap)
      assert.isAbove(info.error.spent, cap - 0.3)
      // Some calls were cut short near the end; the workers' first calls ran at once, each with a full allowance.
      assert.isTrue(workers.some((r) => (r.outputCap ?? 0) < 20_000))
      // The turn's own messages carry its subagents' cost: what the session shows is what was spent.
      const shown = turn.messages.reduce((sum, m) => sum + (m.info.role === "assistant" ? m.info.cost : 0), 0)
      assert.closeTo(shown, info.error.spent, 1e-9)
      // Stopped cleanly: no call left pending or running anywhere; both workers' calls ended.
      const messages = yield* everyMessage
      for (const part of messages.flatMap((m) => m.parts))
        if (part.type === "tool") assert.oneOf(part.state.status, ["completed", "error"])
      const delegations = turn.messages
        .flatMap((m) => m.parts)
        .filter((p) => p.type === "tool" && p.tool === "delegate")
      assert.deepStrictEqual(
        delegations.map((p) => p.type === "tool" && p.state.status === "completed" && p.state.output),
        Array(2).fill("The worker subagent was stopped: the turn's cost budget ran out.")
      )
      const children = messages.filter((m) => m.info.sessionID !== turn.sessionID && m.info.role === "assistant")
      assert.isTrue(children.some((m) => m.info.role === "assistant" && m.info.error?.name === "BudgetExhausted"))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          steps: Array.from({ length: 40 }, () => script),
          // Real time between chunks: the two workers' calls interleave, as they would over HTTP.
          scripted: { model: { cost: price, limit: { output: 20_000 } }, chunkDelayMs: 2 }
        })
      )
    )
  )

  it.live("a call whose output would pass the old estimate is cut by its output limit, within the cap", () =>
    Effect.gen(function* () {
      const cap = 1
      const turn = yield* runTurn("write a long essay", { maxCost: cap })
      const [request] = yield* (yield* ScriptedLLM).requests
      const [call] = yield* (yield* ScriptedLLM).calls
      // $1 at $100 per million output tokens: under 10,000 tokens once the input is held, far below the model's 64,000.
      assert.isDefined(request?.outputCap)
      assert.strictEqual(call?.maxOutputTokens, request?.outputCap)
      assert.isBelow(request?.outputCap ?? 0, 10_000)
      assert.isAbove(request?.outputCap ?? 0, 9_000)
      const spent = turn.messages.reduce((sum, m) => sum + (m.info.role === "assistant" ? m.info.cost : 0), 0)
      assert.isAtMost(spent, cap)
      assert.isAbove(spent, 0.9)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: Array.from({ length: 3 }, () => (request: LLMRequest) => [
            chunks.text("An essay that would go on for 50,000 tokens…"),
            // The provider stops at the request's limit, as a real one does ("length").
            chunks.finish(
              { input: realInput(request), output: Math.min(50_000, request.outputCap ?? 50_000) },
              "length"
            )
          ]),
          scripted: { model: { cost: price, limit: { output: 64_000 } } }
        })
      )
    )
  )

  it.live("a nearly spent budget sends a smaller output limit, then refuses the next call", () =>
    Effect.gen(function* () {
      const cap = 2
      const turn = yield* runTurn("go", { maxCost: cap })
      const requests = yield* (yield* ScriptedLLM).requests
      const limits = (yield* (yield* ScriptedLLM).calls).map((call) => call.maxOutputTokens ?? 0)
      const info = turn.result.info as AssistantMessage
      assert.strictEqual(info.error?.name, "BudgetExhausted")
      assert.strictEqual(limits[0], 4_000)
      const last = limits.at(-1) ?? 0
      assert.isBelow(last, 4_000)
      assert.isAtLeast(last, MIN_OUTPUT_TOKENS)
      // Never larger again.
      assert.deepStrictEqual(
        [...limits].sort((x, y) => y - x),
        limits
      )
      const spent = requests.reduce((sum, r) => sum + reportedCost(r, 1_000), 0)
      assert.closeTo(info.error?.name === "BudgetExhausted" ? info.error.spent : 0, spent, 1e-9)
      assert.isAtMost(spent, cap)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          steps: Array.from({ length: 30 }, () => (request: LLMRequest) => [
            chunks.toolCall(`n${++echo}`, "echo", { text: `n${echo}` }),
            chunks.finish({ input: realInput(request), output: 1_000 }, "tool-calls")
          ]),
          scripted: { model: { cost: price, limit: { output: 4_000 } } }
        })
      )
    )
  )

  it.live("config budget.max_cost applies when the run sets none; the run's cap overrides it", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      const info = turn.result.info as AssistantMessage
      assert.strictEqual(info.error?.name, "BudgetExhausted")
      assert.strictEqual(info.error?.name === "BudgetExhausted" && info.error.limit, 0.4)
      // $0.4 covers no call of $0.502 after the first: the first is made (its estimate fits), the second refused.
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 1)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          config: { budget: { max_cost: 0.4 } },
          steps: Array.from({ length: 5 }, () => [
            chunks.toolCall(`x${++echo}`, "echo", { text: `u${echo}` }),
            chunks.finish(usage, "tool-calls")
          ]),
          scripted: { model: { cost: price, limit: { output: 50 } } }
        })
      )
    )
  )

  it.live("a model without a price under a budget is refused before the prompt is stored", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(runTurn("go", { maxCost: 1 }))
      assert.strictEqual(error._tag, "BudgetUnpriced")
      assert.include(error.message, "scripted/model has no price")
      assert.include(error.message, '"cost"')
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 0)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [[chunks.text("hi"), chunks.finish(usage)]],
          scripted: { model: { cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } } }
        })
      )
    )
  )

  it.live("--max-steps overrides the agent's and the config's cap for one turn", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go", { maxSteps: 2 })
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 2)
      assert.strictEqual(turn.result.info.role === "assistant" && turn.result.info.error?.name, "StepLimit")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [plugin],
          config: { max_steps: 50 },
          steps: Array.from({ length: 5 }, () => [
            chunks.toolCall(`y${++echo}`, "echo", { text: `v${echo}` }),
            chunks.finish(usage, "tool-calls")
          ])
        })
      )
    )
  )
})

describe("budget in an untrusted project's config", () => {
  const load = (global: object, project: object) => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-budget-")))
    const root = join(base, "repo")
    mkdirSync(root)
    mkdirSync(join(base, "global"))
    writeFileSync(join(base, "global", "lathe.json"), JSON.stringify(global))
    writeFileSync(join(root, "lathe.json"), JSON.stringify(project))
    const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
    return Effect.gen(function* () {
      return (yield* Config).info.budget
    }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(paths))))
  }

  it.effect("may lower a cap or add one, never raise one", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* load({ budget: { max_cost: 2 } }, { budget: { max_cost: 1 } }), { max_cost: 1 })
      assert.deepStrictEqual(yield* load({ budget: { max_cost: 2 } }, { budget: { max_cost: 50 } }), { max_cost: 2 })
      assert.deepStrictEqual(yield* load({}, { budget: { max_session_cost: 9 } }), { max_session_cost: 9 })
      assert.deepStrictEqual(
        yield* load({ budget: { max_cost: 2, max_session_cost: 10 } }, { budget: { max_session_cost: 20 } }),
        { max_cost: 2, max_session_cost: 10 }
      )
    })
  )
})

describe("a thinking budget inside a call's output cap", () => {
  const anthropic = (budgetTokens: number) => ({ anthropic: { thinking: { type: "enabled", budgetTokens } } })

  it("keeps the thinking budget while the answer has room, else shrinks it, else asks for no thinking", () => {
    // Anthropic's SDK sends max_tokens = output limit + thinking budget: together they stay within the cap.
    assert.deepStrictEqual(fitOutputCap(20_000, anthropic(16_000)), {
      maxOutputTokens: 4_000,
      providerOptions: anthropic(16_000)
    })
    assert.deepStrictEqual(fitOutputCap(6_000, anthropic(16_000)), {
      maxOutputTokens: 1_024,
      providerOptions: anthropic(4_976)
    })
    assert.deepStrictEqual(fitOutputCap(1_500, { anthropic: { ...anthropic(4_000).anthropic, cacheControl: 1 } }), {
      maxOutputTokens: 1_500,
      providerOptions: { anthropic: { cacheControl: 1 } }
    })
    const bedrock = fitOutputCap(3_000, { bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 4_000 } } })
    assert.deepStrictEqual(bedrock.providerOptions, {
      bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 1_976 } }
    })
    assert.strictEqual(bedrock.maxOutputTokens, 1_024)
    // Bedrock drops the output limit of a Nova model reasoning at "high": it is asked at "medium".
    const nova = fitOutputCap(3_000, { bedrock: { reasoningConfig: { type: "enabled", maxReasoningEffort: "high" } } })
    assert.deepStrictEqual(nova.providerOptions, {
      bedrock: { reasoningConfig: { type: "enabled", maxReasoningEffort: "medium" } }
    })
    // Providers whose limit counts reasoning already get the cap as it is.
    assert.deepStrictEqual(fitOutputCap(3_000, { openai: { reasoningEffort: "high" } }), {
      maxOutputTokens: 3_000,
      providerOptions: { openai: { reasoningEffort: "high" } }
    })
  })
})

describe("the session's title under a budget", () => {
  const isTitle = (request: LLMRequest) => request.system.some((text) => text.startsWith("Write a title"))

  it.live("draws on the turn's budget with a small output limit", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("fix the login redirect", { maxCost: 5, title: true })
      const scripted = yield* ScriptedLLM
      let requests = yield* scripted.requests
      for (let i = 0; i < 200 && !requests.some(isTitle); i++) {
        yield* Effect.sleep(5)
        requests = yield* scripted.requests
      }
      const title = requests.find(isTitle)
      assert.isDefined(title)
      assert.isAtMost(title?.outputCap ?? Number.POSITIVE_INFINITY, 2_048)
      assert.strictEqual(turn.result.info.role === "assistant" && turn.result.info.error, undefined)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: Array.from({ length: 2 }, () => (request: LLMRequest) => [
            chunks.text(isTitle(request) ? "Fix login redirect" : "Done."),
            chunks.finish({ input: realInput(request), output: 10 })
          ]),
          scripted: { model: { cost: price, limit: { output: 64_000 } } }
        })
      )
    )
  )
})

describe("native structured output on azure", () => {
  const schema = { type: "object" as const, properties: { ok: { type: "boolean" as const } }, required: ["ok"] }

  /** One step of `azure/gpt-5.4` through the real LLM layer against `server`, with the answer's schema. */
  const step = (baseURL: string, options: Record<string, unknown>) =>
    Effect.gen(function* () {
      const llm = yield* LLM
      const model = yield* llm.resolve("azure/gpt-5.4")
      yield* Stream.runDrain(
        llm.stream({
          sessionID: "s",
          model,
          system: ["sys"],
          messages: [{ role: "user", content: "hi" }],
          tools: { read: { description: "Read", inputSchema: { type: "object", properties: {} } } },
          abort: new AbortController().signal,
          answerSchema: schema
        })
      )
    }).pipe(
      Effect.provide(
        LLM.layerWith({ LATHE_DATA_DIR: tempRoot(), LATHE_MODELS_URL: "http://127.0.0.1:9/api.json" }).pipe(
          Layer.provide(
            Config.layerTest({
              provider: { azure: { baseURL, apiKey: "az-key-test", options, models: { "gpt-5.4": {} } } }
            })
          )
        )
      )
    )

  it.live("sends the schema as the Responses text.format, as OpenAI's does; not on deployment URLs", () =>
    Effect.gen(function* () {
      const responses = yield* Effect.acquireRelease(
        Effect.promise(() => startResponsesWire([{ text: '{"ok":true}' }])),
        (server) => Effect.promise(() => server.close())
      )
      yield* step(`${new URL(responses.url).origin}/openai`, {})
      const body = responses.requests[0]?.body as { text?: { format?: { type?: string; schema?: typeof schema } } }
      assert.strictEqual(body?.text?.format?.type, "json_schema")
      assert.deepStrictEqual(body?.text?.format?.schema?.properties, schema.properties)
      const chat = yield* Effect.acquireRelease(
        Effect.promise(() => startChatWire("openai", [{ text: '{"ok":true}' }])),
        (server) => Effect.promise(() => server.close())
      )
      yield* step(`${new URL(chat.url).origin}/openai`, { useDeploymentBasedUrls: true, apiVersion: "2024-10-21" })
      const sent = chat.requests[0]?.body as { messages?: unknown; response_format?: unknown } | undefined
      assert.isDefined(sent?.messages)
      assert.isUndefined(sent?.response_format)
    }).pipe(Effect.scoped)
  )
})
