import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { byScenario, readEvents, type ServeProcess, startServe } from "./serve-helpers.js"

// Black-box tests of `lathe serve`: real server processes on loopback, raw fetch and a plain SSE reader, against the
// scripted model server. One shared server (with a token) serves most tests; each test uses its own session and a
// `[marker]` in its prompt that picks the model's script, so the tests are independent of each other.
const TOKEN = "s3cret-token"
const auth = { authorization: `Bearer ${TOKEN}` }

let model: ScriptedServer
let server: ServeProcess
let box: ReturnType<typeof sandbox>
let env: Record<string, string>

const api = async (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { ...auth, "content-type": "application/json", ...init.headers },
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

const newSession = async () => {
  const created = await api("/sessions", { body: {} })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  return String(created.body?.id)
}

const isIdle = (sessionID: string) => (e: { data: LatheEvent }) =>
  e.data.type === "session.idle" && e.data.sessionID === sessionID

beforeAll(async () => {
  model = await startScriptedServer(
    byScenario({
      write: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "write", input: { filePath: "hello.txt", content: "hello from the agent\n" } }] }
          : { steps: [{ text: "Wrote hello.txt." }] },
      plain: () => ({ steps: [{ text: "Just text." }] }),
      question: (_request, step) =>
        step === 0
          ? {
              steps: [
                {
                  tool: "question",
                  input: { questions: [{ question: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] }
                }
              ]
            }
          : { steps: [{ text: "Blue it is." }] },
      undo: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "write", input: { filePath: "undo-me.txt", content: "made by the agent\n" } }] }
          : { steps: [{ text: "Wrote undo-me.txt." }] },
      ask: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "read", input: { filePath: "secret.env" } }] }
          : { steps: [{ text: "Read it." }] },
      slow: () => ({ steps: Array.from({ length: 60 }, (_, i) => ({ text: `chunk ${i} ` })), delayMs: 100 }),
      brief: () => ({ steps: Array.from({ length: 8 }, (_, i) => ({ text: `part ${i} ` })), delayMs: 40 })
    })
  )
  box = sandbox()
  writeFileSync(join(box.project, "secret.env"), "TOKEN=abc\n")
  // The user's own config lets agents ask questions (the defaults deny the question tool).
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(configDir, { recursive: true })
  writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ permission: { question: "allow" } }))
  env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m", LATHE_SERVER_TOKEN: TOKEN }
  // Sessions may also name folders beside the project (the "another directory" test): they must be allowed.
  server = await startServe(["--port", "0", "--allow-directory", box.dir], { cwd: box.project, env })
}, 40_000)

afterAll(async () => {
  server?.child.kill("SIGKILL")
  await model?.close()
})

describe("lathe serve", () => {
  it("undoes and redoes a session's step over HTTP, then deletes the session", async () => {
    const sessionID = await newSession()
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    await api(`/sessions/${sessionID}/prompt`, { body: { text: "[undo] make undo-me.txt" } })
    await events.waitFor(isIdle(sessionID))
    events.close()
    const file = join(box.project, "undo-me.txt")
    assert.strictEqual(readFileSync(file, "utf8"), "made by the agent\n")

    const undone = await api(`/sessions/${sessionID}/undo`, { method: "POST" })
    assert.strictEqual(undone.status, 200, JSON.stringify(undone.body))
    assert.deepStrictEqual(undone.body?.files, ["undo-me.txt"])
    assert.throws(() => readFileSync(file, "utf8"))
    assert.strictEqual((await api(`/sessions/${sessionID}/diff`)).body?.diff, "")

    const redone = await api(`/sessions/${sessionID}/redo`, { method: "POST" })
    assert.strictEqual(redone.status, 200, JSON.stringify(redone.body))
    assert.strictEqual(readFileSync(file, "utf8"), "made by the agent\n")
    const again = await api(`/sessions/${sessionID}/redo`, { method: "POST" })
    assert.strictEqual(again.status, 409)
    assert.match(String((again.body?.error as { message?: string } | undefined)?.message), /\S/)

    assert.strictEqual((await api(`/sessions/${sessionID}`, { method: "DELETE" })).status, 204)
    assert.strictEqual((await api(`/sessions/${sessionID}`)).status, 404)
  })

  it("answers a request sent the instant the port is bound, and prints the URL first", async () => {
    const response = await fetch(`${server.url}/health`, { headers: auth })
    const waited = performance.now() - server.listeningAt
    assert.strictEqual(response.status, 200)
    assert.deepInclude(await response.json(), { ok: true })
    // Answered, not refused or held until start-up work ends; how fast is bench/server.ts's figure, not this test's
    // (on a loaded 2-core CI machine running two test files at once this took 2.9 s).
    assert.isBelow(waited, 10_000)
    assert.match(server.stdout(), /^listening on http:\/\/127\.0\.0\.1:\d+\n/)
  })

  it("creates a session, runs a prompt to idle over SSE, and shows its messages and diff", async () => {
    const sessionID = await newSession()
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    const accepted = await api(`/sessions/${sessionID}/prompt`, { body: { text: "[write] make hello.txt" } })
    assert.strictEqual(accepted.status, 202)
    assert.strictEqual(accepted.body?.queued, false)
    await events.waitFor(isIdle(sessionID))
    events.close()
    assert.isTrue(events.events.every((e) => e.id !== undefined && e.event === e.data.type))
    assert.isTrue(events.events.some((e) => e.data.type === "tool.completed" && e.data.tool === "write"))
    assert.strictEqual(readFileSync(join(box.project, "hello.txt"), "utf8"), "hello from the agent\n")

    const messages = await api(`/sessions/${sessionID}/messages`)
    const list = messages.body as unknown as Array<{ info: { id: string; role: string } }>
    assert.deepStrictEqual(
      list.map((m) => m.info.role),
      ["user", "assistant", "assistant"]
    )
    assert.strictEqual(list[0]?.info.id, accepted.body?.messageID)
    const diff = await api(`/sessions/${sessionID}/diff`)
    assert.strictEqual(diff.status, 200)
    assert.include(String(diff.body?.diff), "+hello from the agent")
    assert.deepStrictEqual(diff.body?.files, [{ file: "hello.txt", status: "added", additions: 1, deletions: 0 }])
  })

  it("runs a session in another directory named at creation, with that directory's files", async () => {
    const other = join(box.dir, "other")
    mkdirSync(other)
    const created = await api("/sessions", { body: { directory: other } })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const sessionID = String(created.body?.id)
    assert.strictEqual(created.body?.directory, realpathSync(other))
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    await api(`/sessions/${sessionID}/prompt`, { body: { text: "[write-3] there" } })
    await events.waitFor(isIdle(sessionID))
    events.close()
    assert.strictEqual(readFileSync(join(other, "hello.txt"), "utf8"), "hello from the agent\n")
    const listed = await api(`/sessions?directory=${encodeURIComponent(other)}`)
    assert.deepStrictEqual(
      (listed.body as unknown as Array<{ id: string }>).map((s) => s.id),
      [sessionID]
    )
  })

  it("clones a repo for a session created with { repo, ref }, works in the clone, and diffs from its checkpoints", async () => {
    const repo = join(box.dir, "upstream")
    mkdirSync(repo)
    writeFileSync(join(repo, "README.md"), "upstream\n")
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: repo })
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    git("tag", "v1")
    writeFileSync(join(repo, "README.md"), "changed after v1\n")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "later")
    const created = await api("/sessions", { body: { repo, ref: "v1" } })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const sessionID = String(created.body?.id)
    const clone = String(created.body?.directory)
    assert.notStrictEqual(clone, realpathSync(repo))
    assert.strictEqual(readFileSync(join(clone, "README.md"), "utf8"), "upstream\n", "the clone is at the tag")
    assert.deepStrictEqual(created.body?.workspace, { repo, ref: "v1" })
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    const accepted = await api(`/sessions/${sessionID}/prompt`, { body: { text: "[write-4] in the clone" } })
    assert.strictEqual(accepted.status, 202, JSON.stringify(accepted.body))
    await events.waitFor(isIdle(sessionID))
    events.close()
    assert.strictEqual(readFileSync(join(clone, "hello.txt"), "utf8"), "hello from the agent\n")
    assert.ok(!existsSync(join(repo, "hello.txt")), "the upstream repository is untouched")
    const diff = await api(`/sessions/${sessionID}/diff`)
    assert.strictEqual(diff.status, 200)
    assert.include(String(diff.body?.diff), "+hello from the agent")
    assert.deepStrictEqual(diff.body?.files, [{ file: "hello.txt", status: "added", additions: 1, deletions: 0 }])
    const both = await api("/sessions", { body: { repo, directory: box.project } })
    assert.strictEqual(both.status, 400)
    const unknownRef = await api("/sessions", { body: { repo, ref: "no-such-ref" } })
    assert.strictEqual(unknownRef.status, 400)
    assert.include(JSON.stringify(unknownRef.body), "no-such-ref")
  })

  it("runs two sessions prompted at once to the end", async () => {
    const [a, b] = [await newSession(), await newSession()]
    const events = await readEvents(`${server.url}/events`, auth)
    const [pa, pb] = await Promise.all([
      api(`/sessions/${a}/prompt`, { body: { text: "[plain-1] first" } }),
      api(`/sessions/${b}/prompt`, { body: { text: "[plain-2] second" } })
    ])
    assert.deepStrictEqual([pa.status, pb.status], [202, 202])
    await Promise.all([events.waitFor(isIdle(a)), events.waitFor(isIdle(b))])
    events.close()
    for (const id of [a, b]) {
      const list = (await api(`/sessions/${id}/messages`)).body as unknown as Array<{ parts: Array<{ text?: string }> }>
      assert.strictEqual(list.at(-1)?.parts.find((p) => p.text)?.text, "Just text.")
    }
  })

  it("queues a prompt sent while a turn runs and answers it in another turn after that one", async () => {
    const sessionID = await newSession()
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    const first = await api(`/sessions/${sessionID}/prompt`, { body: { text: "[brief] first" } })
    await events.waitFor((e) => e.data.type === "part.delta")
    const second = await api(`/sessions/${sessionID}/prompt`, { body: { text: "[plain-5] and then this" } })
    assert.deepStrictEqual([first.body?.queued, second.body?.queued], [false, true])
    const started = await events.waitFor(
      (e) => e.data.type === "session.started" && e.data.messageID === second.body?.messageID
    )
    await events.waitFor((e) => isIdle(sessionID)(e) && Number(e.id) > Number(started.id))
    const list = (await api(`/sessions/${sessionID}/messages`)).body as unknown as Array<{
      info: { role: string; parentID?: string }
    }>
    assert.deepStrictEqual(
      list.map((m) => m.info.role),
      ["user", "assistant", "user", "assistant"]
    )
    assert.strictEqual(list[3]?.info.parentID, second.body?.messageID)
    events.close()
  })

  it("waits for a permission ask answered over HTTP: once runs the tool, reject tells the model why", async () => {
    for (const reply of ["once", "reject"] as const) {
      const sessionID = await newSession()
      const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
      await api(`/sessions/${sessionID}/prompt`, { body: { text: `[ask-${reply === "once" ? 1 : 2}] read it` } })
      const asked = await events.waitFor((e) => e.data.type === "permission.asked")
      const pending = await api(`/permissions?sessionID=${sessionID}`)
      const list = pending.body as unknown as Array<{ id: string; permission: string }>
      assert.deepStrictEqual(
        list.map((p) => p.permission),
        ["read"]
      )
      assert.strictEqual(asked.data.type === "permission.asked" ? asked.data.id : "", list[0]?.id)
      const body = reply === "once" ? { reply } : { reply, message: "not that file, use config.json" }
      const answered = await api(`/permissions/${list[0]?.id}/reply`, { body })
      assert.strictEqual(answered.status, 204, JSON.stringify(answered.body))
      const done = await events.waitFor((e) => e.data.type === "tool.completed" || e.data.type === "tool.error")
      events.close()
      if (reply === "once") assert.strictEqual(done.data.type, "tool.completed")
      else {
        assert.strictEqual(done.data.type, "tool.error")
        await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth).then(async (r) => {
          const idle = await api(`/sessions/${sessionID}`)
          if (idle.body?.status !== "idle") await r.waitFor(isIdle(sessionID))
          r.close()
        })
        const next = model.requests.findLast((r) => JSON.stringify(r.body).includes("[ask-2]"))
        assert.include(JSON.stringify(next?.body), "not that file, use config.json")
      }
    }
    assert.strictEqual((await api("/permissions/per_nope/reply", { body: { reply: "once" } })).status, 404)
  })

  it("waits for a tool's questions answered over HTTP, and the model gets the answer", async () => {
    const sessionID = await newSession()
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    await api(`/sessions/${sessionID}/prompt`, { body: { text: "[question] pick a colour" } })
    const asked = await events.waitFor((e) => e.data.type === "question.asked")
    const pending = await api(`/questions?sessionID=${sessionID}`)
    const list = pending.body as unknown as Array<{ id: string; questions: Array<{ question: string }> }>
    assert.deepStrictEqual(
      list.map((q) => q.questions.map((item) => item.question)),
      [["Which colour?"]]
    )
    assert.strictEqual(asked.data.type === "question.asked" ? asked.data.id : "", list[0]?.id)
    const answered = await api(`/questions/${list[0]?.id}/reply`, { body: { answers: [["blue"]] } })
    assert.strictEqual(answered.status, 204, JSON.stringify(answered.body))
    await events.waitFor(isIdle(sessionID))
    events.close()
    const next = model.requests.findLast((r) => JSON.stringify(r.body).includes("[question]"))
    assert.include(JSON.stringify(next?.body), "blue")
    assert.deepStrictEqual(
      (await api(`/questions?sessionID=${sessionID}`)).body,
      [] as unknown as Record<string, unknown>
    )
    assert.strictEqual((await api("/questions/que_nope/reply", { body: { answers: [] } })).status, 404)
  })

  it("aborts a turn during a slow stream and leaves the session idle and promptable", async () => {
    const sessionID = await newSession()
    const events = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    await api(`/sessions/${sessionID}/prompt`, { body: { text: "[slow] take your time" } })
    await events.waitFor((e) => e.data.type === "part.delta")
    const aborted = await api(`/sessions/${sessionID}/abort`, { body: {} })
    assert.deepStrictEqual(aborted.body, { aborted: true })
    await events.waitFor(isIdle(sessionID), 5_000)
    events.close()
    const list = (await api(`/sessions/${sessionID}/messages`)).body as unknown as Array<{
      info: { role: string; error?: { name: string } }
    }>
    assert.strictEqual(list.at(-1)?.info.error?.name, "Aborted")
    assert.strictEqual((await api(`/sessions/${sessionID}`)).body?.status, "idle")
    assert.deepStrictEqual((await api(`/sessions/${sessionID}/abort`, { body: {} })).body, { aborted: false })
  })

  it("needs the token on API routes, /openapi.json and unknown paths", async () => {
    for (const path of ["/sessions", "/openapi.json", "/health", "/no/such/path"]) {
      for (const headers of [{}, { authorization: "Bearer wrong" }]) {
        const response = await fetch(`${server.url}${path}`, { headers })
        assert.strictEqual(response.status, 401, `${path} ${JSON.stringify(headers)}`)
        const body = (await response.json()) as { error: { code: string; message: string } }
        assert.strictEqual(body.error.code, "unauthorized")
        assert.include(body.error.message, "Bearer")
      }
    }
    const openapi = await api("/openapi.json")
    assert.strictEqual(openapi.status, 200)
    assert.strictEqual(openapi.body?.openapi, "3.1.0")
  })

  it("replays what a reconnecting client missed after Last-Event-ID, without gaps or duplicates", async () => {
    const sessionID = await newSession()
    const whole = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    const first = await readEvents(`${server.url}/events?sessionID=${sessionID}`, auth)
    await api(`/sessions/${sessionID}/prompt`, { body: { text: "[write-2] make it again" } })
    const seen = await first.waitFor((e) => e.data.type === "session.started")
    first.close()
    const second = await readEvents(`${server.url}/events?sessionID=${sessionID}`, {
      ...auth,
      "last-event-id": String(seen.id)
    })
    await Promise.all([second.waitFor(isIdle(sessionID)), whole.waitFor(isIdle(sessionID))])
    second.close()
    whole.close()
    const upTo = first.events.slice(0, first.events.indexOf(seen) + 1)
    const joined = [...upTo, ...second.events].map((e) => e.id)
    assert.deepStrictEqual(joined, whole.events.map((e) => e.id).slice(0, joined.length))
    assert.strictEqual(new Set(joined).size, joined.length)
    assert.isAbove(second.events.length, 3)
  })

  it("answers bad JSON with 400 and an unknown session with 404, in the error shape", async () => {
    const errorOf = (reply: { body?: Record<string, unknown> | undefined }) =>
      (reply.body?.error ?? {}) as { code?: string; message?: string }
    const bad = await api("/sessions", { body: "{not json" })
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(errorOf(bad).code, "bad_request")
    assert.include(errorOf(bad).message, "JSON")
    const missing = await api("/sessions/ses_x/prompt", { body: {} })
    assert.strictEqual(missing.status, 400)
    assert.include(errorOf(missing).message, "text")
    const unknown = await api("/sessions/ses_nope")
    assert.strictEqual(unknown.status, 404)
    assert.strictEqual(errorOf(unknown).code, "not_found")
    const dir = await api("/sessions", { body: { directory: "no/such/dir" } })
    assert.strictEqual(dir.status, 400)
    assert.include(errorOf(dir).message, "does not exist")
  })
})

describe("lathe serve, starting and stopping", () => {
  it("refuses a non-loopback hostname without a token (exit 2, says how to fix it)", async () => {
    const own = sandbox()
    const run = await runLathe(["serve", "--no-auth", "--hostname", "0.0.0.0", "--port", "0"], {
      cwd: own.project,
      env: own.env
    })
    assert.strictEqual(run.code, 2)
    assert.include(run.stderr, "--no-auth")
    assert.strictEqual(run.stdout, "")
  })

  it("drains on SIGTERM during a step (exit 0), and `lathe run --session` continues the session", async () => {
    const own = sandbox()
    const ownEnv = { ...own.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
    const serve = await startServe(["--port", "0"], { cwd: own.project, env: ownEnv })
    const headers = { authorization: `Bearer ${serve.token}`, "content-type": "application/json" }
    const created = await fetch(`${serve.url}/sessions`, { method: "POST", body: "{}", headers })
    const sessionID = String(((await created.json()) as { id: string }).id)
    const events = await readEvents(`${serve.url}/events?sessionID=${sessionID}`, headers)
    await fetch(`${serve.url}/sessions/${sessionID}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: "[slow-2] long answer" }),
      headers
    })
    await events.waitFor((e) => e.data.type === "part.delta")
    serve.child.kill("SIGTERM")
    assert.strictEqual(await serve.exited, 0, serve.stderr())
    await events.ended
    assert.include(serve.stderr(), "draining")
    assert.isTrue(events.events.some((e) => isIdle(sessionID)(e)))

    const next = await runLathe(["run", "--session", sessionID, "--format", "json", "[plain-3] go on"], {
      cwd: own.project,
      env: ownEnv
    })
    assert.strictEqual(next.code, 0, next.stderr)
    assert.isTrue(next.events.some((e) => e.type === "session.idle"))
  }, 40_000)
})
