/**
 * "Walls, round three": `lathe serve` opened every folder of the machine to its token holder (`POST /sessions
 * {"directory": …}` ran the agent in any existing folder, trusted ones included) and read request bodies of any size
 * (200 MB → +1 GiB). End to end against the real `lathe serve`: a trusted folder outside the served one is refused
 * (by name and through a symlink inside) unless allowed with --allow-directory, and a 200 MB body gets 413 while
 * the server's resident memory stays low.
 */
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { type ServeProcess, startServe } from "./serve-helpers.js"

let model: ScriptedServer
let box: ReturnType<typeof sandbox>
let env: Record<string, string>
let outside: string
const servers: Array<ServeProcess> = []

const serveWith = async (args: ReadonlyArray<string>): Promise<ServeProcess> => {
  const server = await startServe(["--port", "0", ...args], { cwd: box.project, env })
  servers.push(server)
  return server
}

/** `POST /sessions` with a plain fetch, as any holder of the token would send it. */
const create = async (server: ServeProcess, directory: string) => {
  const response = await fetch(`${server.url}/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ directory })
  })
  return {
    status: response.status,
    body: (await response.json()) as { directory?: string; error?: { code: string; message: string } }
  }
}

/** The resident memory of a process, in bytes (`VmRSS` of /proc/<pid>/status). */
const rss = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? Number.NaN) * 1024
}

/**
 * Streams a 200 MB body to `POST /sessions` in 1 MB chunks (chunked, or with its Content-Length), stopping once the
 * server answers. Resolves with the status and how much was written by then.
 */
const upload = (server: ServeProcess, declareLength: boolean): Promise<{ status: number; written: number }> =>
  new Promise((resolve, reject) => {
    const url = new URL(server.url)
    const total = 200 * 1024 * 1024
    const chunk = Buffer.alloc(1024 * 1024, 0x20)
    let written = 0
    let answered = false
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: "/sessions",
        method: "POST",
        headers: {
          host: url.host,
          authorization: `Bearer ${server.token}`,
          "content-type": "application/json",
          ...(declareLength ? { "content-length": String(total) } : {})
        }
      },
      (res) => {
        answered = true
        res.resume()
        res.on("end", () => {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, written })
        })
      }
    )
    req.on("error", (error) => (answered ? undefined : reject(error)))
    const pump = () => {
      while (written < total && !answered && !req.destroyed) {
        written += chunk.length
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      if (written >= total && !answered) req.end()
    }
    pump()
  })

beforeAll(async () => {
  model = await startScriptedServer(() => ({ steps: [{ text: "Hello." }] }))
  box = sandbox()
  env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
  // A folder of the person's beside the project, trusted (its own config applies in full there).
  outside = join(box.dir, "elsewhere")
  mkdirSync(outside)
  writeFileSync(join(outside, "lathe.json"), JSON.stringify({ permission: { bash: "allow" } }))
  const trusted = await runLathe(["trust"], { cwd: outside, env })
  assert.strictEqual(trusted.code, 0, trusted.stderr)
  // A link committed inside the served project that leads to it.
  symlinkSync(outside, join(box.project, "link-out"))
}, 60_000)

afterAll(async () => {
  for (const server of servers) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  await model?.close()
})

describe("walls3: lathe serve is scoped to its directory", () => {
  it("payload bites: the outside folder exists, is trusted, and is what a request can name", () => {
    const trust = readFileSync(join(env.LATHE_DATA_DIR ?? "", "trust.json"), "utf8")
    assert.include(trust, realpathSync(outside))
  })

  it("refuses a folder outside the served one, by name and through a symlink inside, with 403 naming the flag", async () => {
    const server = await serveWith([])
    for (const directory of [outside, "link-out", join(box.project, "..", "elsewhere")]) {
      const refused = await create(server, directory)
      assert.strictEqual(refused.status, 403, JSON.stringify(refused.body))
      assert.strictEqual(refused.body.error?.code, "forbidden")
      assert.include(refused.body.error?.message, `--allow-directory ${realpathSync(outside)}`)
    }
    const inside = await create(server, ".")
    assert.strictEqual(inside.status, 201, JSON.stringify(inside.body))
  }, 60_000)

  it("takes the folder once it is allowed with --allow-directory", async () => {
    const server = await serveWith(["--allow-directory", outside])
    const created = await create(server, outside)
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body.directory, realpathSync(outside))
  }, 60_000)

  it("answers a 200 MB body with 413 before reading it, and the server's memory does not grow with it", async () => {
    const server = await serveWith([])
    const pid = server.child.pid ?? 0
    // Warm: the first request builds what every request uses.
    assert.strictEqual((await create(server, ".")).status, 201)
    const before = rss(pid)
    for (const declareLength of [true, false]) {
      const answer = await upload(server, declareLength)
      assert.strictEqual(answer.status, 413)
      assert.isBelow(answer.written, 200 * 1024 * 1024, "the server answered before the whole body was sent")
    }
    const grew = rss(pid) - before
    assert.isBelow(grew, 50 * 1024 * 1024, `the server's RSS grew by ${Math.round(grew / 1024 / 1024)} MB`)
    // Still serving.
    assert.strictEqual((await create(server, ".")).status, 201)
  }, 60_000)
})
