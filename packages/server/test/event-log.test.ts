import { describe, expect, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/core/schema"
import { EventLog, type LoggedEvent } from "../src/event-log.js"
import { cursorOf, lastEventId, sseBody } from "../src/events-api.js"

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
  it("numbers each top-level session's events from 1 (subagents share their parent's count) and hands them on", () => {
    const log = new EventLog()
    const seen: Array<LoggedEvent> = []
    log.subscribe(
      undefined,
      (e) => seen.push(e),
      () => {}
    )
    log.push(created("a"))
    log.push(idle("b"))
    log.push(created("child", "a"))
    log.push(notice)
    log.push(idle("child"))
    log.push(idle("a"))
    expect(seen.map((e) => [e.offset, e.sessionID, e.position?.root, e.position?.seq])).toEqual([
      [1, "a", "a", 1],
      [2, "b", "b", 1],
      [3, "child", "a", 2],
      [4, undefined, undefined, undefined],
      [5, "child", "a", 3],
      [6, "a", "a", 4]
    ])
  })

  it("keeps positions it is given (a relayed event) and drops a repeat of one it has", () => {
    const log = new EventLog()
    expect(log.push(idle("a"), { root: "a", seq: 7 })?.position).toEqual({ root: "a", seq: 7 })
    expect(log.push(idle("a"), { root: "a", seq: 7 })).toBeUndefined()
    expect(log.push(idle("a"), { root: "a", seq: 8 })?.position).toEqual({ root: "a", seq: 8 })
  })

  it("replays a session after the last seen seq, then goes on live with nothing lost or repeated at the seam", () => {
    const log = new EventLog()
    for (const id of ["a", "b", "a", "a"]) log.push(idle(id))
    const live: Array<number | undefined> = []
    const sub = log.subscribe(
      { kind: "session", sessionID: "a", seq: 1 },
      (e) => live.push(e.position?.seq),
      () => {}
    )
    log.push(idle("a"))
    expect([...sub.replay.map((e) => e.position?.seq), ...live]).toEqual([2, 3, 4])
    expect(sub.truncated).toBe(false)
    sub.unsubscribe()
    log.push(idle("a"))
    expect(live).toEqual([4])
  })

  it("replays the stream of every session after one event, in this server's order, and says when it cannot", () => {
    const log = new EventLog()
    for (const id of ["a", "b", "a"]) log.push(idle(id))
    const sub = log.subscribe(
      { kind: "event", position: { root: "b", seq: 1 } },
      () => {},
      () => {}
    )
    expect(sub.replay.map((e) => e.position)).toEqual([{ root: "a", seq: 2 }])
    const unknown = log.subscribe(
      { kind: "event", position: { root: "z", seq: 1 } },
      () => {},
      () => {}
    )
    expect(unknown).toMatchObject({ replay: [], truncated: true })
  })

  it("keeps a bounded buffer and says when a session's replay starts after a gap", () => {
    const log = new EventLog(3)
    for (let i = 0; i < 6; i++) log.push(idle("s"))
    const sub = log.subscribe(
      { kind: "session", sessionID: "s", seq: 1 },
      () => {},
      () => {}
    )
    expect(sub.replay.map((e) => e.position?.seq)).toEqual([4, 5, 6])
    expect(sub.truncated).toBe(true)
    for (const seq of [3, 6, 9])
      expect(
        log.subscribe(
          { kind: "session", sessionID: "s", seq },
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
  it("filters to a session and its descendants plus events of no session, with per-session ids", async () => {
    const log = new EventLog()
    log.push(created("root"))
    log.push(created("child", "root"))
    log.push(idle("other"))
    log.push(idle("child"))
    log.push(notice) // events of no session are live only: not replayed
    const reading = readText(sseBody(log, { after: "0", sessionID: "root" }), (t) => t.includes("event: notice"))
    log.push(notice)
    const text = await reading
    const ids = [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1])
    expect(ids).toEqual(["1", "2", "3"])
    expect(text).toContain('id: 3\nevent: session.idle\ndata: {"type":"session.idle","sessionID":"child"}\n\n')
    expect(text).toContain('event: notice\ndata: {"type":"notice"')
    expect(text).not.toMatch(/id: [^\n]*\nevent: notice/)
    expect(text.match(/event: notice/g)).toHaveLength(1)
  })

  it("names the session in ids on the stream of every session, and resumes it after one", async () => {
    const log = new EventLog()
    log.push(created("root"))
    log.push(idle("other"))
    log.push(idle("root"))
    const text = await readText(sseBody(log, { after: "root:1", sessionID: undefined }), (t) =>
      t.includes("id: root:2")
    )
    expect([...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1])).toEqual(["other:1", "root:2"])
  })

  it("skips a relayed event the client already saw elsewhere (this server got it late)", async () => {
    const log = new EventLog()
    log.push(idle("s"), { root: "s", seq: 1 })
    const stream = sseBody(log, { after: "3", sessionID: "s" })
    const reading = readText(stream, (t) => t.includes("id: 4"))
    for (const seq of [2, 3, 4]) log.push(idle("s"), { root: "s", seq })
    expect([...(await reading).matchAll(/^id: (.+)$/gm)].map((m) => m[1])).toEqual(["4"])
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

  it("takes the last id from Last-Event-ID, else ?lastEventId=, and reads it as a cursor", () => {
    expect(lastEventId("12", "/events")).toBe("12")
    expect(lastEventId(undefined, "/events?lastEventId=ses_a%3A7")).toBe("ses_a:7")
    expect(lastEventId(undefined, "/events")).toBeUndefined()
    expect(cursorOf("12", "ses_a")).toEqual({ kind: "session", sessionID: "ses_a", seq: 12 })
    expect(cursorOf("ses_a:12", "ses_a")).toEqual({ kind: "session", sessionID: "ses_a", seq: 12 })
    expect(cursorOf("ses_a:12", undefined)).toEqual({ kind: "event", position: { root: "ses_a", seq: 12 } })
    // A bare number on the stream of every session is an id from before ids were per session: not resumable.
    expect(cursorOf("12", undefined)).toBeUndefined()
    expect(cursorOf("nope", "ses_a")).toBeUndefined()
  })
})
