import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeMemoryStore, SessionStore } from "@lathe/core"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { clusterStatus, pgLayer, startRunner } from "../src/index.js"
import { cleanups, freePort, freshDatabase } from "./helpers.js"

const status = (url: string) => Effect.runPromise(clusterStatus.pipe(Effect.provide(pgLayer(url, 1))))

describe("cluster status", () => {
  it("is empty on a database no runner joined", async () => {
    expect(await status(freshDatabase())).toEqual({ runners: [], unownedShardsWithWork: 0, waitingSessions: 0 })
  })

  it("shows a runner, healthy, holding every shard; none once it left", async () => {
    const url = freshDatabase()
    const root = mkdtempSync(join(tmpdir(), "lathe-status-"))
    const store = makeMemoryStore()
    const app = (directory: string) =>
      testLoopLayer({
        root: directory,
        storeLayer: Layer.succeed(SessionStore, store),
        steps: [[...chunks.text("hi"), ...chunks.finish({ input: 1, output: 1 })]]
      })
    const port = await freePort()
    const runner = await startRunner({ url, app, directory: root, port, shards: 8, healthPort: 0 })
    expect(runner.healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/health$/)
    const health = await fetch(runner.healthUrl ?? "")
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ ok: true, address: `127.0.0.1:${port}` })
    let closed = false
    cleanups.push(() => (closed ? Promise.resolve() : runner.close()))
    const deadline = Date.now() + 15_000
    let seen = await status(url)
    while ((seen.runners[0]?.shards ?? 0) < 8 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      seen = await status(url)
    }
    expect(seen.runners).toHaveLength(1)
    expect(seen.runners[0], JSON.stringify(seen)).toMatchObject({
      address: `127.0.0.1:${port}`,
      healthy: true,
      shards: 8,
      activeSessions: 0
    })
    await runner.close()
    closed = true
    await expect(fetch(runner.healthUrl ?? "")).rejects.toThrow()
    const after = await status(url)
    expect(after.runners.reduce((sum, r) => sum + r.shards, 0)).toBe(0)
  }, 30_000)
})
