/**
 * Walls, round three: the key in output. A provider that answers 401 quoting the request's Authorization header (and
 * every other header) reaches neither the terminal, nor the `--format json` events, nor the stored session (`lathe
 * session show`, `lathe export`, the SQLite file's bytes); a tool output holding the key is stored masked; and `lathe
 * config` shows neither a key written in the config nor one a `{env:}` placeholder brought in. End to end through the
 * real CLI with no terminal, against a scripted server on 127.0.0.1.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const KEY = "sk-walls3-2b7e151628aed2a6abf71588"
const ENV_TOKEN = "env-token-09cf4f3c762e7160f38b4da5"

/** Every 10-character piece of each secret is absent from `text` (a cut-short echo leaks a piece, not the whole). */
const holdsNone = (text: string, where: string) => {
  for (const secret of [KEY, ENV_TOKEN])
    for (let at = 0; at + 10 <= secret.length; at++)
      assert.notInclude(text, secret.slice(at, at + 10), `${where} holds a piece of ${secret}`)
}

/** Every file below `dir`, recursively, as bytes read as latin1 (the SQLite database and its write-ahead log). */
const filesBelow = (dir: string): Array<{ readonly file: string; readonly bytes: string }> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory()
      ? filesBelow(path)
      : [{ file: path, bytes: readFileSync(path).toString("latin1") }]
  })

/** The server's answer: a tool call reading `notes.txt` first, then 401 quoting the request's headers. */
const hostile = (request: RecordedRequest) => {
  const body = request.body as { messages?: ReadonlyArray<{ role?: string }>; tools?: unknown }
  const afterTool = body.messages?.some((message) => message.role === "tool") === true
  if (body.tools !== undefined && !afterTool) return { steps: [{ tool: "read", input: { filePath: "notes.txt" } }] }
  return {
    type: "error" as const,
    status: 401,
    body: {
      error: {
        message: `Invalid API key. Received headers: ${JSON.stringify(request.headers)}`,
        type: "invalid_request_error"
      }
    }
  }
}

const setUp = async () => {
  const model = await startScriptedServer(hostile)
  servers.push(model)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/m",
      provider: {
        local: {
          type: "openai-compatible",
          baseURL: model.url,
          apiKey: KEY,
          headers: { "X-Extra-Auth": "{env:EXTRA_AUTH}" },
          models: { m: {} }
        }
      }
    })
  )
  writeFileSync(join(box.project, "notes.txt"), `deploy with ${KEY}\n`)
  const env: Record<string, string> = { ...box.env, EXTRA_AUTH: ENV_TOKEN }
  return { model, box, env }
}

const everything = (run: CliRun) => `${run.stdout}\n${run.stderr}`

describe("walls round three: secrets masked by value", () => {
  it("a provider echoing the Authorization header: no key printed, announced or stored", {
    timeout: 120_000
  }, async () => {
    const { model, box, env } = await setUp()
    // The payload bites without Lathe: the server's raw answer holds both credentials.
    const raw = await fetch(`${model.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "x-extra-auth": ENV_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "tool" }] })
    })
    assert.strictEqual(raw.status, 401)
    const answer = await raw.text()
    assert.include(answer, KEY)
    assert.include(answer, ENV_TOKEN)

    const json = await runLathe(["run", "--format", "json", "read notes.txt"], { cwd: box.project, env })
    assert.notStrictEqual(json.code, 0, everything(json))
    // Lathe did send the key, and the server did echo it.
    assert.isTrue(model.requests.some((request) => request.headers.authorization === `Bearer ${KEY}`))
    assert.isTrue(model.requests.some((request) => request.headers["x-extra-auth"] === ENV_TOKEN))
    holdsNone(everything(json), "lathe run --format json")
    // The tool output the model reads back comes from the stored session: masked too.
    const afterTool = model.requests.find((request) => JSON.stringify(request.body).includes('"tool_call_id"'))
    assert.include(JSON.stringify(afterTool?.body), "deploy with sk-…")
    holdsNone(JSON.stringify(afterTool?.body), "the request after the tool call")
    const error = json.events.find((event) => event.type === "session.error")
    assert.include(error?.type === "session.error" ? error.error.message : "", "Invalid API key", json.stdout)
    const read = json.events.find((event) => event.type === "tool.completed")
    assert.include(JSON.stringify(read), "deploy with sk-…", json.stdout) // the tool output, masked

    const text = await runLathe(["run", "read notes.txt"], { cwd: box.project, env })
    assert.notStrictEqual(text.code, 0)
    assert.include(everything(text), "Invalid API key")
    holdsNone(everything(text), "lathe run")

    for (const args of [
      ["session", "show", "--last", "--full"],
      ["session", "show", "--last", "--json"],
      ["export", "--last", "--format", "md"],
      ["export", "--last", "--format", "json"]
    ]) {
      const shown = await runLathe(args, { cwd: box.project, env })
      assert.strictEqual(shown.code, 0, shown.stderr)
      assert.include(shown.stdout, "Invalid API key", args.join(" "))
      holdsNone(everything(shown), `lathe ${args.join(" ")}`)
    }
    const stored = filesBelow(env.LATHE_DATA_DIR ?? "")
    assert.isTrue(
      stored.some(({ file }) => /\.db(-wal)?$/.test(file)),
      stored.map(({ file }) => file).join("\n")
    )
    assert.isTrue(stored.some(({ bytes }) => bytes.includes("Invalid API key"))) // the error is stored, masked
    for (const { file, bytes } of stored) holdsNone(bytes, file)
  })

  it("lathe config shows a key from the config and one from {env:} only masked", { timeout: 60_000 }, async () => {
    const { box, env } = await setUp()
    const configFile = readFileSync(join(box.dir, "config", "lathe", "lathe.json"), "utf8")
    assert.include(configFile, KEY) // the config holds the key itself, and names the variable
    for (const args of [["config"], ["config", "--json"]]) {
      const shown = await runLathe(args, { cwd: box.project, env })
      assert.strictEqual(shown.code, 0, shown.stderr)
      holdsNone(everything(shown), `lathe ${args.join(" ")}`)
      assert.include(shown.stdout, `sk-…${KEY.slice(-4)}`)
      assert.include(shown.stdout, "X-Extra-Auth")
      assert.include(shown.stdout, `env…${ENV_TOKEN.slice(-4)}`)
    }
  })
})
