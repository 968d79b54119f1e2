import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient, LatheApi, LatheApiError, makeLatheClient } from "@lathe/sdk"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { OpenApi } from "effect/http-api"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { lastUserText, type ServeProcess, startServe, toolResults } from "./serve-helpers.js"

// Both SDK clients against a real `lathe serve` process and the scripted model; the README's script runs as written.
const TOKEN = "sdk-s3cret"
const root = fileURLToPath(new URL("../../../", import.meta.url))
const tsx = import.meta.resolve("tsx")

/** The scripted model: each prompt's scenario is chosen by its text, each step by the tool results so far. */
const model = (request: RecordedRequest): ScriptedReply | undefined => {
  const text = lastUserText(request)
  const step = toolResults(request)
  if (text.includes("hello.txt"))
    return step === 0
      ? { steps: [{ tool: "write", input: { filePath: "hello.txt", content: "hello, world\n" } }] }
      : { steps: [{ text: "Created hello.txt." }] }
  if (text.includes("[reject]"))
    return step === 0
      ? { steps: [{ tool: "write", input: { filePath: "nope.txt", content: "no\n" } }] }
      : { steps: [{ text: "Understood, I left it." }] }
  return { steps: [{ text: "Hello from the scripted model." }] }
}

let scripted: ScriptedServer
let server: ServeProcess
let project: string

beforeAll(async () => {
  scripted = await startScriptedServer(model)
  const box = sandbox()
  project = box.project
  writeFileSync(join(project, "lathe.json"), JSON.stringify({ permission: { edit: "ask" } }))
  server = await startServe(["--port", "0", "--token", TOKEN], {
    cwd: project,
    env: { ...box.env, LATHE_BASE_URL: scripted.url, LATHE_MODEL: "m" }
  })
})

afterAll(async () => {
  server?.child.kill("SIGTERM")
  await server?.exited
  await scripted?.close()
})

/** The README's example, exactly as the README shows it. */
const readmeScript = (): string => {
  const readme = readFileSync(join(root, "packages/sdk/README.md"), "utf8")
  const match = /<!-- readme-script[^>]*-->\n```ts\n([\s\S]*?)```/.exec(readme)
  if (!match?.[1]) throw new Error("packages/sdk/README.md has no readme-script block")
  return match[1]
}

/** Runs a TypeScript module as a user would (with the workspace's packages), returning its output. */
const runScript = (code: string, env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-sdk-script-"))
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
  writeFileSync(join(dir, "script.mts"), code)
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, "script.mts"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("error", reject)
    child.on("close", (exit) => {
      clearTimeout(timer)
      resolve({ code: exit, stdout, stderr })
    })
  })
}

describe("@lathe/sdk against lathe serve", () => {
  it("the README's script creates a session, prompts, answers the ask and prints the diff", async () => {
    const run = await runScript(readmeScript(), { LATHE_URL: server.url, LATHE_SERVER_TOKEN: TOKEN })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "allowing edit: hello.txt")
    assert.match(run.stdout, /\+\+\+ b\/hello\.txt[\s\S]*\+hello, world/)
    assert.strictEqual(readFileSync(join(project, "hello.txt"), "utf8"), "hello, world\n")
  })

  it("Promise client: an ask rejected with a message, events until idle, messages, an empty diff", async () => {
    const lathe = createLatheClient({ baseUrl: server.url, token: TOKEN })
    assert.deepEqual((await lathe.health()).ok, true)
    const session = await lathe.sessions.create({ title: "reject" })
    const events = lathe.events({ sessionID: session.id })
    await events.ready
    const accepted = await lathe.sessions.prompt(session.id, "[reject] write nope.txt")
    assert.isFalse(accepted.queued)
    const types: Array<string> = []
    for await (const event of events) {
      types.push(event.type)
      if (event.type === "permission.asked")
        await lathe.permissions.reply(event.id, { reply: "reject", message: "Not that file." })
      if (event.type === "session.idle") break
    }
    assert.includeMembers(types, ["permission.asked", "permission.replied", "tool.error", "session.idle"])
    assert.match(events.lastEventId ?? "", /^\d+$/)
    const messages = await lathe.sessions.messages(session.id)
    assert.strictEqual(messages[0]?.info.id, accepted.messageID)
    const parts = messages.flatMap((m) => m.parts)
    assert.isTrue(parts.some((p) => p.type === "text" && p.text === "Understood, I left it."))
    assert.deepEqual(await lathe.sessions.diff(session.id), { diff: "", files: [] })
    assert.deepEqual(await lathe.permissions.list({ sessionID: session.id }), [])

    const missing = await lathe.sessions.get("ses_unknown").catch((error: unknown) => error)
    assert.instanceOf(missing, LatheApiError)
    assert.include(missing, { status: 404, code: "not_found" })
  })

  it("Effect client: a typed NotFound for an unknown session, a typed Unauthorized without the token", async () => {
    const program = Effect.gen(function* () {
      const lathe = yield* makeLatheClient({ baseUrl: server.url, token: TOKEN })
      const health = yield* lathe.system.health()
      const missing = yield* lathe.sessions.get({ params: { id: "ses_unknown" } }).pipe(Effect.flip)
      const anonymous = yield* makeLatheClient({ baseUrl: server.url })
      const refused = yield* anonymous.sessions.list({ query: {} }).pipe(Effect.flip)
      return { health, missing, refused }
    })
    const { health, missing, refused } = await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
    assert.isTrue(health.ok)
    assert.strictEqual("error" in missing ? missing.error.code : undefined, "not_found")
    assert.strictEqual("error" in refused ? refused.error.code : undefined, "unauthorized")
  })

  it("the OpenAPI document, served and built offline, is valid OpenAPI 3.1 and lists every route", async () => {
    const served: unknown = await (
      await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()
    const offline = OpenApi.fromApi(LatheApi)
    for (const doc of [served, offline]) {
      const validator = new Validator()
      const result = await validator.validate(doc as Parameters<Validator["validate"]>[0])
      assert.isTrue(result.valid, JSON.stringify(result.errors))
      assert.strictEqual(validator.version, "3.1")
    }
    const paths = (doc: unknown) => Object.keys((doc as { paths: Record<string, unknown> }).paths).sort()
    assert.deepEqual(paths(served), paths(offline))
    assert.includeMembers(paths(served), ["/sessions/{id}/prompt", "/events", "/permissions/{requestID}/reply"])
  })
})
