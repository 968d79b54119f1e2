import { afterEach, describe, expect, it } from "@effect/vitest"
import { createLatheClient } from "../src/promise-client.js"
import { json, serve, type TestServer } from "./http-server.js"

// The routes `lathe web` added to the API, through the Promise client: the list page's summaries and a step's diff.
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
const summary = {
  steps: 2,
  tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 1, write: 0 } },
  cost: 0.01,
  files: 1,
  agent: "build",
  model: "p/m",
  ms: 120
}

describe("createLatheClient: summaries and step diffs", () => {
  it("asks GET /sessions/summaries with its page, and GET /sessions/:id/diff with the snapshots", async () => {
    const seen: Array<string | undefined> = []
    const server = await serve((request, response) => {
      seen.push(request.url)
      if (request.url?.startsWith("/sessions/summaries"))
        json(response, 200, { sessions: [{ session, summary }], total: 3, next: 2 })
      else json(response, 200, { diff: "", files: [] })
    })
    servers.push(server)
    const lathe = createLatheClient({ baseUrl: server.url, token: "t" })
    expect(await lathe.sessions.summaries({ limit: 1, offset: 1 })).toEqual({
      sessions: [{ session, summary }],
      total: 3,
      next: 2
    })
    expect(await lathe.sessions.diff("ses_1", { from: "a1", to: "b2" })).toEqual({ diff: "", files: [] })
    expect(await lathe.sessions.diff("ses_1")).toEqual({ diff: "", files: [] })
    expect(seen).toEqual([
      "/sessions/summaries?limit=1&offset=1",
      "/sessions/ses_1/diff?from=a1&to=b2",
      "/sessions/ses_1/diff"
    ])
  })
})
