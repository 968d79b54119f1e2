import { StoreError } from "@lathe/core"
import { SqlError } from "effect/sql/SqlError"

/** Where a Postgres URL points, without its credentials: safe to print, log and put in an error. */
export interface PgLocation {
  readonly host: string
  readonly port: number
  readonly database: string
  /** `host:port/database`, e.g. `db.internal:5432/lathe`. */
  readonly label: string
}

const WHERE_TO_FIX = 'LATHE_STORE, or "store": { "type": "postgres", "url": … } in your global config'

/**
 * Reads a `postgres://` / `postgresql://` URL. A URL that is not one fails with a `StoreError` that shows the
 * URL with its password masked and says where it came from. Defaults are libpq's: port 5432, and a database
 * named like the user.
 */
export const parsePgUrl = (url: string): PgLocation | StoreError => {
  const bad = (why: string) =>
    new StoreError({
      operation: "open",
      message:
        `The Postgres store URL "${maskPassword(url)}" ${why}. Write it as postgres://user:password@host:5432/database ` +
        `(set in ${WHERE_TO_FIX}).`
    })
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return bad("is not a URL")
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") return bad("is not a postgres:// URL")
  const host = decodeURIComponent(parsed.hostname)
  if (host === "") return bad("names no host")
  const port = parsed.port === "" ? 5432 : Number(parsed.port)
  const user = decodeURIComponent(parsed.username)
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || user || "postgres"
  return { host, port, database, label: `${host}:${port}/${database}` }
}

/** The URL with any password replaced by `***` (a text that is not a URL comes back unchanged). */
export const maskPassword = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password === "") return url
    parsed.password = "***"
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@")
  }
}

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    return typeof code === "string" && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message
  }
  return String(cause)
}

/** One line saying what went wrong, from a driver error or anything else: the server's own words when it sent some. */
export const describeError = (error: unknown): string => {
  if (error instanceof SqlError) {
    const reason = error.reason
    const detail = reason.cause === undefined ? reason.message : describeCause(reason.cause)
    return (detail ?? reason._tag).replace(/\s*\n\s*/g, " ")
  }
  return describeCause(error).replace(/\s*\n\s*/g, " ")
}

/** The first thing to check for a failed connection, from the error's code. */
const hint = (text: string): string => {
  if (/ECONNREFUSED/.test(text)) return "Nothing accepts connections there: is Postgres running, on that host and port?"
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return "That host name does not resolve: check the host in the URL."
  if (/ETIMEDOUT|timed? ?out/i.test(text))
    return "The server did not answer in time: check the host, port and firewall."
  if (/3D000/.test(text)) return "That database does not exist: create it (createdb) or fix the database in the URL."
  if (/28P01|28000|password/i.test(text)) return "The server refused the login: check the user and password in the URL."
  return "Check that Postgres is running and that the URL is right."
}

/**
 * The `StoreError` for a store that could not connect or open: names host:port/database (never the password),
 * what the server or the network said, and what to check.
 */
export const connectFailure = (label: string, error: unknown): StoreError => {
  const text = describeError(error)
  return new StoreError({
    operation: "open",
    message:
      `Cannot open the Postgres session store at ${label}: ${text}. ${hint(text)} ` +
      `The URL comes from ${WHERE_TO_FIX}; LATHE_STORE=sqlite goes back to the local SQLite file.`
  })
}
