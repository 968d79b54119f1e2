/**
 * 100,000 text deltas in one step: throughput and peak memory of the Processor writing parts to the store,
 * against the bare model stream (ai's `streamText` over a scripted model, drained) in the same run.
 *
 *   npx tsx --conditions=@lathe/source bench/deltas.ts
 */

import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { createSession, LLM, SessionPrompt, SessionStore, SqliteSessionStore } from "@lathe/core"
import { chunks, scriptedModelInfo, testLoopLayer } from "@lathe/core/testing"
import { Effect, Stream } from "effect"

const DELTAS = 100_000
const step: Array<LanguageModelV4StreamPart> = [
  { type: "text-start", id: "t" },
  ...Array.from(
    { length: DELTAS },
    (_, i): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t", delta: `w${i % 10} ` })
  ),
  { type: "text-end", id: "t" },
  ...chunks.finish({ input: 10, output: DELTAS })
]

const rssPeak = () => {
  let peak = process.memoryUsage().rss
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 5)
  return () => {
    clearInterval(timer)
    return Math.max(peak, process.memoryUsage().rss) / 1024 / 1024
  }
}

const measure = async (name: string, program: Effect.Effect<unknown, unknown, never>, baseMs?: number) => {
  global.gc?.()
  const stop = rssPeak()
  const start = performance.now()
  await Effect.runPromise(program)
  const ms = performance.now() - start
  const peak = stop()
  const rate = (DELTAS / ms) * 1000
  console.log(
    `${name}: ${ms.toFixed(0)} ms, ${Math.round(rate).toLocaleString("en-US")} deltas/s, peak RSS ${peak.toFixed(0)} MiB` +
      (baseMs ? ` (${(ms / baseMs).toFixed(2)}× the bare stream)` : "")
  )
  return ms
}

const root = mkdtempSync(join(tmpdir(), "lathe-deltas-"))
const turn = Effect.gen(function* () {
  const session = yield* createSession()
  const prompt = yield* SessionPrompt
  yield* prompt.prompt({ sessionID: session.id, parts: [{ type: "text", text: "go" }], title: false })
  const store = yield* SessionStore
  const messages = yield* store.messages(session.id)
  const text = messages.at(-1)?.parts.find((p) => p.type === "text")
  if (text?.type !== "text" || text.text.length < DELTAS * 3) throw new Error("the text did not arrive whole")
})

const bare = Effect.gen(function* () {
  const llm = yield* LLM
  yield* llm
    .stream({
      sessionID: "s",
      model: scriptedModelInfo(),
      system: [],
      messages: [{ role: "user", content: "go" }],
      tools: {},
      abort: new AbortController().signal
    })
    .pipe(Stream.runDrain)
}).pipe(Effect.provide(testLoopLayer({ root, steps: [step] })))

const base = await measure("bare model stream (baseline)", bare)
await measure("Processor + memory store", turn.pipe(Effect.provide(testLoopLayer({ root, steps: [step] }))), base)
await measure(
  "Processor + SQLite store",
  turn.pipe(
    Effect.provide(
      testLoopLayer({ root, steps: [step], storeLayer: SqliteSessionStore.layerFile(join(root, "bench.db")) })
    )
  ),
  base
)
