// A throwaway PostgreSQL server for tests, from Debian's `postgresql` package (initdb + pg_ctl; no download).
//
//   import { startPostgres } from "../../scripts/test-postgres.mjs"
//   const pg = await startPostgres()        // { url, stop }
//
// As a vitest globalSetup (`globalSetup: ["../../scripts/test-postgres.mjs"]`) it starts one server per vitest run,
// unless LATHE_TEST_PG_URL is already set (then that server is used), and exposes its URL to the tests as
// LATHE_TEST_PG_URL. Tests isolate themselves with a database of their own (see `createDatabase`).
// Postgres refuses to run as root: as root the server runs as the `postgres` user through runuser.
import { execFile, execFileSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/** The directory of initdb/pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
const binDir = () => {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length === 0)
    throw new Error(
      "No PostgreSQL server binaries found (looked in /usr/lib/postgresql/*/bin). Install Debian's package: " +
        "`apt-get install postgresql` (.ci/run does), set PG_BIN to a directory holding initdb and pg_ctl, or point " +
        "LATHE_TEST_PG_URL at a server you run."
    )
  return join(root, versions[0], "bin")
}

/** runuser (util-linux) lives in /usr/sbin, which a CI PATH may leave out. */
const runuser = () => ["/usr/sbin/runuser", "/sbin/runuser"].find((path) => existsSync(path)) ?? "runuser"

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Starts a server on a free loopback port, trusting every local connection; `stop()` removes it and its files. */
export const startPostgres = async () => {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), "lathe-pg-"))
  const root = typeof process.getuid === "function" && process.getuid() === 0
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim())
    chownSync(dir, uid, gid)
  }
  chmodSync(dir, 0o700)
  const as = (cmd, args) =>
    root ? run(runuser(), ["-u", "postgres", "--", join(bin, cmd), ...args]) : run(join(bin, cmd), args)
  await as("initdb", ["-D", join(dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=300"
  ].join(" ")
  await as("pg_ctl", ["-D", join(dir, "data"), "-l", join(dir, "log"), "-w", "-o", options, "start"])
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await as("pg_ctl", ["-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
  return { url, port, stop }
}

/** vitest globalSetup: one server for the run (unless LATHE_TEST_PG_URL names one), stopped at the end. */
export default async function setup() {
  if (process.env.LATHE_TEST_PG_URL) return
  const pg = await startPostgres()
  process.env.LATHE_TEST_PG_URL = pg.url
  return async () => {
    await pg.stop()
  }
}
