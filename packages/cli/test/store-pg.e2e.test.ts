/**
 * End to end: `lathe` with its sessions in Postgres (LATHE_STORE), against the throwaway server of the vitest
 * globalSetup (scripts/test-postgres.mjs), each test on a database of its own.
 */
import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterAll, afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const psql = promisify(execFile)
const serverUrl = () => {
  const url = process.env.LATHE_TEST_PG_URL
  if (!url) throw new Error("LATHE_TEST_PG_URL is not set: the vitest globalSetup starts Postgres.")
  return url
}
/** Runs SQL with psql (Debian's postgresql-client, installed with the server), independent of the store's driver. */
const query = async (url: string, sql: string): Promise<string> =>
  (await psql("psql", [url, "-At", "-c", sql])).stdout.trim()

const databases: Array<string> = []
/** A fresh database on the test server, dropped after the file. */
const freshDatabase = async (): Promise<string> => {
  const name = `t_${randomBytes(6).toString("hex")}`
  await query(serverUrl(), `CREATE DATABASE ${name}`)
  databases.push(name)
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return url.toString()
}
afterAll(async () => {
  for (const name of databases) await query(serverUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
})

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

describe("lathe with LATHE_STORE=postgres://… (end to end)", () => {
  it("stores the session in Postgres: `run --continue` sees it, and no SQLite file is written", async () => {
    server = await startScriptedServer([
      { steps: [{ text: "The secret word is walnut." }] },
      { steps: [{ text: "You asked about walnut." }] }
    ])
    const box = sandbox()
    const url = await freshDatabase()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model", LATHE_STORE: url }
    const first = await runLathe(["run", "--format", "json", "remember walnut"], { cwd: box.project, env })
    assert.strictEqual(first.code, 0, first.stderr)
    const second = await runLathe(["run", "--format", "json", "-c", "what was the word?"], { cwd: box.project, env })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.isFalse(second.events.some((e) => e.type === "session.created"))
    const body = JSON.stringify(server.requests[1]?.body)
    assert.include(body, "remember walnut")
    assert.include(body, "The secret word is walnut.")
    assert.strictEqual(await query(url, "SELECT count(*) FROM lathe_session"), "1")
    assert.strictEqual(await query(url, "SELECT count(*) FROM lathe_message"), "4")
    assert.include(await query(url, "SELECT string_agg(data, ' ') FROM lathe_part"), "You asked about walnut.")
    const data = box.env.LATHE_DATA_DIR ?? ""
    const sqlite = existsSync(data) ? readdirSync(data).filter((file) => file.startsWith("lathe.db")) : []
    assert.deepStrictEqual(sqlite, [], "nothing written to the SQLite store")
  })

  it("a Postgres that is not there fails the run with what to check, and never prints the password", async () => {
    const box = sandbox()
    const url = `postgres://lathe:pg-s3cret@127.0.0.1:${await closedPort()}/lathe`
    const env = { ...box.env, LATHE_BASE_URL: "http://127.0.0.1:9/v1", LATHE_MODEL: "m", LATHE_STORE: url }
    const run = await runLathe(["run", "hi"], { cwd: box.project, env })
    assert.strictEqual(run.code, 1)
    assert.match(run.stderr, /Cannot open the Postgres session store at 127\.0\.0\.1:\d+\/lathe: .*is Postgres running/)
    assert.notInclude(run.stdout + run.stderr, "pg-s3cret")
  })

  it("`lathe doctor` names the store in use and whether it is reachable", async () => {
    const box = sandbox()
    const url = await freshDatabase()
    const local = await runLathe(["doctor"], { cwd: box.project, env: box.env })
    assert.match(local.stdout, new RegExp(`^ok {4}store {4}sqlite ${box.env.LATHE_DATA_DIR}/lathe\\.db$`, "m"))
    const fresh = await runLathe(["doctor"], { cwd: box.project, env: { ...box.env, LATHE_STORE: url } })
    assert.match(fresh.stdout, /^ok {4}store {4}postgres 127\.0\.0\.1:\d+\/t_\w+, reachable, no Lathe tables yet/m)
    const down = `postgres://lathe:pg-s3cret@127.0.0.1:${await closedPort()}/lathe`
    const failed = await runLathe(["doctor"], { cwd: box.project, env: { ...box.env, LATHE_STORE: down } })
    assert.strictEqual(failed.code, 1)
    assert.match(failed.stdout, /^FAIL {2}store {4}Cannot open the Postgres session store at 127\.0\.0\.1:\d+\/lathe/m)
    assert.notInclude(failed.stdout, "pg-s3cret")
  })
})

// The bundled CLI (built by Nx before this package's tests). In the main build (lathe serve, lathe runner) the Postgres
// store is a chunk of its own, imported only when a process uses it. `lathe run` is one CommonJS file
// (dist/bundle/run/run.cjs, so it can start from a V8 code cache), where the store's modules sit behind esbuild's
// lazy initialisers and are evaluated only when a run asks for Postgres.
const bundleDir = fileURLToPath(new URL("../dist/bundle/", import.meta.url))

/** Runs the bundled `lathe`. */
const runBundle = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(bundleDir, "lathe.js"), ...args], {
      cwd,
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stderr }))
  })

describe("the bundled CLI and the Postgres store", () => {
  it("keeps the store out of the main bundle's entry, and runs on Postgres from the run build", async () => {
    const chunks = readdirSync(bundleDir).filter(
      (file) => file.endsWith(".js") && readFileSync(join(bundleDir, file), "utf8").includes("lathe_store_migrations")
    )
    assert.lengthOf(chunks, 1, "one chunk of the main build holds the Postgres store")
    assert.notInclude(chunks, "lathe.js")
    assert.include(readFileSync(join(bundleDir, "run", "run.cjs"), "utf8"), "lathe_store_migrations")
    server = await startScriptedServer([{ steps: [{ text: "local" }] }, { steps: [{ text: "shared" }] }])
    const box = sandbox()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const plain = await runBundle(["run", "hi"], box.project, env)
    assert.strictEqual(plain.code, 0, plain.stderr)
    const url = await freshDatabase()
    const pg = await runBundle(["run", "hi"], box.project, { ...env, LATHE_STORE: url })
    assert.strictEqual(pg.code, 0, pg.stderr)
    assert.strictEqual(await query(url, "SELECT count(*) FROM lathe_session"), "1")
  })
})
