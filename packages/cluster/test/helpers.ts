/** What the cluster tests share: a database of their own on the run's throwaway Postgres, free ports, cleanups. */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createServer } from "node:net"
import { afterEach } from "vitest"

/** The server URL the globalSetup started. */
export const serverUrl = (): string => {
  const url = process.env.LATHE_TEST_PG_URL
  if (!url)
    throw new Error("LATHE_TEST_PG_URL is not set: run the tests through vitest (its globalSetup starts Postgres).")
  return url
}

/** Creates an empty database and returns its URL. */
export const freshDatabase = (): string => {
  const name = `t_${randomBytes(6).toString("hex")}`
  execFileSync("psql", [serverUrl(), "-q", "-c", `CREATE DATABASE ${name}`])
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return url.toString()
}

/** A port nothing listens on now (for a runner's address). */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Cleanups run after each test, newest first; register with `cleanups.push(...)`. */
export const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
