import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeMemoryStore, SessionStore } from "@lathe/core"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { createLatheClient } from "@lathe/sdk"
import { serve } from "@lathe/server"
import { Layer } from "effect"
import { describe, expect, it } from "vitest"
import { clusterFront, startRunner } from "../src/index.js"
import { cleanups, freePort, freshDatabase } from "./helpers.js"

describe("a server in front of a runner (one process, shared in-memory store)", () => {
  it("sends a prompt to the runner and relays its events back", async () => {
    const url = freshDatabase()
    const root = mkdtempSync(join(tmpdir(), "lathe-cluster-"))
    const store = makeMemoryStore()
    const app = (directory: string) =>
      testLoopLayer({
        root: directory,
        storeLayer: Layer.succeed(SessionStore, store),
        steps: Array(4).fill([...chunks.text("Hello from a runner."), ...chunks.finish({ input: 5, output: 3 })])
      })
    const runner = await startRunner({ url, app, directory: root, port: await freePort(), shards: 16 })
    cleanups.push(() => runner.close())
    const server = await serve({ app, directory: root, port: 0, runner: clusterFront({ url, shards: 16 }) })
    cleanups.push(() => server.close())
    const client = createLatheClient({ baseUrl: server.url, token: server.token })
    const session = await client.sessions.create({})
    const events = client.events({ sessionID: session.id })
    await events.ready
    const seen: Array<string> = []
    const done = (async () => {
      for await (const event of events) {
        seen.push(event.type)
        if (event.type === "session.idle") break
      }
    })()
    await client.sessions.prompt(session.id, { text: "hi" })
    await done
    expect(seen).toContain("step.finished")
    const messages = await client.sessions.messages(session.id)
    expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant"])
  }, 60_000)
})
