import type { ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Stream } from "effect"
import { latheEventStream } from "../src/client.js"
import { LatheApiError } from "../src/errors.js"
import { subscribeEvents } from "../src/events.js"
import { closedPort, json, notice, serve, sse, type TestServer } from "./http-server.js"

const servers: Array<TestServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})
const start = async (handler: Parameters<typeof serve>[0]) => {
  const server = await serve(handler)
  servers.push(server)
  return server
}

const streamHead = (response: ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
}

const fast = { initialDelayMs: 5, maxDelayMs: 20, attempts: 2 }

const messageOf = (event: LatheEvent) => (event.type === "notice" ? event.message : event.type)

describe("client.events (subscribeEvents)", () => {
  it("reconnects with Last-Event-ID after a drop mid-message and never yields an event twice", async () => {
    const seen: Array<{ lastEventId: string | undefined; auth: string | undefined; url: string | undefined }> = []
    const server = await start((request, response) => {
      seen.push({
        lastEventId: request.headers["last-event-id"] as string | undefined,
        auth: request.headers.authorization,
        url: request.url
      })
      streamHead(response)
      if (seen.length === 1) {
        response.write(": keep-alive\n\n")
        response.write(sse("1", notice("n1")) + sse("2", notice("n2")) + sse("3", notice("n3")))
        // the connection drops in the middle of event 4
        response.write(`id: 4\nevent: notice\ndata: {"type":"no`, () => response.socket?.destroy())
        return
      }
      // the server replays from its buffer, including one the client already has
      response.write(sse("3", notice("n3")))
      response.write(sse("4", notice("n4")))
      response.write(": keep-alive\n\n")
      response.write(sse("5", notice("n5")))
      response.end(sse("6", { type: "session.idle", sessionID: "ses_1" }))
    })
    const stream = subscribeEvents(
      { baseUrl: `${server.url}/`, token: "s3cret" },
      { sessionID: "ses 1", reconnect: fast }
    )
    const got: Array<string> = []
    for await (const event of stream) {
      got.push(messageOf(event))
      if (event.type === "session.idle") break
    }
    expect(got).toEqual(["n1", "n2", "n3", "n4", "n5", "session.idle"])
    expect(stream.lastEventId).toBe("6")
    expect(seen.slice(0, 2)).toEqual([
      { lastEventId: undefined, auth: "Bearer s3cret", url: "/events?sessionID=ses%201" },
      { lastEventId: "3", auth: "Bearer s3cret", url: "/events?sessionID=ses%201" }
    ])
  })

  it("starts after lastEventId when given one, and ends without an error when the signal aborts", async () => {
    const ids: Array<string | undefined> = []
    const server = await start((request, response) => {
      ids.push(request.headers["last-event-id"] as string | undefined)
      streamHead(response)
      response.write(sse("41", notice("old")) + sse("42", notice("new")))
      // then nothing more: the connection stays open
    })
    const controller = new AbortController()
    const got: Array<string> = []
    for await (const event of subscribeEvents(
      { baseUrl: server.url },
      { lastEventId: "41", signal: controller.signal }
    )) {
      got.push(messageOf(event))
      controller.abort()
    }
    expect(got).toEqual(["new"])
    expect(ids).toEqual(["41"])
  })

  it("compares ids only within one session on the stream of every session (<session>:<seq>)", async () => {
    const server = await start((_request, response) => {
      streamHead(response)
      response.write(sse("ses_a:5", notice("a5")) + sse("ses_b:1", notice("b1")) + sse("ses_a:5", notice("again")))
      response.end(sse("ses_a:6", { type: "session.idle", sessionID: "ses_a" }))
    })
    const stream = subscribeEvents({ baseUrl: server.url }, { reconnect: fast })
    const got: Array<string> = []
    for await (const event of stream) {
      got.push(messageOf(event))
      if (event.type === "session.idle") break
    }
    // ses_b's 1 comes after ses_a's 5 and is new; ses_a's 5 again is a repeat.
    expect(got).toEqual(["a5", "b1", "session.idle"])
    expect(stream.lastEventId).toBe("ses_a:6")
  })

  it("skips events of a type it does not know, and fails on a known event that does not match the catalogue", async () => {
    const server = await start((_request, response) => {
      streamHead(response)
      response.write(sse("1", { type: "from.the.future", x: 1 }))
      response.write(sse("2", notice("known")))
      response.end(sse("3", { type: "session.idle" }))
    })
    const got: Array<string> = []
    const failure = await (async () => {
      for await (const event of subscribeEvents({ baseUrl: server.url }, { reconnect: fast }))
        got.push(messageOf(event))
    })().catch((error: unknown) => error)
    expect(got).toEqual(["known"])
    expect(failure).toBeInstanceOf(LatheApiError)
    expect((failure as LatheApiError).code).toBe("invalid_response")
    expect((failure as LatheApiError).message).toContain("event catalogue")
  })

  it("fails at once with the server's error when the subscription is refused", async () => {
    const server = await start((_request, response) =>
      json(response, 401, { error: { code: "unauthorized", message: "This server needs a bearer token." } })
    )
    const failure = await (async () => {
      for await (const _ of subscribeEvents({ baseUrl: server.url, token: "wrong" })) return
    })().catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: 401, code: "unauthorized", message: "This server needs a bearer token." })
  })

  it("says which URL it could not reach: at once on the first connection, after bounded retries later", async () => {
    const url = await closedPort()
    const first = await (async () => {
      for await (const _ of subscribeEvents({ baseUrl: url })) return
    })().catch((error: unknown) => error)
    expect(first).toMatchObject({ status: 0, code: "network_error" })
    expect((first as Error).message).toContain(`${url}/events`)

    let connections = 0
    const server = await start((_request, response) => {
      connections++
      streamHead(response)
      response.write(sse("1", notice("only")), () => {
        // the server goes away for good
        void server.close()
      })
    })
    const got: Array<string> = []
    const later = await (async () => {
      for await (const event of subscribeEvents({ baseUrl: server.url }, { reconnect: fast }))
        got.push(messageOf(event))
    })().catch((error: unknown) => error)
    expect(got).toEqual(["only"])
    expect(connections).toBe(1)
    expect(later).toMatchObject({ code: "network_error" })
  })

  it("ready resolves once the server accepted the subscription, before any event, and keeps the first event", async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const server = await start(async (_request, response) => {
      streamHead(response)
      await gate
      response.end(sse("1", notice("after ready")))
    })
    const stream = subscribeEvents({ baseUrl: server.url }, { reconnect: fast })
    await stream.ready
    release()
    const got: Array<string> = []
    for await (const event of stream) {
      got.push(messageOf(event))
      break
    }
    expect(got).toEqual(["after ready"])

    const refusing = await start((_request, response) =>
      json(response, 401, { error: { code: "unauthorized", message: "no" } })
    )
    await expect(subscribeEvents({ baseUrl: refusing.url }).ready).rejects.toMatchObject({ status: 401 })
  })

  it.effect("latheEventStream gives the same typed, resumed events as an Effect Stream", () =>
    Effect.gen(function* () {
      let connections = 0
      const server = yield* Effect.promise(() =>
        start((_request, response) => {
          streamHead(response)
          if (++connections === 1) response.end(sse("1", notice("a")))
          else response.end(sse("1", notice("a")) + sse("2", notice("b")))
        })
      )
      const events = yield* latheEventStream({ baseUrl: server.url }, { reconnect: fast }).pipe(
        Stream.take(2),
        Stream.runCollect
      )
      expect(events.map(messageOf)).toEqual(["a", "b"])
    })
  )
})
