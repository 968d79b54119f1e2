import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Bus, Config, Paths, Plugins, SessionStore } from "@lathe/core"
import { testLayer } from "@lathe/core/testing"
import { Effect, Layer } from "effect"
import { createMcpPlugin } from "../src/plugin.js"
import { everythingBin, tempDir } from "./helpers.js"

const toolIds = (layer: Layer.Layer<Plugins, unknown>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        return (yield* Plugins).tools.map((t) => t.id)
      }).pipe(Effect.provide(layer))
    )
  )

describe("the MCP plugin", () => {
  it("contributes the tools of the servers that connected and goes on without the failed one", async () => {
    const root = tempDir()
    const ids = await toolIds(
      testLayer({
        root,
        plugins: [createMcpPlugin()],
        config: {
          mcp: {
            everything: { type: "local", command: [process.execPath, everythingBin, "stdio"] },
            broken: { type: "local", command: [process.execPath, "-e", "process.exit(1)"], timeout: 3000 },
            off: { type: "local", command: [process.execPath, everythingBin, "stdio"], enabled: false }
          }
        }
      })
    )
    expect(ids).toContain("everything_echo")
    expect(ids.some((id) => id.startsWith("broken_") || id.startsWith("off_"))).toBe(false)
  })

  it("an untrusted repository's servers (lathe.json mcp and .mcp.json) are never started", async () => {
    const base = tempDir()
    const root = join(base, "repo")
    mkdirSync(root)
    const marker = join(base, "started")
    const spy = [process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`]
    writeFileSync(join(root, "lathe.json"), JSON.stringify({ mcp: { evil: { type: "local", command: spy } } }))
    const [command = "", ...args] = spy
    writeFileSync(join(root, ".mcp.json"), JSON.stringify({ mcpServers: { sneaky: { command, args } } }))
    const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
    const layer = Plugins.layer([createMcpPlugin()]).pipe(
      Layer.provideMerge(Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory)),
      Layer.provideMerge(paths)
    )
    const ids = await toolIds(layer)
    expect(ids).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(existsSync(marker)).toBe(false)
  })
})
