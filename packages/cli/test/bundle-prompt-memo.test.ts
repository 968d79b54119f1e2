import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it, onTestFinished } from "vitest"

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
}

interface Outcome {
  /** Every prompt the model was given, in call order. */
  readonly prompts: Array<Array<unknown>>
  /** Whether the third call's prompt reused the second call's object for each message they share. */
  readonly reused: Array<boolean>
}

/**
 * A session's calls as the loop makes them: the history grows and every earlier message is the same object as before
 * (as `toModelMessages` hands them); then a prompt with two tool messages in a row (which the SDK merges in place),
 * twice; then a user message with a URL image (downloaded for a model that takes no URLs), twice.
 */
const ENTRY = `import { experimental_streamLanguageModelCall as call } from "ai"
const prompts = []
const model = {
  specificationVersion: "v4", provider: "test.chat", modelId: "m", supportedUrls: {},
  doGenerate: async () => { throw new Error("not used") },
  doStream: async (options) => {
    prompts.push(options.prompt)
    const stream = new ReadableStream({ start(c) {
      c.enqueue({ type: "stream-start", warnings: [] })
      c.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } })
      c.close()
    } })
    return { stream }
  }
}
let downloads = 0
const download = async (requests) => requests.map(() => ({ data: new Uint8Array([137, 80, 78, 71, ++downloads]), mediaType: "image/png" }))
const send = async (messages) => {
  const { stream } = await call({ model, instructions: [{ role: "system", content: "You are Lathe." }], messages, download })
  const reader = stream.getReader()
  while (!(await reader.read()).done);
}
const user = { role: "user", content: [{ type: "text", text: "read a.txt" }, { type: "text", text: "" }] }
const asked = { role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a.txt" } }] }
const result = { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "hello" } }] }
const answer = { role: "assistant", content: "It says hello." }
await send([user])
await send([user, asked, result])
await send([user, asked, result, answer])
const two = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c2", toolName: "read", input: {} }, { type: "tool-call", toolCallId: "c3", toolName: "read", input: {} }] }
const first = { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "read", output: { type: "text", value: "one" } }], providerOptions: { x: { a: 1 } } }
const second = { role: "tool", content: [{ type: "tool-result", toolCallId: "c3", toolName: "read", output: { type: "text", value: "two" } }], providerOptions: { x: { b: 2 } } }
await send([user, two, first, second])
await send([user, two, first, second])
const picture = { role: "user", content: [{ type: "text", text: "and this?" }, { type: "file", mediaType: "image/png", data: new URL("https://example.com/a.png") }] }
await send([user, asked, result, answer, picture])
await send([user, asked, result, answer, picture])
const reused = prompts[2].slice(1, 4).map((message, i) => message === prompts[1][i + 1])
const plain = (value) => JSON.parse(JSON.stringify(value, (_k, v) => (v instanceof Uint8Array ? Array.from(v) : v instanceof URL ? v.href : v)))
process.stdout.write(JSON.stringify({ prompts: plain(prompts), reused }))
`

// The CLI bundle converts each message of a prompt once (`scripts/prompt-memo.mjs`): a later call gets the same object
// for a message it had before, and every prompt is what the unpatched SDK makes.
describe("the CLI bundle's prompt conversion, once per message", () => {
  it("gives every call the prompt the SDK gives, reusing the converted messages of earlier calls", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    // Inside the package, so that Node resolves `ai` for the unbundled run.
    const dir = mkdtempSync(fileURLToPath(new URL("../.prompt-memo-", import.meta.url)))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const entry = join(dir, "entry.mjs")
    writeFileSync(entry, ENTRY)
    const outdir = join(dir, "out")
    const nodePaths = [fileURLToPath(new URL("../../../node_modules", import.meta.url))]
    await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), nodePaths, logLevel: "silent" })
    const run = (file: string) =>
      JSON.parse(execFileSync(process.execPath, [file], { encoding: "utf8", cwd: dir })) as Outcome
    const bundled = run(join(outdir, "entry.js"))
    const sdk = run(entry)
    assert.strictEqual(bundled.prompts.length, 7)
    assert.deepStrictEqual(bundled.prompts, sdk.prompts)
    assert.deepStrictEqual(bundled.reused, [true, true, true], "the bundle reuses what it converted")
    assert.deepStrictEqual(sdk.reused, [false, false, false], "the SDK converts every message again")
    // Two tool messages in a row: merged into one, the same way both times (nothing kept was changed in place).
    const merged = bundled.prompts[3]?.at(-1) as { role: string; content: Array<unknown> }
    assert.strictEqual(merged.role, "tool")
    assert.strictEqual(merged.content.length, 2)
    assert.deepStrictEqual(bundled.prompts[4], bundled.prompts[3])
    // A URL image the model cannot take is downloaded and sent as what was downloaded for that call.
    assert.include(JSON.stringify(bundled.prompts[5]), "[137,80,78,71,1]")
    assert.include(JSON.stringify(bundled.prompts[6]), "[137,80,78,71,2]")
  }, 60_000)
})
