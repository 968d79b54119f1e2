/** A database of its own for a test file, on the run's throwaway Postgres (LATHE_TEST_PG_URL). */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"

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
