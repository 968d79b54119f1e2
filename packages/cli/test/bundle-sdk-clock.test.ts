import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it, onTestFinished } from "vitest"

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
}

interface Outcome {
  readonly text: string
  readonly stepTimeMs: unknown
  readonly perfHooks: boolean
}

// The CLI bundle's AI SDK times its calls on `process.hrtime` (sdkClockWithoutPerfHooks): reading
// `globalThis.performance` would load Node's whole perf_hooks as the first model request is made.
describe("the CLI bundle's AI SDK clock", () => {
  it("times a streamed call without loading perf_hooks", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-clock-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const entry = join(dir, "entry.mjs")
    writeFileSync(
      entry,
      `import { streamText } from "ai"
import { MockLanguageModelV4 } from "ai/test"
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 2 } }
const model = new MockLanguageModelV4({
  doStream: async () => ({
    stream: new ReadableStream({
      async start(c) {
        for (const part of [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }]) c.enqueue(part)
        await new Promise((resolve) => setTimeout(resolve, 20))
        for (const part of [{ type: "text-delta", id: "t", delta: "hi" }, { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }]) c.enqueue(part)
        c.close()
      }
    })
  })
})
let stepTimeMs
const result = streamText({ model, prompt: "hello" })
for await (const part of result.fullStream) if (part.type === "finish-step") stepTimeMs = part.performance?.stepTimeMs
const text = await result.text
const perfHooks = process.moduleLoadList.some((name) => name.includes("internal/perf/performance"))
process.stdout.write(JSON.stringify({ text, stepTimeMs, perfHooks }))
`
    )
    const outdir = join(dir, "out")
    const nodePaths = [fileURLToPath(new URL("../../../node_modules", import.meta.url))]
    await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), nodePaths, logLevel: "silent" })
    const out = JSON.parse(execFileSync(process.execPath, [join(outdir, "entry.js")], { encoding: "utf8" })) as Outcome
    assert.strictEqual(out.text, "hi")
    assert.isFalse(out.perfHooks, "the call loaded perf_hooks")
    // The step waited 20 ms for its text: the clock's differences are milliseconds.
    assert.isNumber(out.stepTimeMs)
    assert.isAtLeast(out.stepTimeMs as number, 15)
    assert.isBelow(out.stepTimeMs as number, 60_000)
  }, 60_000)
})
