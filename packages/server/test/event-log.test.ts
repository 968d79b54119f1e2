import { describe, expect, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/core/schema"
import { EventLog, type LoggedEvent } from "../src/event-log.js"
import { lastEventId, sseBody } from "../src/events-api.js"

const idle = (sessionID: string): LatheEvent => ({ type: "session.idle", sessionID })
const notice: LatheEvent = { type: "notice", level: "info", message: "hello" }
const created = (id: string, parentID?: string): LatheEvent => ({
  type: "session.created",
  session: {
    id,
    projectID: "p",
    directory: "/tmp",
    title: "t",
    time: { created: 1, updated: 1 },
    ...(parentID ? { parentID } : {})
  }
})

const readText = async (stream: ReadableStream<Uint8Array>, until: (text: string) => boolean) => {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ""
  while (!until(text)) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel()
  return text
}

describe("EventLog", () => {
  it("numbers events from 1 in publish order and hands them to subscribers", () => {
    const log = new EventLog()
    const seen: Array<LoggedEvent> = []
    log.subscribe(
      undefined,
      (e) => seen.push(e),
      () => {}
    )
    log.push(idle("a"))
    log.push(notice)
    expect(seen.map((e) => [e.id, e.sessionID])).toEqual([
      [1, "a"],
      [2, undefined]
    ])
    expect(log.lastId).toBe(2)
  })

  it("replays after the last seen id, then goes on live with nothing lost or repeated at the seam", () => {
    const log = new EventLog()
    for (const id of ["a", "b", "c"]) log.push(idle(id))
    const live: Array<number> = []
    const sub = log.subscribe(
      1,
      (e) => live.push(e.id),
      () => {}
    )
    log.push(idle("d"))
    expect([...sub.replay.map((e) => e.id), ...live]).toEqual([2, 3, 4])
    expect(sub.truncated).toBe(false)
    sub.unsubscribe()
    log.push(idle("e"))
    expect(live).toEqual([4])
  })

  it("keeps a bounded buffer and says when a replay starts after a gap", () => {
    const log = new EventLog(3)
    for (let i = 0; i < 6; i++) log.push(idle(`s${i}`))
    const sub = log.subscribe(
      1,
      () => {},
      () => {}
    )
    expect(sub.replay.map((e) => e.id)).toEqual([4, 5, 6])
    expect(sub.truncated).toBe(true)
    expect(
      log.subscribe(
        3,
        () => {},
        () => {}
      ).truncated
    ).toBe(false)
  })

  it("knows a session's descendants from session.created and from what it is told", () => {
    const log = new EventLog()
    log.push(created("root"))
    log.push(created("child", "root"))
    log.learnParent("grandchild", "child")
    expect(log.isWithin("grandchild", "root")).toBe(true)
    expect(log.isWithin("root", "child")).toBe(false)
    expect(log.isWithin("other", "root")).toBe(false)
  })

  it("ends every subscription when it closes and takes no more events", () => {
    const log = new EventLog()
    let closed = 0
    log.subscribe(
      undefined,
      () => {},
      () => closed++
    )
    log.close()
    expect(closed).toBe(1)
    expect(log.push(notice)).toBeUndefined()
    log.subscribe(
      undefined,
      () => {},
      () => closed++
    )
    expect(closed).toBe(2)
  })
})

describe("the SSE body", () => {
  it("filters to a session and its descendants plus events of no session, with ids and event names", async () => {
    const log = new EventLog()
    log.push(created("root"))
    log.push(created("child", "root"))
    log.push(idle("other"))
    log.push(idle("child"))
    log.push(notice)
    const text = await readText(sseBody(log, { after: 0, sessionID: "root" }), (t) => t.includes("event: notice"))
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
    expect(ids).toEqual([1, 2, 4, 5])
    expect(text).toContain('event: session.idle\ndata: {"type":"session.idle","sessionID":"child"}\n\n')
  })

  it("sends a keep-alive comment while idle and ends when the log closes", async () => {
    const log = new EventLog()
    const stream = sseBody(log, { after: undefined, sessionID: undefined, heartbeatMs: 10 })
    const text = await readText(stream, (t) => t.includes(": keep-alive"))
    expect(text.startsWith(": ok\n\n")).toBe(true)
    const second = sseBody(log, { after: undefined, sessionID: undefined })
    log.close()
    expect(await readText(second, () => false)).toBe(": ok\n\n")
  })

  it("takes the last id from Last-Event-ID, else ?lastEventId=, and ignores anything else", () => {
    expect(lastEventId("12", "/events")).toBe(12)
    expect(lastEventId(undefined, "/events?lastEventId=7")).toBe(7)
    expect(lastEventId("nope", "/events")).toBeUndefined()
    expect(lastEventId(undefined, "/events")).toBeUndefined()
  })
})
