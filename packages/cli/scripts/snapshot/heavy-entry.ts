// Step 1 of the startup-snapshot experiment: evaluates the modules the first model request needs (effect, zod,
// ai, the OpenAI-compatible provider, Lathe's core with its loop), parks them on `globalThis`, and then uses them
// trivially. Bundled to one CJS file, the same script runs evaluated normally (`node heavy.cjs`) or as a snapshot
// entry (`node --build-snapshot heavy.cjs`): then the use runs as the snapshot's main function, after restore.
// Not part of the CLI.
import { startupSnapshot } from "node:v8"
import * as openaiCompatible from "@ai-sdk/openai-compatible"
import * as core from "@lathe/core"
import * as ai from "ai"
import * as effect from "effect"
import * as zod from "zod"

/** The evaluated modules, reachable from the main function after a snapshot restore. */
const heavy = { effect, zod, ai, openaiCompatible, core }
;(globalThis as { __latheHeavy?: typeof heavy }).__latheHeavy = heavy

/** Runs one Effect, parses with zod and builds a provider's model; throws if any of them is not there. */
const use = (): void => {
  const start = performance.now()
  const loaded = (globalThis as { __latheHeavy?: typeof heavy }).__latheHeavy
  if (loaded === undefined) throw new Error("the heavy modules are not on globalThis")
  const { Effect } = loaded.effect
  const n = Effect.runSync(Effect.succeed(20).pipe(Effect.map((x) => x + 1)))
  const parsed = loaded.zod.z.object({ a: loaded.zod.z.number() }).parse({ a: n })
  const model = loaded.openaiCompatible
    .createOpenAICompatible({ name: "x", baseURL: "http://127.0.0.1:1" })
    .chatModel("m")
  if (parsed.a !== 21 || typeof model.doStream !== "function" || typeof loaded.core.SessionPrompt !== "function")
    throw new Error("the heavy modules did not work")
  if (process.env.LATHE_SNAP_PRINT === "1")
    process.stdout.write(`ok ${parsed.a}: use from ${start.toFixed(1)} to ${performance.now().toFixed(1)} ms\n`)
}

if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(use)
else use()
