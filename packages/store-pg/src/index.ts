/**
 * @lathe/store-pg: Lathe's `SessionStore` on PostgreSQL, for sessions many Lathe processes and machines share.
 * ```ts
 * const store = PgSessionStore.layer({ url: "postgres://lathe:secret@db:5432/lathe" })
 * ```
 */

export { makePgStore, type PgStoreOptions } from "./make-pg-store.js"
export { checkPg, type PgCheck } from "./pg-check.js"
export { connectFailure, maskPassword, type PgLocation, parsePgUrl } from "./pg-location.js"
export { MIGRATIONS_TABLE, migrate, type PgMigration, pgMigrations } from "./pg-migrations.js"
export { PgSessionStore, type PgStoreConnection } from "./pg-session-store.js"
