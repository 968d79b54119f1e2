/**
 * Prompt-cache cost: a scripted 30-step session (29 `read` calls, each returning ~800 tokens, then an answer) on
 * Claude Sonnet 4.5, run twice through the real Anthropic SDK against a local server that speaks the Messages API —
 * once with Lathe's cache breakpoints, once without — and billed at the catalogue's prices. The server plays
 * Anthropic's prompt cache: a request's prefix up to a `cache_control` block is read from the cache when an earlier
 * request wrote that same prefix, the rest up to its last breakpoint is written, the remainder is plain input.
 * Tokens are estimated at 4 characters each (the figures are about the ratio, not the exact count).
 *
 *   npx tsx --conditions=@lathe/source bench/prompt-cache-cost.ts
 */
import { createHash } from "node:crypto"
import { createAnthropic } from "@ai-sdk/anthropic"
import { Config, LLM, type LLMRequest, type ModelInfo, streamWithModel, tokensFromUsage } from "@lathe/core"
import { startWireServer, type WireReply } from "@lathe/core/testing"
import type { Tokens } from "@lathe/plugin/schema"
import type { ModelMessage } from "ai"
import { Effect, Layer, Stream } from "effect"

const STEPS = 30
/** How many blocks before a breakpoint Anthropic looks for an earlier cache entry. */
const LOOKBACK = 20
const MODEL = "claude-sonnet-4-5"

/** Characters per token, for the estimate. */
const tokens = (text: string) => Math.ceil(text.length / 4)

const filler = (label: string, chars: number) => `${label}: ${"lorem ipsum dolor sit amet ".repeat(chars / 27)}`

/** A system prompt (~2,500 tokens, two blocks like Lathe's) and eight tools (~500 tokens each). */
const system = [filler("You are Lathe", 6_000), filler("Instructions from AGENTS.md", 4_000)]
const tools: LLMRequest["tools"] = Object.fromEntries(
  ["read", "write", "edit", "bash", "glob", "grep", "list", "webfetch"].map((name) => [
    name,
    {
      description: filler(`${name} tool`, 1_900),
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
    }
  ])
)

/** Anthropic's prompt cache, as the server sees it: the prefixes written so far, by hash. */
const cacheSimulator = () => {
  const written = new Set<string>()
  return (body: unknown, caching: boolean): WireReply["usage"] => {
    const {
      system: sys,
      tools: defs,
      messages
    } = body as {
      system?: Array<Record<string, unknown>>
      tools?: Array<Record<string, unknown>>
      messages: Array<{ content: Array<Record<string, unknown>> | string }>
    }
    // The prompt in Anthropic's cache order: tools, system, messages; one entry per block.
    const blocks: Array<Record<string, unknown>> = [
      ...(defs ?? []),
      ...(sys ?? []),
      ...messages.flatMap((m) => (typeof m.content === "string" ? [{ text: m.content }] : m.content))
    ]
    // Every block boundary's prefix (hash, tokens so far); breakpoints are the boundaries of marked blocks.
    const hash = createHash("sha256")
    let total = 0
    const boundaries: Array<{ key: string; at: number; mark: boolean }> = []
    for (const block of blocks) {
      const { cache_control: mark, ...content } = block
      const text = JSON.stringify(content)
      hash.update(text)
      total += tokens(text)
      boundaries.push({ key: hash.copy().digest("hex"), at: total, mark: mark !== undefined && caching })
    }
    // A breakpoint reads the longest prefix written before, looking back at most 20 blocks from it (Anthropic's rule).
    let cacheRead = 0
    boundaries.forEach((b, i) => {
      if (!b.mark) return
      for (let j = i; j >= Math.max(0, i - LOOKBACK); j--) {
        const candidate = boundaries[j]
        if (candidate && written.has(candidate.key)) {
          cacheRead = Math.max(cacheRead, candidate.at)
          break
        }
      }
    })
    const marked = boundaries.filter((b) => b.mark)
    const last = marked.at(-1)?.at ?? 0
    const cacheWrite = Math.max(0, last - cacheRead)
    for (const b of marked) written.add(b.key)
    return { input: total - cacheRead - cacheWrite, output: 60, cacheRead, cacheWrite }
  }
}

/** Runs the session once; returns the summed tokens of its 30 steps. */
const session = async (model: ModelInfo, caching: boolean): Promise<Tokens> => {
  const usage = cacheSimulator()
  const server = await startWireServer("anthropic", (request, index) => ({
    ...(index < STEPS - 1 ? { tool: { name: "read", input: { path: `src/file-${index}.ts` } } } : { text: "Done." }),
    usage: usage(request.body, caching)
  }))
  const sdk = createAnthropic({ apiKey: "sk-bench", baseURL: server.url })(MODEL)
  const messages: Array<ModelMessage> = [{ role: "user", content: "Read the source files one by one and summarise." }]
  const sum: Tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
  try {
    for (let step = 0; step < STEPS; step++) {
      const request: LLMRequest = {
        sessionID: "ses_bench",
        model,
        system,
        messages: [...messages],
        tools,
        abort: new AbortController().signal
      }
      const options = caching ? { family: "anthropic" as const } : {}
      const events = await Effect.runPromise(Stream.runCollect(streamWithModel(sdk, request, options)))
      for (const event of events) {
        if (event.type === "finish-step") {
          const t = tokensFromUsage(event.usage)
          sum.input += t.input
          sum.output += t.output
          sum.cache.read += t.cache.read
          sum.cache.write += t.cache.write
        }
        if (event.type === "tool-call") {
          const id = event.toolCallId
          messages.push({
            role: "assistant",
            content: [{ type: "tool-call", toolCallId: id, toolName: event.toolName, input: event.input }]
          })
          messages.push({
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: id,
                toolName: event.toolName,
                output: { type: "text", value: filler(`contents of file ${step}`, 3_200) }
              }
            ]
          })
        }
      }
    }
  } finally {
    await server.close()
  }
  return sum
}

const main = async () => {
  // The catalogue's prices for the model, through the same resolve a run uses.
  const model = await Effect.runPromise(
    Effect.flatMap(LLM, (llm) => llm.resolve(`anthropic/${MODEL}`)).pipe(
      Effect.provide(
        LLM.layerWith({ ANTHROPIC_API_KEY: "sk-bench" }).pipe(
          Layer.provide(Config.layerTest({ model: `anthropic/${MODEL}` }))
        )
      )
    )
  )
  const inputCost = (t: Tokens) =>
    (t.input * model.cost.input + t.cache.read * model.cost.cacheRead + t.cache.write * model.cost.cacheWrite) / 1e6
  const plain = await session(model, false)
  const cached = await session(model, true)
  const n = (v: number) => v.toLocaleString("en-US")
  const usd = (v: number) => `$${v.toFixed(4)}`
  console.log(
    `${STEPS}-step session on ${model.name} (input $${model.cost.input}, cache read $${model.cost.cacheRead}, ` +
      `cache write $${model.cost.cacheWrite} per million tokens)`
  )
  console.log(`without caching: input ${n(plain.input)} tokens → ${usd(inputCost(plain))}`)
  console.log(
    `with caching:    input ${n(cached.input)}, cache read ${n(cached.cache.read)}, cache write ` +
      `${n(cached.cache.write)} tokens → ${usd(inputCost(cached))}`
  )
  console.log(`caching bills ${((inputCost(cached) / inputCost(plain)) * 100).toFixed(1)}% of the uncached input cost`)
}

await main()
