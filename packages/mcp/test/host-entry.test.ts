import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"

// `@lathe/mcp/host` is what the CLI loads on every run: it must not load the MCP SDK (and the schemas the SDK builds
// at load), nor the OAuth module, when no server is configured. A child process records every module it resolves.
const require = createRequire(import.meta.url)
const tsx = join(dirname(require.resolve("tsx/package.json")), "dist", "esm", "index.mjs")

const script = `
import { registerHooks } from "node:module"
const seen = []
registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r } })
const host = await import("@lathe/mcp/host")
const plugin = host.createMcpPlugin({ env: {} })
const hooks = await plugin.setup({
  config: {}, root: process.cwd(), trusted: true, log: { info() {}, warn() {}, error() {}, debug() {} },
  tools: { set() {} }
})
process.stdout.write(JSON.stringify({
  hooks: Object.keys(hooks ?? {}),
  sdk: seen.filter((u) => u.includes("@modelcontextprotocol")),
  oauth: seen.filter((u) => u.includes("/oauth-store.") || u.includes("/oauth-provider."))
}))
`

describe("@lathe/mcp/host", () => {
  it("loads no MCP SDK module when no server is configured", () => {
    const out = execFileSync(
      process.execPath,
      ["--conditions=@lathe/source", "--import", tsx, "--input-type=module", "-e", script],
      {
        cwd: dirname(require.resolve("../package.json")),
        encoding: "utf8"
      }
    )
    const result = JSON.parse(out) as { hooks: Array<string>; sdk: Array<string>; oauth: Array<string> }
    expect(result.hooks).toEqual([])
    expect(result.sdk).toEqual([])
    // The OAuth token store (and its schemas) loads only when a remote server with OAuth connects.
    expect(result.oauth).toEqual([])
  })
})
