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
  readonly streamsAtLoad: boolean
  readonly events: Array<{ event?: string; data: string }>
  readonly sse: string
  readonly kinds: Array<boolean>
}

// The CLI bundle defines the AI SDK's two stream classes without reading `TransformStream` at load, so that Node's web
// streams load when the first stream is made (after the first model request), not while `lathe run` starts.
describe("the CLI bundle's web streams on first use", () => {
  it("loads no web streams with the AI SDK, and its stream classes work as real TransformStreams", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-streams-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const entry = join(dir, "entry.mjs")
    writeFileSync(
      entry,
      `import { JsonToSseTransformStream } from "ai"
import { EventSourceParserStream } from "eventsource-parser/stream"
const streams = () => process.moduleLoadList.some((name) => name.includes("internal/webstreams"))
const streamsAtLoad = streams()
const text = "event: delta\\ndata: {\\"a\\":1}\\n\\ndata: [DONE]\\n\\n"
const parser = new EventSourceParserStream()
const events = []
const reader = new Blob([text]).stream().pipeThrough(new TextDecoderStream()).pipeThrough(parser).getReader()
for (let next = await reader.read(); !next.done; next = await reader.read()) events.push({ event: next.value.event, data: next.value.data })
const sse = new JsonToSseTransformStream()
const chunks = []
const out = new ReadableStream({ start(c) { c.enqueue({ b: 2 }); c.close() } }).pipeThrough(sse).getReader()
for (let next = await out.read(); !next.done; next = await out.read()) chunks.push(next.value)
const kinds = [parser instanceof TransformStream, parser instanceof EventSourceParserStream, sse instanceof TransformStream,
  sse instanceof JsonToSseTransformStream, new EventSourceParserStream() !== parser]
process.stdout.write(JSON.stringify({ streamsAtLoad, events, sse: chunks.join(""), kinds }))
`
    )
    const outdir = join(dir, "out")
    const nodePaths = [fileURLToPath(new URL("../../../node_modules", import.meta.url))]
    await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), nodePaths, logLevel: "silent" })
    const out = JSON.parse(execFileSync(process.execPath, [join(outdir, "entry.js")], { encoding: "utf8" })) as Outcome
    assert.isFalse(out.streamsAtLoad, "loading the AI SDK loads no web streams")
    assert.deepStrictEqual(out.events, [{ event: "delta", data: '{"a":1}' }, { data: "[DONE]" }])
    assert.strictEqual(out.sse, 'data: {"b":2}\n\ndata: [DONE]\n\n')
    assert.deepStrictEqual(out.kinds, [true, true, true, true, true])
  }, 60_000)
})
