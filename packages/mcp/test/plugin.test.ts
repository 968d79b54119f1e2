import { describe, expect, it } from "@effect/vitest"
import type { PluginConfig } from "@lathe/plugin"
import { setUpPlugin } from "@lathe/plugin/testing"
import { createMcpPlugin, type McpPluginOptions } from "../src/plugin.js"
import { everythingBin, tempDir } from "./helpers.js"

/** Sets the plugin up with `mcp` as config (the kit's harness), runs `body`, and disposes of it. */
const withPlugin = async <A>(
  mcp: NonNullable<PluginConfig["mcp"]>,
  options: McpPluginOptions,
  body: (tools: () => ReadonlyArray<string>) => Promise<A>
): Promise<A> => {
  const plugin = await setUpPlugin(createMcpPlugin(options), { root: tempDir(), config: { mcp } })
  try {
    return await body(() => plugin.context.contributed.tools.map((t) => t.id))
  } finally {
    await plugin.hooks.dispose?.()
  }
}

// The untrusted repository's servers (config loader and plugin together) are tested with the host, in the CLI's
// mcp-loop tests.
describe("the MCP plugin", () => {
  it("contributes the tools of the servers that connected (wait: true) and goes on without the failed one", async () => {
    const ids = await withPlugin(
      {
        everything: { type: "local", command: [process.execPath, everythingBin, "stdio"], wait: true },
        broken: { type: "local", command: [process.execPath, "-e", "process.exit(1)"], timeout: 3000 },
        off: { type: "local", command: [process.execPath, everythingBin, "stdio"], enabled: false }
      },
      {},
      async (tools) => tools()
    )
    expect(ids).toContain("everything_echo")
    expect(ids.some((id) => id.startsWith("broken_") || id.startsWith("off_"))).toBe(false)
  })

  it("with wait: false setup returns before the servers connect, and their tools appear once they have", async () => {
    const seen = await withPlugin(
      { everything: { type: "local", command: [process.execPath, everythingBin, "stdio"] } },
      { wait: false },
      async (tools) => {
        const atStart = tools()
        const deadline = Date.now() + 15_000
        while (!tools().includes("everything_echo") && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 50))
        return { atStart, later: tools() }
      }
    )
    // The server (a node process) cannot have connected before setup returned.
    expect(seen.atStart.some((id) => id.startsWith("everything_"))).toBe(false)
    expect(seen.later).toContain("everything_echo")
    expect(seen.later).toContain("everything_get-sum")
  })

  it("sets up nothing when every server is disabled: no hooks, so the SDK is never loaded", async () => {
    const plugin = await setUpPlugin(createMcpPlugin({}), {
      root: tempDir(),
      config: { mcp: { off: { type: "local", command: [process.execPath, everythingBin, "stdio"], enabled: false } } }
    })
    expect(Object.keys(plugin.hooks)).toEqual([])
    expect(plugin.context.contributed.tools).toEqual([])
  })
})
