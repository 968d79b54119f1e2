import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { serve } from "../src/index.js"

// The routes of `lathe web`'s list page and file view, in-process over the test loop (scripted model, memory store:
// its summaries come from each session's messages, the SQLite store's from one query; both are tested in core).
const TOKEN = "t0k"

const start = () =>
  serve({
    app: (directory) =>
      testLoopLayer({
        root: directory,
        steps: Array(4).fill([...chunks.text("Hello."), ...chunks.finish({ input: 5, output: 3 })])
      }),
    directory: mkdtempSync(join(tmpdir(), "lathe-server-views-")),
    port: 0,
    token: TOKEN,
    version: "1.2.3"
  })

describe("GET /sessions/summaries and GET /sessions/:id/diff?from&to", () => {
  it("pages the listed sessions with their totals, and refuses refs the session did not record", async () => {
    const server = await start()
    const call = (path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    try {
      const ids: Array<string> = []
      for (const title of ["one", "two", "three"])
        ids.push(((await (await call("/sessions", { title })).json()) as { id: string }).id)
      await call(`/sessions/${ids[0]}/prompt`, { text: "hi" })
      for (let i = 0; i < 100; i++) {
        const info = (await (await call(`/sessions/${ids[0]}`)).json()) as { status: string }
        const messages = (await (await call(`/sessions/${ids[0]}/messages`)).json()) as Array<unknown>
        if (info.status === "idle" && messages.length === 2) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }

      const first = (await (await call("/sessions/summaries?limit=2")).json()) as {
        sessions: Array<{
          session: { id: string; title: string }
          summary: { steps: number; tokens: { input: number } }
        }>
        total: number
        next?: number
      }
      expect(first.total).toBe(3)
      expect(first.next).toBe(2)
      expect(first.sessions).toHaveLength(2)
      const rest = (await (await call("/sessions/summaries?limit=2&offset=2")).json()) as typeof first
      expect(rest.next).toBeUndefined()
      const all = [...first.sessions, ...rest.sessions]
      // Same order as GET /sessions.
      const listed = (await (await call("/sessions")).json()) as Array<{ id: string }>
      expect(all.map((s) => s.session.id)).toEqual(listed.map((s) => s.id))
      const prompted = all.find((s) => s.session.id === ids[0])
      expect(prompted?.summary).toMatchObject({ steps: 1, tokens: { input: 5 } })
      expect(all.find((s) => s.session.id === ids[1])?.summary.steps).toBe(0)

      const refused = await call(`/sessions/${ids[0]}/diff?from=HEAD`)
      expect(refused.status).toBe(400)
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("not a snapshot")
      const toAlone = await call(`/sessions/${ids[0]}/diff?to=abc`)
      expect(toAlone.status).toBe(400)
      expect((await call(`/sessions/${ids[0]}/diff`)).status).toBe(200)
    } finally {
      await server.close(5_000)
    }
  })
})
