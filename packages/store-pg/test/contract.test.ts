import { SessionStore } from "@lathe/core"
import { sessionStoreContract } from "@lathe/core/testing/store-contract"
import { Context, Effect, Layer } from "effect"
import { PgSessionStore } from "../src/index.js"
import { freshDatabase, freshStore } from "./pg.js"

sessionStoreContract(
  "Postgres",
  () => freshStore(),
  () =>
    Effect.map(freshDatabase, (url) =>
      Layer.build(PgSessionStore.layer({ url, maxConnections: 2 })).pipe(
        Effect.map((context) => Context.get(context, SessionStore))
      )
    )
)
