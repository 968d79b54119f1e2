import { Config, type ConfigShape, type Paths, type SessionStore, SqliteSessionStore, StoreError } from "@lathe/core"
import { Effect, Layer } from "effect"

/** `@lathe/store-pg`, loaded only when a run uses Postgres: a default run never loads the Postgres driver. */
const loadStorePg = Effect.tryPromise({
  try: () => import("@lathe/store-pg"),
  catch: (error) =>
    new StoreError({
      operation: "open",
      message: `The Postgres session store needs the package @lathe/store-pg, which did not load (${
        error instanceof Error ? error.message : String(error)
      }). Install it beside Lathe, or set LATHE_STORE=sqlite.`
    })
})

/**
 * The session store the config picks (`store`, or `LATHE_STORE` for one run): the SQLite file in the data dir by
 * default, or Postgres. A Postgres store that cannot be reached fails the run with a `StoreError` saying what to check.
 */
export const storeLayer: Layer.Layer<SessionStore, StoreError, Config | Paths> = Layer.unwrap(
  Effect.gen(function* () {
    const store = (yield* Config).info.store
    if (store?.type !== "postgres") return SqliteSessionStore.layer
    const { PgSessionStore } = yield* loadStorePg
    return PgSessionStore.layer({ url: store.url })
  })
)

/** One `lathe doctor` line: which store is used and whether it is reachable (never the password). */
export const storeCheck = async (
  config: ConfigShape,
  paths: Paths["Service"]
): Promise<{ readonly name: "store"; readonly ok: boolean; readonly detail: string }> => {
  const store = config.info.store
  if (store?.type !== "postgres") return { name: "store", ok: true, detail: `sqlite ${paths.data}/lathe.db` }
  return Effect.runPromise(
    loadStorePg.pipe(
      Effect.flatMap(({ checkPg }) => checkPg(store.url)),
      Effect.map(({ label, schemaVersion, latest }) => {
        const newer = schemaVersion !== undefined && schemaVersion > latest
        const schema =
          schemaVersion === undefined
            ? "no Lathe tables yet (created on first use)"
            : `schema version ${schemaVersion}${newer ? `, newer than this Lathe's ${latest}: upgrade Lathe` : ""}`
        return { name: "store" as const, ok: !newer, detail: `postgres ${label}, reachable, ${schema}` }
      }),
      Effect.catch((error) => Effect.succeed({ name: "store" as const, ok: false, detail: error.message }))
    )
  )
}
