/**
 * A cluster on loopback, every part a real process: `lathe runner` ×2–3 and `lathe serve --cluster` sharing one
 * throwaway Postgres, a scripted model. Sessions spread over the runners; a runner killed mid-step (SIGKILL) or
 * stopped (SIGTERM) loses no completed step and no tool call runs twice; prompts sent while no runner is up are
 * answered when one starts.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent, MessageWithParts } from "@lathe/plugin/schema"
import { afterAll, afterEach, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { freePort, type RunnerProcess, startRunner as startClusterRunner } from "./cluster-helpers.js"
import { runLathe, sandbox } from "./helpers.js"
import { byScenario, readEvents, type ServeProcess, type SseEvent, startServe } from "./serve-helpers.js"

const SHARDS = "24"
const TOKEN = "cluster-s3cret"
const auth = { authorization: `Bearer ${TOKEN}` }

/** A runner of this cluster, on `port`, with its own data dir when given (another machine's disk). */
const startRunner = (env: Record<string, string>, cwd: string, port: number, dataDir?: string) =>
  startClusterRunner(env, cwd, port, { shards: SHARDS, joinTimeoutMs: 40_000, ...(dataDir ? { dataDir } : {}) })

let model: ScriptedServer
let box: ReturnType<typeof sandbox>
let env: Record<string, string>
let server: ServeProcess | undefined
const runners: Array<RunnerProcess> = []

const api = async (path: string, body?: unknown) => {
  if (!server) throw new Error("no server")
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...auth, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) }
}

const newSession = async () => {
  const created = await api("/sessions", {})
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  return String((created.body as { id: string }).id)
}

const prompt = async (sessionID: string, text: string) => {
  const accepted = await api(`/sessions/${sessionID}/prompt`, { text })
  assert.strictEqual(accepted.status, 202, JSON.stringify(accepted.body))
}

const messagesOf = async (sessionID: string) =>
  (await api(`/sessions/${sessionID}/messages`)).body as ReadonlyArray<MessageWithParts>

/** The text of the session's last assistant message. */
const finalText = (messages: ReadonlyArray<MessageWithParts>) =>
  messages
    .filter((m) => m.info.role === "assistant")
    .at(-1)
    ?.parts.flatMap((p) => (p.type === "text" ? [p.text] : []))
    .join("")

/** Completed tool calls that wrote `file`, across the whole session. */
const writesOf = (messages: ReadonlyArray<MessageWithParts>, file: string) =>
  messages
    .flatMap((m) => m.parts)
    .filter(
      (p) =>
        p.type === "tool" &&
        p.state.status === "completed" &&
        (p.state.input as { filePath?: string }).filePath === file
    ).length

/** Polls the session until its last answer is `text` (an idle event alone can come from a turn handed over). */
const waitFinished = async (sessionID: string, text: string, timeoutMs = 90_000) => {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const messages = await messagesOf(sessionID)
    if (finalText(messages) === text) return messages
    if (performance.now() > deadline)
      throw new Error(`session ${sessionID} did not finish: last answer ${JSON.stringify(finalText(messages))}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** The session errors among `events`, for a failure message. */
const errorsIn = (events: ReadonlyArray<{ data: LatheEvent }>) =>
  events.flatMap((e) => (e.data.type === "session.error" ? [JSON.stringify(e.data.error)] : [])).join("\n")

const isIdle = (sessionID: string) => (e: { data: LatheEvent }) =>
  e.data.type === "session.idle" && e.data.sessionID === sessionID

beforeAll(async () => {
  model = await startScriptedServer(
    byScenario({
      plain: () => ({ steps: [{ text: "Answered by a runner." }] }),
      ask: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "read", input: { filePath: "secret.env" } }] }
          : { steps: [{ text: "Read it." }] },
      undo: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "write", input: { filePath: "undo-me.txt", content: "made on a runner\n" } }] }
          : { steps: [{ text: "Wrote it." }] },
      slow: () => ({ steps: Array.from({ length: 80 }, (_, i) => ({ text: `chunk ${i} ` })), delayMs: 100 }),
      // Step 0 writes a file; step 1 streams slowly (the runner dies here) then writes another; step 2 ends.
      work: (request, step) => {
        const marker = /\[(work-\d+)\]/.exec(JSON.stringify(request.body))?.[1] ?? "work"
        return step === 0
          ? { steps: [{ tool: "write", input: { filePath: `${marker}-a.txt`, content: "first\n" } }] }
          : step === 1
            ? {
                steps: [
                  ...Array.from({ length: 25 }, (_, i) => ({ text: `thinking ${i} ` })),
                  { tool: "write", input: { filePath: `${marker}-b.txt`, content: "second\n" } }
                ],
                delayMs: 120
              }
            : { steps: [{ text: "All done." }] }
      }
    })
  )
  box = sandbox()
  writeFileSync(join(box.project, "secret.env"), "TOKEN=abc\n")
}, 30_000)

let databases = 0
/** Each test gets a database of its own: sessions, cluster state and runners of one test never meet another's. */
beforeEach(() => {
  const pg = process.env.LATHE_TEST_PG_URL
  if (!pg) throw new Error("LATHE_TEST_PG_URL is not set (the vitest globalSetup starts Postgres)")
  const db = `cluster_${process.pid}_${++databases}`
  execFileSync("psql", [pg, "-q", "-c", `CREATE DATABASE ${db}`])
  const url = new URL(pg)
  url.pathname = `/${db}`
  env = {
    ...box.env,
    LATHE_BASE_URL: model.url,
    LATHE_MODEL: "m",
    LATHE_STORE: url.toString(),
    LATHE_SERVER_TOKEN: TOKEN
  }
})

afterEach(async () => {
  for (const runner of runners.splice(0)) {
    runner.child.kill("SIGKILL")
    await runner.exited
  }
  if (server) {
    server.child.kill("SIGKILL")
    await server.exited
    server = undefined
  }
})

afterAll(async () => {
  await model?.close()
})

const startCluster = async (count: number) => {
  for (let i = 0; i < count; i++) runners.push(await startRunner(env, box.project, await freePort()))
  server = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
}

/** Waits (60 s at most) until `lathe cluster status` shows the runner at `address` holding at least one shard. */
const holdsShards = async (address: string) => {
  const end = Date.now() + 60_000
  let last = ""
  while (Date.now() < end) {
    const shown = await runLathe(["cluster", "status", "--json"], { cwd: box.project, env })
    last = shown.stdout || shown.stderr
    if (shown.code === 0) {
      const status = JSON.parse(shown.stdout) as { runners: Array<{ address: string; shards: number }> }
      if (status.runners.some((r) => r.address === address && r.shards > 0)) return
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`${address} holds no shard after 60 s; last status:\n${last}`)
}

describe("lathe runner + lathe serve --cluster", () => {
  it("spreads sessions over three runners and relays each one's events", async () => {
    await startCluster(3)
    if (!server) throw new Error("no server")
    const events = await readEvents(`${server.url}/events`, auth)
    const sessions = await Promise.all(Array.from({ length: 12 }, () => newSession()))
    for (const [i, id] of sessions.entries()) await prompt(id, `[plain-${i}] hello`)
    for (const id of sessions) await events.waitFor(isIdle(id), 60_000)
    events.close()
    for (const id of sessions) {
      const messages = await messagesOf(id)
      assert.strictEqual(finalText(messages), "Answered by a runner.", JSON.stringify(messages.at(-1)))
    }
    const counts = runners.map((r) => [...r.answered()].filter((id) => sessions.includes(id)).length)
    assert.strictEqual(
      counts.reduce((a, b) => a + b, 0),
      12,
      "each session ran on exactly one runner"
    )
    assert.ok(counts.filter((n) => n > 0).length >= 2, `sessions spread over the runners: ${counts.join(", ")}`)
    // `lathe cluster status` sees the three runners and every shard held.
    const shown = await runLathe(["cluster", "status", "--json"], { cwd: box.project, env })
    assert.strictEqual(shown.code, 0, shown.stderr)
    const status = JSON.parse(shown.stdout) as { runners: Array<{ address: string; shards: number; healthy: boolean }> }
    assert.deepStrictEqual(
      status.runners.map((r) => r.address).sort(),
      runners.map((r) => `127.0.0.1:${r.port}`).sort()
    )
    assert.strictEqual(
      status.runners.reduce((sum, r) => sum + r.shards, 0),
      Number(SHARDS)
    )
    const table = await runLathe(["cluster", "status"], { cwd: box.project, env })
    assert.match(table.stdout, /RUNNER\s+HEALTHY/)
  }, 180_000)

  it("survives a runner killed mid-step: every session finishes, no tool call runs twice", async () => {
    await startCluster(2)
    if (!server) throw new Error("no server")
    const events = await readEvents(`${server.url}/events`, auth)
    const sessions = await Promise.all(Array.from({ length: 4 }, () => newSession()))
    for (const [i, id] of sessions.entries()) await prompt(id, `[work-${i}] do the work`)
    // Every session has written its first file and streams its second step.
    for (const [i] of sessions.entries())
      await events.waitFor(
        (e) =>
          e.data.type === "tool.completed" &&
          (e.data.state.input as { filePath?: string }).filePath === `work-${i}-a.txt`,
        60_000
      )
    const victim = runners.find((r) => r.answered().size > 0)
    assert.ok(victim, "a runner holds sessions")
    const moved = sessions.filter((id) => victim.answered().has(id))
    const killedAt = performance.now()
    victim.child.kill("SIGKILL")
    await victim.exited
    const seenBefore = events.events.length
    for (const id of sessions) await waitFinished(id, "All done.")
    const next = events.events
      .slice(seenBefore)
      .find((e) => "sessionID" in e.data && moved.includes(String(e.data.sessionID)))
    const survivor = runners.find((r) => r !== victim)
    assert.ok(survivor)
    for (const id of moved) assert.ok(survivor.answered().has(id), `the surviving runner took ${id} over`)
    for (const [i, id] of sessions.entries()) {
      const messages = await messagesOf(id)
      assert.strictEqual(finalText(messages), "All done.", `session ${i} finished`)
      assert.strictEqual(writesOf(messages, `work-${i}-a.txt`), 1, `work-${i}-a.txt was written once`)
      assert.strictEqual(writesOf(messages, `work-${i}-b.txt`), 1, `work-${i}-b.txt was written once`)
      assert.strictEqual(readFileSync(join(box.project, `work-${i}-a.txt`), "utf8"), "first\n")
      assert.ok(existsSync(join(box.project, `work-${i}-b.txt`)))
    }
    events.close()
    process.stderr.write(
      `failover: first event of a moved session ${next ? "arrived" : "missing"} after kill; total ${Math.round(performance.now() - killedAt)} ms until all idle\n`
    )
  }, 240_000)

  it("SIGTERM hands a runner's sessions over cleanly, and a restarted runner takes work again", async () => {
    await startCluster(2)
    if (!server) throw new Error("no server")
    const events = await readEvents(`${server.url}/events`, auth)
    const sessions = await Promise.all(Array.from({ length: 4 }, () => newSession()))
    for (const [i, id] of sessions.entries()) await prompt(id, `[work-${10 + i}] do the work`)
    // The first runner whose every session has written its first file leaves at once: its sessions are in their
    // slow second step then (3 s). Waiting for all four first (on a loaded machine, the other runner's took seconds
    // longer) could let them finish, and there was nothing left to hand over.
    const wrote = new Set<string>()
    const firstWrite = (e: SseEvent) =>
      e.data.type === "tool.completed" &&
      !wrote.has(e.data.sessionID) &&
      (e.data.state.input as { filePath?: string }).filePath === `work-${10 + sessions.indexOf(e.data.sessionID)}-a.txt`
    let leaving: (typeof runners)[number] | undefined
    while (!leaving) {
      const event = await events.waitFor(firstWrite, 60_000).catch((error: unknown) => {
        throw new Error(`${String(error).slice(0, 200)}\nsession errors:\n${errorsIn(events.events)}`)
      })
      if (event.data.type === "tool.completed") wrote.add(event.data.sessionID)
      leaving = runners.find((r) => r.answered().size > 0 && [...r.answered()].every((id) => wrote.has(id)))
    }
    leaving.child.kill("SIGTERM")
    assert.strictEqual(await leaving.exited, 0, leaving.stderr())
    assert.match(leaving.stderr(), /handed over/, leaving.stderr())
    for (const id of sessions) await waitFinished(id, "All done.")
    for (const [i, id] of sessions.entries()) {
      const messages = await messagesOf(id)
      assert.strictEqual(finalText(messages), "All done.")
      assert.strictEqual(writesOf(messages, `work-${10 + i}-a.txt`), 1)
    }
    // Back again: new sessions reach it too.
    const back = await startRunner(env, box.project, leaving.port)
    runners.push(back)
    // Until the cluster has given it shards again (a fixed wait was too short on a loaded machine).
    await holdsShards(`127.0.0.1:${back.port}`)
    const more = await Promise.all(Array.from({ length: 12 }, () => newSession()))
    for (const [i, id] of more.entries()) await prompt(id, `[plain-${20 + i}] again`)
    for (const id of more) await events.waitFor(isIdle(id), 60_000)
    events.close()
    assert.ok(
      [...back.answered()].some((id) => more.includes(id)),
      "the restarted runner took its share back"
    )
  }, 240_000)

  it("answers prompts sent while no runner was up once one starts", async () => {
    server = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
    const events = await readEvents(`${server.url}/events`, auth)
    const id = await newSession()
    await prompt(id, "[plain-99] anyone there?")
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    assert.strictEqual(finalText(await messagesOf(id)), undefined, "nothing answered without a runner")
    runners.push(await startRunner(env, box.project, await freePort()))
    await events.waitFor(isIdle(id), 60_000)
    events.close()
    assert.strictEqual(finalText(await messagesOf(id)), "Answered by a runner.")
  }, 120_000)

  it("rebuilds a cloned session's work tree on another runner: every edit before the kill is in the diff, from any server", async () => {
    const repo = join(box.dir, "upstream")
    mkdirSync(repo)
    writeFileSync(join(repo, "README.md"), "upstream\n")
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: repo })
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    for (let i = 0; i < 2; i++)
      runners.push(await startRunner(env, box.project, await freePort(), join(box.dir, `runner-data-${i}`)))
    server = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
    const created = await api("/sessions", { repo, ref: "main" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const id = String((created.body as { id: string }).id)
    const events = await readEvents(`${server.url}/events?sessionID=${id}`, auth)
    await prompt(id, "[work-30] do the work")
    await events.waitFor(
      (e) =>
        e.data.type === "tool.completed" && (e.data.state.input as { filePath?: string }).filePath === "work-30-a.txt",
      60_000
    )
    const victim = runners.find((r) => r.answered().has(id))
    assert.ok(victim, "a runner holds the session")
    victim.child.kill("SIGKILL")
    await victim.exited
    const messages = await waitFinished(id, "All done.")
    events.close()
    assert.strictEqual(writesOf(messages, "work-30-a.txt"), 1)
    const survivor = runners.find((r) => r !== victim)
    assert.ok(survivor?.answered().has(id), "the other runner took the session over")
    // A second server in front of the same cluster sees the same changes (from the recorded checkpoints).
    const other = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
    try {
      const response = await fetch(`${other.url}/sessions/${id}/diff`, { headers: auth })
      const diff = (await response.json()) as { diff: string; files: Array<{ file: string; status: string }> }
      assert.deepStrictEqual(diff.files.map((f) => `${f.status} ${f.file}`).sort(), [
        "added work-30-a.txt",
        "added work-30-b.txt"
      ])
      assert.match(diff.diff, /\+first/)
      assert.match(diff.diff, /\+second/)
    } finally {
      other.child.kill("SIGKILL")
      await other.exited
    }
    // The upstream repository itself was never touched.
    assert.ok(!existsSync(join(repo, "work-30-a.txt")))
  }, 240_000)

  it("refuses a repo it cannot clone with a clear 400, and keeps no half-made session", async () => {
    server = await startServe(["--port", "0", "--cluster", "--shards", SHARDS], { cwd: box.project, env })
    const before = ((await api("/sessions")).body as Array<unknown>).length
    const created = await api("/sessions", { repo: join(box.dir, "no-such-repo") })
    assert.strictEqual(created.status, 400, JSON.stringify(created.body))
    assert.match(JSON.stringify(created.body), /no-such-repo/)
    assert.strictEqual(((await api("/sessions")).body as Array<unknown>).length, before)
  }, 60_000)

  it("routes a permission answer, an abort, undo and redo to the runner holding the session", async () => {
    await startCluster(2)
    if (!server) throw new Error("no server")
    // An ask waits on the runner; the answer given to the server reaches it.
    const asking = await newSession()
    const events = await readEvents(`${server.url}/events`, auth)
    await prompt(asking, "[ask-1] read the secret")
    const asked = await events.waitFor((e) => e.data.type === "permission.asked" && e.data.sessionID === asking, 60_000)
    const pending = (await api(`/permissions?sessionID=${asking}`)).body as Array<{ id: string; permission: string }>
    assert.deepStrictEqual(
      pending.map((p) => p.permission),
      ["read"]
    )
    assert.strictEqual(asked.data.type === "permission.asked" ? asked.data.id : "", pending[0]?.id)
    const answered = await api(`/permissions/${pending[0]?.id}/reply`, { reply: "once" })
    assert.strictEqual(answered.status, 204, JSON.stringify(answered.body))
    await waitFinished(asking, "Read it.")
    assert.deepStrictEqual((await api(`/permissions?sessionID=${asking}`)).body, [])
    assert.strictEqual((await api("/permissions/per_nope/reply", { reply: "once" })).status, 404)

    // An abort reaches the running turn.
    const slow = await newSession()
    await prompt(slow, "[slow] talk for a while")
    await events.waitFor((e) => e.data.type === "part.delta" && e.data.sessionID === slow, 60_000)
    const aborted = await api(`/sessions/${slow}/abort`, {})
    assert.deepStrictEqual(aborted.body, { aborted: true })
    await events.waitFor(isIdle(slow), 30_000)
    assert.strictEqual(((await api(`/sessions/${slow}`)).body as { status: string }).status, "idle")

    // Undo and redo run where the work tree is.
    const undoing = await newSession()
    await prompt(undoing, "[undo] make undo-me.txt")
    await waitFinished(undoing, "Wrote it.")
    await events.waitFor(isIdle(undoing), 30_000)
    const file = join(box.project, "undo-me.txt")
    assert.strictEqual(readFileSync(file, "utf8"), "made on a runner\n")
    const undone = await api(`/sessions/${undoing}/undo`, {})
    assert.strictEqual(undone.status, 200, JSON.stringify(undone.body))
    assert.ok(!existsSync(file), "undo removed the file")
    const redone = await api(`/sessions/${undoing}/redo`, {})
    assert.strictEqual(redone.status, 200, JSON.stringify(redone.body))
    assert.strictEqual(readFileSync(file, "utf8"), "made on a runner\n")
    const again = await api(`/sessions/${undoing}/redo`, {})
    assert.strictEqual(again.status, 409, JSON.stringify(again.body))
    events.close()
  }, 180_000)

  it("says what is wrong with a cluster command's store, shards or port (exit 2), and an unreachable store (exit 1)", async () => {
    const bare = { ...box.env }
    const noStore = await runLathe(["runner"], { cwd: box.project, env: bare })
    assert.strictEqual(noStore.code, 2)
    assert.match(noStore.stderr, /--store postgres:\/\/.*LATHE_STORE/)
    const notPg = await runLathe(["serve", "--cluster", "--store", "sqlite"], { cwd: box.project, env: bare })
    assert.strictEqual(notPg.code, 2)
    assert.match(notPg.stderr, /must be a postgres:\/\/ URL/)
    const shards = await runLathe(["runner", "--store", "postgres://x@127.0.0.1:1/db", "--shards", "0"], {
      cwd: box.project,
      env: bare
    })
    assert.strictEqual(shards.code, 2)
    assert.match(shards.stderr, /shard count must be a whole number/)
    const port = await runLathe(["runner", "--store", "postgres://x@127.0.0.1:1/db", "--port", "99999"], {
      cwd: box.project,
      env: bare
    })
    assert.strictEqual(port.code, 2)
    const unreachable = await runLathe(["cluster", "status", "--store", "postgres://lathe:s3cret@127.0.0.1:1/db"], {
      cwd: box.project,
      env: bare
    })
    assert.strictEqual(unreachable.code, 1)
    assert.match(unreachable.stderr, /could not read postgres:\/\/lathe:\*\*\*@127\.0\.0\.1:1\/db/)
    assert.notInclude(unreachable.stderr, "s3cret")
    const runnerDown = await runLathe(["runner", "--store", "postgres://lathe:s3cret@127.0.0.1:1/db"], {
      cwd: box.project,
      env: bare
    })
    assert.strictEqual(runnerDown.code, 1)
    assert.notInclude(runnerDown.stderr, "s3cret")
  }, 60_000)
})
