/**
 * The guard's session (`bench/loop-session.ts`) done by the libraries Lathe is built on and nothing of Lathe's own:
 * an Effect program whose model is a `Context.Service` with its Layer, the AI SDK's `streamText` over
 * `@ai-sdk/openai-compatible` (`LATHE_BASE_URL`, `LATHE_MODEL`), a `read` tool with a zod schema, and each step's
 * messages kept in a `node:sqlite` file under `LATHE_DATA_DIR`. It answers "what does the stack alone cost before the
 * first request?", the floor under Lathe that no trim of Lathe's own code moves (docs/loop-performance.md).
 *
 * `bench/startup-faults.ts --stack` bundles it as the CLI's run build is bundled (one minified CommonJS file with the
 * esbuild plugins of `packages/cli/scripts/bundle.mjs`, loaded through `loadWithCodeCache` with a V8 code cache taken
 * after the run: `bench/stack-launch.ts`) and runs it beside the floor agent and Lathe. Takes the CLI's arguments and
 * uses only the last, the prompt: `node stack-launch.js run --format json --yes "read the files"`.
 */
import { mkdirSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { type LanguageModel, stepCountIs, streamText, tool } from "ai"
import { Context, Effect, Layer } from "effect"
import { z } from "zod"

class Model extends Context.Service<Model, { readonly model: LanguageModel }>()("bench/stack-agent/Model") {}

const ModelLive = Layer.sync(Model, () => ({
  model: createOpenAICompatible({ name: "bench", baseURL: process.env.LATHE_BASE_URL ?? "" }).chatModel(
    process.env.LATHE_MODEL ?? "bench"
  )
}))

class Store extends Context.Service<Store, { readonly keep: (step: number, body: string) => void }>()(
  "bench/stack-agent/Store"
) {}

const StoreLive = Layer.sync(Store, () => {
  const dir = process.env.LATHE_DATA_DIR ?? "."
  mkdirSync(dir, { recursive: true })
  const db = new DatabaseSync(join(dir, "stack-agent.db"))
  db.exec("create table if not exists step (n integer primary key, body text not null)")
  const insert = db.prepare("insert or replace into step (n, body) values (?, ?)")
  return { keep: (step, body) => void insert.run(step, body) }
})

const read = tool({
  description: "Read a file",
  inputSchema: z.object({ filePath: z.string() }),
  execute: ({ filePath }) => readFile(filePath, "utf8")
})

const program = Effect.gen(function* () {
  const { model } = yield* Model
  const store = yield* Store
  const prompt = process.argv.at(-1) ?? ""
  let step = 0
  const text = yield* Effect.tryPromise(async () => {
    const result = streamText({
      model,
      prompt,
      tools: { read },
      stopWhen: stepCountIs(1_000),
      onStepFinish: (finished) => store.keep(step++, JSON.stringify(finished.response.messages))
    })
    let answer = ""
    for await (const part of result.fullStream) if (part.type === "text-delta") answer += part.text
    return answer
  })
  process.stdout.write(`${text}\n`)
})

/** Runs the session; `bench/stack-launch.ts` calls it after loading this file's bundle with a code cache. */
export const main = (): Promise<void> =>
  Effect.runPromise(program.pipe(Effect.provide(Layer.mergeAll(ModelLive, StoreLive))))
