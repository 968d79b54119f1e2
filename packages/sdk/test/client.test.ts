import type { IncomingMessage } from "node:http"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeLatheClient } from "../src/client.js"
import { LatheApiError } from "../src/errors.js"
import { createLatheClient } from "../src/promise-client.js"
import { closedPort, json, serve, type TestServer } from "./http-server.js"

const servers: Array<TestServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const session = {
  id: "ses_1",
  projectID: "prj_1",
  directory: "/work",
  title: "New session",
  time: { created: 1, updated: 2 },
  status: "idle"
}

interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly auth: string | undefined
  readonly body: string
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  let body = ""
  for await (const chunk of request) body += String(chunk)
  return body
}

/** A stand-in for `lathe serve` that answers a few routes the way the API says, and records what it was sent. */
const fakeServer = async () => {
  const seen: Array<Seen> = []
  const server = await serve(async (request, response) => {
    seen.push({
      method: request.method,
      url: request.url,
      auth: request.headers.authorization,
      body: await readBody(request)
    })
    if (request.headers.authorization !== "Bearer s3cret")
      json(response, 401, { error: { code: "unauthorized", message: "Wrong or missing bearer token." } })
    else if (request.method === "POST" && request.url === "/sessions") json(response, 201, session)
    else if (request.url === "/sessions/ses_1/prompt") json(response, 202, { messageID: "msg_1", queued: false })
    else if (request.url === "/sessions?limit=5") json(response, 200, [session])
    else if (request.url === "/permissions/per_1/reply") response.writeHead(204).end()
    else if (request.url === "/sessions/ses_bad") json(response, 200, { ...session, status: "sleeping" })
    else if (request.url === "/health")
      response.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>")
    else json(response, 404, { error: { code: "not_found", message: `No session ${request.url}.` } })
  })
  servers.push(server)
  return { url: server.url, seen }
}

const rejection = (promise: Promise<unknown>): Promise<LatheApiError> =>
  promise.then(
    () => {
      throw new Error("expected the call to fail")
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(LatheApiError)
      return error as LatheApiError
    }
  )

describe("createLatheClient (the Promise client)", () => {
  it("sends the bearer token and the API's paths and payloads, and decodes the answers", async () => {
    const { url, seen } = await fakeServer()
    const lathe = createLatheClient({ baseUrl: `${url}/`, token: "s3cret" })
    expect(await lathe.sessions.create({ title: "t" })).toEqual(session)
    expect(await lathe.sessions.prompt("ses_1", "hello")).toEqual({ messageID: "msg_1", queued: false })
    expect(await lathe.sessions.list({ limit: 5 })).toEqual([session])
    expect(await lathe.permissions.reply("per_1", { reply: "reject", message: "no" })).toBeUndefined()
    expect(seen.map((s) => `${s.method} ${s.url} ${s.auth}`)).toEqual([
      "POST /sessions Bearer s3cret",
      "POST /sessions/ses_1/prompt Bearer s3cret",
      "GET /sessions?limit=5 Bearer s3cret",
      "POST /permissions/per_1/reply Bearer s3cret"
    ])
    expect(JSON.parse(seen[1]?.body ?? "")).toEqual({ text: "hello" })
    expect(JSON.parse(seen[3]?.body ?? "")).toEqual({ reply: "reject", message: "no" })
  })

  it("rejects with the server's code, status and message", async () => {
    const { url } = await fakeServer()
    const missing = await rejection(createLatheClient({ baseUrl: url, token: "s3cret" }).sessions.get("nope"))
    expect(missing).toMatchObject({ status: 404, code: "not_found", message: "No session /sessions/nope." })
    const unauthorized = await rejection(createLatheClient({ baseUrl: url, token: "wrong" }).sessions.list())
    expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized", message: "Wrong or missing bearer token." })
  })

  it("names the URL it could not reach, and flags answers the API does not describe", async () => {
    const down = await closedPort()
    const network = await rejection(createLatheClient({ baseUrl: down }).health())
    expect(network).toMatchObject({ status: 0, code: "network_error" })
    expect(network.message).toContain(down)

    const { url } = await fakeServer()
    const lathe = createLatheClient({ baseUrl: url, token: "s3cret" })
    expect(await rejection(lathe.health())).toMatchObject({ status: 502, code: "invalid_response" })
    const drift = await rejection(lathe.sessions.get("ses_bad"))
    expect(drift.code).toBe("invalid_response")
    expect(drift.message).toContain(`Expected "idle" | "busy" | "retry"`)
  })

  it("refuses bad arguments before sending anything", async () => {
    const { url, seen } = await fakeServer()
    const lathe = createLatheClient({ baseUrl: url, token: "s3cret" })
    const empty = await rejection(lathe.sessions.prompt("ses_1", ""))
    expect(empty).toMatchObject({ status: 0, code: "bad_request" })
    expect(empty.message).toContain("client.sessions.prompt")
    // a caller without types: the reply is checked against the API's schema
    const reply = { reply: "maybe" } as unknown as { reply: "once" }
    expect(await rejection(lathe.permissions.reply("per_1", reply))).toMatchObject({ code: "bad_request" })
    expect(seen).toEqual([])
  })

  it("uses the fetch it is given", async () => {
    const { url } = await fakeServer()
    const calls: Array<string> = []
    const lathe = createLatheClient({
      baseUrl: url,
      token: "s3cret",
      fetch: (input: string | URL | Request, init?: RequestInit) => {
        calls.push(String(input instanceof Request ? input.url : input))
        return fetch(input, init)
      }
    })
    await lathe.sessions.create()
    expect(calls).toEqual([`${url}/sessions`])
  })
})

describe("makeLatheClient (the Effect client)", () => {
  it.effect("fails with the API's typed error bodies", () =>
    Effect.gen(function* () {
      const { url } = yield* Effect.promise(() => fakeServer())
      const lathe = yield* makeLatheClient({ baseUrl: url, token: "s3cret" })
      const created = yield* lathe.sessions.create({ payload: {} })
      expect(created.id).toBe("ses_1")
      const missing = yield* lathe.sessions.get({ params: { id: "nope" } }).pipe(Effect.flip)
      expect(missing).toEqual({ error: { code: "not_found", message: "No session /sessions/nope." } })
      const anonymous = yield* makeLatheClient({ baseUrl: url })
      const refused = yield* anonymous.sessions.list({ query: {} }).pipe(Effect.flip)
      expect(refused).toEqual({ error: { code: "unauthorized", message: "Wrong or missing bearer token." } })
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )
})
