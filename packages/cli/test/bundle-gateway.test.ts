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

// `ai` imports the AI Gateway provider at load; the CLI bundle swaps it for a stand-in that costs nothing to load.
describe("the CLI bundle's AI Gateway stand-in", () => {
  it("keeps @ai-sdk/gateway and @vercel/oidc out, and says so when something reaches for the gateway", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-gateway-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const entry = join(dir, "entry.mjs")
    writeFileSync(
      entry,
      `import { APICallError, gateway } from "ai"
let message
try { gateway("openai/gpt-5") } catch (error) { message = error.message }
const retryable = new APICallError({ message: "x", url: "u", requestBodyValues: {}, statusCode: 500 }).isRetryable
process.stdout.write(JSON.stringify({ message, retryable }))
`
    )
    const outdir = join(dir, "out")
    // The entry lives in a temp dir: `ai` resolves from the workspace's node_modules.
    const nodePaths = [fileURLToPath(new URL("../../../node_modules", import.meta.url))]
    const result = await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), nodePaths, logLevel: "silent" })
    const inputs = Object.keys(result.metafile?.inputs ?? {})
    assert.isTrue(
      inputs.some((input) => input.includes("node_modules/ai/")),
      "ai is bundled"
    )
    assert.deepStrictEqual(
      inputs.filter((input) => input.includes("@ai-sdk/gateway/") || input.includes("@vercel/oidc")),
      []
    )
    const out = JSON.parse(execFileSync(process.execPath, [join(outdir, "entry.js")], { encoding: "utf8" }))
    assert.deepStrictEqual(out, {
      message: "The AI Gateway provider is not part of the bundled Lathe CLI: configure a provider in lathe.json.",
      retryable: true
    })
  }, 60_000)
})
