/**
 * "Failover that loses nothing": events replayable on any front. A throwaway Postgres, one `lathe runner` and TWO
 * `lathe serve --cluster` fronts on loopback, every part a real process, and a slowly streaming scripted model. A
 * client reads a session's events from front A mid-turn, drops, and resumes on front B with `Last-Event-ID` (as a
 * plain SSE client and through the SDK): what it read on A plus what B sends equals the whole ordered stream a third
 * client read from the start, with no duplicate and no gap, and both fronts number every event alike.
 */
import { type ChildProcess, execFileSync } from "node:child_process"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"
import { createLatheClient } from "@lathe/sdk"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startRunner as startClusterRunner } from "./cluster-helpers.js"
import { sandbox } from "./helpers.js"
import { byScenario, readEvents, type ServeProcess, type SseEvent, startServe } from "./serve-helpers.js"

const SHARDS = "12"
const TOKEN = "replay-s3cret"
const auth = { authorization: `Bearer ${TOKEN}` }

/** Starts `lathe runner` from source and resolves once it joined. */
const startRunner = (env: Record<string, string>, cwd: string, port: number): Promise<ChildProcess> =>
  startClusterRunner(env, cwd, port, { shards: SHARDS, joinTimeoutMs: 80_000 }).then((runner) => runner.child)

const isIdle = (sessionID: string) => (e: { data: LatheEvent }) =>
  e.data.type === "session.idle" && e.data.sessionID === sessionID
const isText = (e: SseEvent) => e.data.type === "part.delta"
/** An event as JSON with sorted keys (the SDK's decoded events list their keys in the schema's order). */
const canonical = (event: LatheEvent) =>
  JSON.stringify(event, (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value
  )
/**
 * What a client saw of the session, comparable between clients: each event's id and its JSON. Events of no session
 * (a notice) have no id and are live only, so a client sees them only while connected: they are left out.
 */
const frames = (events: ReadonlyArray<SseEvent>) =>
  events.flatMap((e) => (e.id === undefined ? [] : [`${e.id} ${JSON.stringify(e.data)}`]))

let model: ScriptedServer
const children: Array<ChildProcess> = []
let frontA: ServeProcess
let frontB: ServeProcess

beforeAll(async () => {
  model = await startScriptedServer(
    byScenario({
      // Step 0 writes a file; step 1 streams 40 chunks, 60 ms apart (the client switches fronts meanwhile).
      stream: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "write", input: { filePath: "replay.txt", content: "one\n" } }] }
          : { steps: Array.from({ length: 40 }, (_, i) => ({ text: `chunk ${i} ` })), delayMs: 60 }
    })
  )
  const box = sandbox()
  const pg = process.env.LATHE_TEST_PG_URL
  if (!pg) throw new Error("LATHE_TEST_PG_URL is not set (the vitest globalSetup starts Postgres)")
  const db = `replay_${process.pid}`
  execFileSync("psql", [pg, "-q", "-c", `CREATE DATABASE ${db}`])
  const url = new URL(pg)
  url.pathname = `/${db}`
  const env = {
    ...box.env,
    LATHE_BASE_URL: model.url,
    LATHE_MODEL: "m",
    LATHE_STORE: url.toString(),
    LATHE_SERVER_TOKEN: TOKEN
  }
  // Started together (each pushed as it comes up, so a failed start leaves nothing running).
  const front = () =>
    startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env, timeoutMs: 80_000 }).then(
      (serve) => {
        children.push(serve.child)
        return serve
      }
    )
  const runner = startRunner(env, box.project, await freePort()).then((child) => children.push(child))
  ;[frontA, frontB] = await Promise.all([front(), front(), runner])
}, 120_000)

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  await model?.close()
})

describe("events replayable on any front", () => {
  it("a client that moves from front A to front B mid-turn with Last-Event-ID gets exactly what it missed", async () => {
    const created = await fetch(`${frontA.url}/sessions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: "{}"
    })
    assert.strictEqual(created.status, 201)
    const sessionID = ((await created.json()) as { id: string }).id
    const stream = `/events?sessionID=${sessionID}`
    // The third client: the whole stream from the session's first event (Last-Event-ID 0).
    const whole = await readEvents(`${frontA.url}${stream}`, { ...auth, "last-event-id": "0" })
    const first = await readEvents(`${frontA.url}${stream}`, auth)
    const sdk = createLatheClient({ baseUrl: frontB.url, token: TOKEN })
    // The prompt goes through front B: its own events (the stored prompt) are numbered with the runner's.
    const accepted = await fetch(`${frontB.url}/sessions/${sessionID}/prompt`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ text: "[stream] write, then talk slowly" })
    })
    assert.strictEqual(accepted.status, 202)
    // Mid-turn: a few chunks of the slow step have arrived on A; the client drops there.
    await first.waitFor((e) => isText(e) && JSON.stringify(e.data).includes("chunk 5 "), 30_000)
    first.close()
    await first.ended
    const seen = first.events.findLast((e) => e.id !== undefined)
    assert.ok(seen?.id, "the last event read on A has an id")
    const second = await readEvents(`${frontB.url}${stream}`, { ...auth, "last-event-id": seen.id })
    const viaSdk = sdk.events({ sessionID, lastEventId: seen.id })
    const sdkEvents: Array<LatheEvent> = []
    for await (const event of viaSdk) {
      sdkEvents.push(event)
      if (event.type === "session.idle") break
    }
    await Promise.all([second.waitFor(isIdle(sessionID), 30_000), whole.waitFor(isIdle(sessionID), 30_000)])
    second.close()
    whole.close()

    // Only events of no session come without an id.
    for (const e of [...whole.events, ...first.events, ...second.events])
      if (e.id === undefined) assert.include(["notice", "plugin.error"], e.data.type, JSON.stringify(e.data))
    // The whole stream: ids 1, 2, 3, … with no gap, starting at the session's creation.
    const ids = whole.events.flatMap((e) => (e.id === undefined ? [] : [Number(e.id)]))
    assert.deepStrictEqual(
      ids,
      ids.map((_, i) => i + 1)
    )
    assert.strictEqual(whole.events[0]?.data.type, "session.created")
    assert.ok(
      whole.events.some((e) => e.data.type === "message.updated" && e.data.message.role === "user"),
      "front B's own events are in the stream"
    )
    // A's part and B's part join into the whole stream, in order, without a duplicate.
    const from = whole.events.findIndex((e) => e.id !== undefined && e.id === first.events.find((f) => f.id)?.id)
    assert.isAtLeast(from, 0)
    const joined = [...frames(first.events), ...frames(second.events)]
    assert.deepStrictEqual(joined, frames(whole.events.slice(from)))
    assert.strictEqual(new Set(joined).size, joined.length)
    // The switch happened mid-turn: both fronts sent chunks of the streaming step.
    assert.ok(first.events.some(isText) && second.events.some(isText), "text streamed on both sides of the switch")
    assert.ok(!second.comments.some((c) => c.includes("not in this server's buffer")), second.comments.join("\n"))
    // The SDK, resuming on B with the id read on A, yields the same events as the plain client.
    const ofSession = (event: LatheEvent) => event.type !== "notice" && event.type !== "plugin.error"
    assert.deepStrictEqual(
      sdkEvents.filter(ofSession).map(canonical),
      second.events.filter((e) => e.id !== undefined).map((e) => canonical(e.data))
    )
    assert.strictEqual(viaSdk.lastEventId, second.events.findLast((e) => e.id !== undefined)?.id)
    // Front B numbers every event as A does: its replay from the start is the same stream.
    const again = await readEvents(`${frontB.url}${stream}`, { ...auth, "last-event-id": "0" })
    await again.waitFor(isIdle(sessionID))
    again.close()
    assert.deepStrictEqual(frames(again.events), frames(whole.events))
  }, 60_000)
})
