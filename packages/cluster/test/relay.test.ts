import type { LatheEvent } from "@lathe/core/schema"
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
const listening = async (url: string): Promise<Array<string>> => {
  const seen: Array<string> = []
  const server = member(url)
  let ready: () => void = () => {}
  const confirmed = new Promise<void>((resolve) => {
    ready = resolve
  })
  await server.runtime.runPromise(
    listen(
      (event) => {
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
})
