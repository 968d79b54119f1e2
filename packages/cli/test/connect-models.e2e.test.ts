/**
 * `/connect` for an OpenAI-compatible server asks the server which models it has (`GET <baseURL>/models`) and offers
 * them, instead of a placeholder id: the real UI in a pseudo-terminal, a real HTTP server on 127.0.0.1 listing two
 * models and passing everything else to the scripted model server. A server that lists nothing still gets a typed id.
 */
import { existsSync, readFileSync } from "node:fs"
import { createServer, request as httpRequest, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { parse } from "jsonc-parser"
import { afterEach, assert, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await closeAll()
  for (const close of closers.splice(0)) await close()
})

/**
 * An OpenAI-compatible server: `GET /v1/models` lists `models` (or answers `status` with no list), every other
 * request goes to a scripted model that answers `answer`. Records the paths of the `GET /v1/models` requests.
 */
const server = async (models: ReadonlyArray<string>, answer: string, status = 200) => {
  const scripted: ScriptedServer = await startScriptedServer(() => ({ steps: [{ text: answer }] }))
  const listed: Array<string> = []
  const upstream = new URL(scripted.url)
  const front: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/v1/models") {
      listed.push(req.url)
      res.writeHead(status, { "content-type": "application/json" })
      res.end(
        JSON.stringify(
          status === 200
            ? { object: "list", data: models.map((id) => ({ id, object: "model", owned_by: "test" })) }
            : { error: { message: "listing is off" } }
        )
      )
      return
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers)
        reply.pipe(res)
      }
    )
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve))
  closers.push(async () => {
    front.closeAllConnections()
    await new Promise<void>((resolve) => front.close(() => resolve()))
    await scripted.close()
  })
  return { url: `http://127.0.0.1:${(front.address() as AddressInfo).port}/v1`, listed, scripted }
}

/** The UI from source in a pseudo-terminal, in a fresh sandbox, up to /connect's base URL question answered. */
const connectTo = async (url: string) => {
  const box = sandbox()
  const term = spawnTerminal({
    command: process.execPath,
    args: ["--conditions=@lathe/source", "--import", tsx, bin],
    cwd: box.project,
    env: box.env,
    cols: 120,
    rows: 40
  })
  await term.waitFor("no model", 30_000)
  await term.type("/connect")
  await term.waitFor("Set up a model provider")
  term.press("enter")
  await term.waitFor("Which provider?")
  await term.type("compat")
  await term.waitFor("openai-compatible")
  term.press("enter")
  await term.waitFor("Base URL of the server")
  await term.type(url)
  term.press("enter")
  return { box, term }
}

describe("/connect asks an OpenAI-compatible server for its models", () => {
  it("offers the two models GET /v1/models lists; the one chosen is written and answers", {
    timeout: 90_000
  }, async () => {
    const local = await server(["qwen2.5-coder-7b", "llama-3.1-8b-instruct"], "answered by the listed model")
    const { box, term } = await connectTo(local.url)
    await term.waitFor(`2 listed by ${local.url}/models`)
    // The header can be drawn a frame before the list's rows (seen once in CI under load): wait for the last row too.
    await term.waitFor("llama-3.1-8b-instruct")
    // The dialog (the no-model guide above it names example ids of its own).
    const screen = term.screen().slice(term.screen().indexOf("/connect Enter"))
    assert.include(screen, "qwen2.5-coder-7b")
    assert.include(screen, "llama-3.1-8b-instruct")
    assert.notInclude(screen, "qwen3-coder", screen)
    assert.deepStrictEqual(local.listed, ["/v1/models"])

    await term.type("llama")
    term.press("enter")
    await term.waitFor("API key or the variable")
    term.press("enter")
    await term.waitFor("local/llama-3.1-8b-instruct")
    const file = join(box.dir, "config", "lathe", "lathe.json")
    assert.isTrue(existsSync(file))
    assert.deepStrictEqual(parse(readFileSync(file, "utf8")), {
      model: "local/llama-3.1-8b-instruct",
      provider: {
        local: { type: "openai-compatible", baseURL: local.url, models: { "llama-3.1-8b-instruct": {} } }
      }
    })
    await term.type("hello")
    term.press("enter")
    await term.waitFor("answered by the listed model", 30_000)
    const chat = local.scripted.requests.find((r) => r.path.endsWith("/chat/completions"))
    assert.strictEqual((chat?.body as { model?: string } | undefined)?.model, "llama-3.1-8b-instruct")
    assert.strictEqual(await quit(term), 0)
  })

  it("a server that does not list its models: says why, and takes a typed model id", { timeout: 90_000 }, async () => {
    const local = await server([], "unused", 401)
    const { box, term } = await connectTo(local.url)
    await term.waitFor("Model id the server serves")
    await term.waitFor(
      `The server answered ${local.url}/models with HTTP 401 (the key is asked next). Type the model id.`
    )
    await term.type("my-model")
    term.press("enter")
    await term.waitFor("API key or the variable")
    term.press("enter")
    await term.waitFor("local/my-model")
    const written = parse(readFileSync(join(box.dir, "config", "lathe", "lathe.json"), "utf8"))
    assert.strictEqual(written.model, "local/my-model")
    assert.strictEqual(await quit(term), 0)
  })
})
