import { createServer } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { maskPassword, PgSessionStore, parsePgUrl } from "../src/index.js"
import { databaseUrl } from "./pg.js"

/** A loopback port nothing listens on (bound, then released). */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address()
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
      })
    })
)

/** Builds the store on `url` and returns the error it fails with. */
const failure = (url: string) => Effect.scoped(Layer.build(PgSessionStore.layer({ url }))).pipe(Effect.flip)

describe("PgSessionStore when it cannot connect", () => {
  it.live("nothing listening: a StoreError naming host:port/database, never the password, and what to check", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const error = yield* failure(`postgres://lathe:s3cret-pw@127.0.0.1:${port}/lathe_db`)
      assert.strictEqual(error._tag, "StoreError")
      assert.strictEqual(error.message.includes("s3cret-pw"), false, error.message)
      assert.match(
        error.message,
        new RegExp(`^Cannot open the Postgres session store at 127\\.0\\.0\\.1:${port}/lathe_db: `)
      )
      assert.match(error.message, /ECONNREFUSED.*is Postgres running, on that host and port\?/)
      assert.match(error.message, /LATHE_STORE/)
    })
  )

  it.live("a database that does not exist is named, with how to create it", () =>
    Effect.gen(function* () {
      const error = yield* failure(databaseUrl("no_such_db"))
      assert.match(error.message, /at 127\.0\.0\.1:\d+\/no_such_db: .*does not exist.*create it \(createdb\)/)
    })
  )

  it.live("a URL that is not a postgres:// URL is refused before connecting, its password masked", () =>
    Effect.gen(function* () {
      const error = yield* failure("mysql://root:hunter2@db/app")
      assert.strictEqual(
        error.message,
        'The Postgres store URL "mysql://root:***@db/app" is not a postgres:// URL. Write it as ' +
          'postgres://user:password@host:5432/database (set in LATHE_STORE, or "store": { "type": "postgres", ' +
          '"url": … } in your global config).'
      )
      assert.match((yield* failure("not a url")).message, /"not a url" is not a URL/)
    })
  )

  it("parsePgUrl and maskPassword: libpq defaults, no credentials in the label", () => {
    assert.deepStrictEqual(parsePgUrl("postgresql://u:p@db.internal/lathe"), {
      host: "db.internal",
      port: 5432,
      database: "lathe",
      label: "db.internal:5432/lathe"
    })
    assert.deepStrictEqual(parsePgUrl("postgres://alice@[::1]:6543"), {
      host: "[::1]",
      port: 6543,
      database: "alice",
      label: "[::1]:6543/alice"
    })
    assert.strictEqual(maskPassword("postgres://u:p%40ss@h/d"), "postgres://u:***@h/d")
    assert.strictEqual(maskPassword("postgres://u@h/d"), "postgres://u@h/d")
  })
})
