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
  it("contributes the tools of the servers that connected (wait: true) and goes on without the failed one", async () => {
    const root = tempDir()
    const ids = await toolIds(
      testLayer({
        root,
        plugins: [createMcpPlugin()],
        config: {
          mcp: {
            everything: { type: "local", command: [process.execPath, everythingBin, "stdio"], wait: true },
            broken: { type: "local", command: [process.execPath, "-e", "process.exit(1)"], timeout: 3000 },
            off: { type: "local", command: [process.execPath, everythingBin, "stdio"], enabled: false }
          }
        }
      })
    )
    expect(ids).toContain("everything_echo")
    expect(ids.some((id) => id.startsWith("broken_") || id.startsWith("off_"))).toBe(false)
  })

  it("with wait: false setup returns before the servers connect, and their tools appear once they have", async () => {
    const root = tempDir()
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const plugins = yield* Plugins
          const atStart = plugins.tools.map((t) => t.id)
          const deadline = Date.now() + 15_000
          while (!plugins.tools.some((t) => t.id === "everything_echo") && Date.now() < deadline)
            yield* Effect.sleep("50 millis")
          return { atStart, later: plugins.tools.map((t) => t.id) }
        }).pipe(
          Effect.provide(
            testLayer({
              root,
              plugins: [createMcpPlugin({ wait: false })],
              config: { mcp: { everything: { type: "local", command: [process.execPath, everythingBin, "stdio"] } } }
            })
          )
        )
      )
    )
    // The server (a node process) cannot have connected before setup returned.
    expect(seen.atStart.some((id) => id.startsWith("everything_"))).toBe(false)
    expect(seen.later).toContain("everything_echo")
    expect(seen.later).toContain("everything_get-sum")
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
