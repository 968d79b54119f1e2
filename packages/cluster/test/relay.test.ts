import type { LatheEvent } from "@lathe/core/schema"
import type { EventPosition } from "@lathe/server"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { pgLayer } from "../src/cluster-layer.js"
import { listen, makePublisher } from "../src/relay.js"
import { cleanups, freshDatabase } from "./helpers.js"

const idle = (sessionID: string): LatheEvent => ({ type: "session.idle", sessionID })

/** A runtime with its own pool on `url`, and a scope closed after the test. */
const member = (url: string) => {
  const runtime = ManagedRuntime.make(Layer.fresh(pgLayer(url, 3)))
  const scope = Scope.makeUnsafe()
  cleanups.push(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
  })
  return { runtime, scope }
}

/** A server-side listener on `url`, ready (LISTEN confirmed); the session ids of the idle events it receives. */
const listening = async (url: string, positions: Array<EventPosition | undefined> = []): Promise<Array<string>> => {
  const seen: Array<string> = []
  const server = member(url)
  let ready: () => void = () => {}
  const confirmed = new Promise<void>((resolve) => {
    ready = resolve
  })
  await server.runtime.runPromise(
    listen(
      (event, position) => {
        positions.push(position)
        if (event.type === "session.idle") seen.push(event.sessionID)
      },
      () => ready()
    ).pipe(Scope.provide(server.scope))
  )
  await confirmed
  return seen
}

describe("the event relay", () => {
  it("delivers two publishers' events to a listener, each publisher's in order", async () => {
    const url = freshDatabase()
    const seen = await listening(url)
    const a = member(url)
    const b = member(url)
    const pa = await a.runtime.runPromise(makePublisher({ linger: 1 }).pipe(Scope.provide(a.scope)))
    const pb = await b.runtime.runPromise(makePublisher({ linger: 1 }).pipe(Scope.provide(b.scope)))
    for (let i = 0; i < 300; i++) {
      pa.publish(idle(`a${i}`))
      pb.publish(idle(`b${i}`))
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await Effect.runPromise(pa.flush)
    await Effect.runPromise(pb.flush)
    const deadline = Date.now() + 10_000
    while (seen.length < 600 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen.length).toBe(600)
    expect(seen.filter((id) => id.startsWith("a"))).toEqual(Array.from({ length: 300 }, (_, i) => `a${i}`))
    expect(seen.filter((id) => id.startsWith("b"))).toEqual(Array.from({ length: 300 }, (_, i) => `b${i}`))
  }, 30_000)

  it("writes what is queued when the publisher's scope closes (a runner leaving)", async () => {
    const url = freshDatabase()
    const seen = await listening(url)
    const runtime = ManagedRuntime.make(Layer.fresh(pgLayer(url, 2)))
    const scope = Scope.makeUnsafe()
    // A long linger: nothing would be written before the scope closes.
    const publisher = await runtime.runPromise(makePublisher({ linger: "1 minute" }).pipe(Scope.provide(scope)))
    publisher.publish(idle("last-words"))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
    const deadline = Date.now() + 10_000
    while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual(["last-words"])
  }, 30_000)

  it("numbers each top-level session's events in Postgres: subagents share the count, a second runner goes on", async () => {
    const url = freshDatabase()
    const positions: Array<EventPosition | undefined> = []
    const seen = await listening(url, positions)
    const parent: LatheEvent = {
      type: "session.created",
      session: {
        id: "child",
        parentID: "top",
        projectID: "p",
        directory: "/w",
        title: "t",
        time: { created: 1, updated: 1 }
      }
    }
    const a = member(url)
    const pa = await a.runtime.runPromise(makePublisher({ linger: 1 }).pipe(Scope.provide(a.scope)))
    pa.publish(idle("top"))
    pa.publish(parent)
    pa.publish(idle("child"))
    pa.publish({ type: "notice", level: "info", message: "no session" })
    pa.publish(idle("other"))
    await Effect.runPromise(pa.flush)
    // Another runner takes "top" over (a failover): its numbers go on from the first runner's.
    const b = member(url)
    const pb = await b.runtime.runPromise(makePublisher({ linger: 1 }).pipe(Scope.provide(b.scope)))
    pb.publish(idle("top"))
    await Effect.runPromise(pb.flush)
    const deadline = Date.now() + 10_000
    while (seen.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(positions).toEqual([
      { root: "top", seq: 1 },
      { root: "top", seq: 2 },
      { root: "top", seq: 3 },
      undefined,
      { root: "other", seq: 1 },
      { root: "top", seq: 4 }
    ])
  }, 30_000)
})
