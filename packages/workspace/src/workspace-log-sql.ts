import { Clock, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { conflict, notBegun, sameOrigin, WorkspaceLogError } from "./errors.js"
import {
  keptCheckpoints,
  type WorkspaceEntry,
  WorkspaceLog,
  type WorkspaceLogOptions,
  type WorkspaceLogShape,
  type WorkspaceOrigin
} from "./workspace-log.js"

/**
 * The log's schema, one entry per version; a version, once released, never changes (add a new one instead).
 * `checkpoint` on `lathe_workspace` is the newest number (0 before the first) and `hash` the newest patch's hash,
 * so `record` numbers and de-duplicates under the row lock of one UPDATE.
 */
export const migrations: ReadonlyArray<{
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}> = [
  {
    version: 1,
    name: "workspaces and checkpoints",
    statements: [
      `create table lathe_workspace (
        session_id text primary key,
        repo text not null,
        ref text,
        base text not null,
        checkpoint integer not null default 0,
        hash text,
        updated bigint not null
      )`,
      `create table lathe_workspace_checkpoint (
        session_id text not null references lathe_workspace (session_id) on delete cascade,
        checkpoint integer not null,
        hash text not null,
        patch bytea not null,
        created bigint not null,
        primary key (session_id, checkpoint)
      )`
    ]
  }
]

/** The driver's own words (the server's message) when there are some, else the SQL error's. */
const detail = (error: SqlError.SqlError): string => {
  const inner: unknown = error.cause?.cause
  return inner instanceof Error && inner.message ? inner.message : error.message
}

const logError = (operation: string) => (error: SqlError.SqlError) =>
  new WorkspaceLogError({
    operation,
    message: `The workspace log could not ${operation} in Postgres: ${detail(error)}. Check the database URL and that the server is reachable.`
  })

/**
 * Applies the pending migrations in one transaction holding a transaction-scoped advisory lock, so two processes
 * starting against the same database run each migration once: the second waits, then finds nothing to do.
 */
export const migrate = (sql: SqlClient.SqlClient): Effect.Effect<void, WorkspaceLogError> =>
  sql
    .withTransaction(
      Effect.gen(function* () {
        yield* sql`select pg_advisory_xact_lock(hashtext('lathe_workspace_migrations'))`
        yield* sql`create table if not exists lathe_workspace_migrations (
          version integer primary key, name text not null, applied bigint not null)`
        const done = new Set(
          (yield* sql<{ version: number }>`select version from lathe_workspace_migrations`).map((r) => r.version)
        )
        for (const migration of migrations) {
          if (done.has(migration.version)) continue
          for (const statement of migration.statements) yield* sql.unsafe(statement)
          const now = yield* Clock.currentTimeMillis
          yield* sql`insert into lathe_workspace_migrations (version, name, applied)
            values (${migration.version}, ${migration.name}, ${now})`
        }
      })
    )
    .pipe(Effect.mapError(logError("run its migrations")), Effect.withSpan("WorkspaceLog.migrate"))

interface Row {
  readonly repo: string
  readonly ref: string | null
  readonly base: string
  readonly checkpoint: number
  readonly hash: string | null
  readonly updated: string | number | bigint
  readonly patch: Uint8Array | null
}

const originOf = (row: Row): WorkspaceOrigin => ({ repo: row.repo, ref: row.ref ?? undefined, base: row.base })

/** The Postgres log (see `SqlWorkspaceLog.layer`): runs the migrations, then serves from the two tables. */
export const makeSqlLog = (keep: number): Effect.Effect<WorkspaceLogShape, WorkspaceLogError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    // Column names are ours: ignore any name transforms the host configured on its client.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    yield* migrate(sql)

    const latest = Effect.fn("WorkspaceLog.latest")(function* (sessionID: string) {
      const rows = yield* sql<Row>`
        select w.repo, w.ref, w.base, w.checkpoint, w.hash, w.updated, c.patch
        from lathe_workspace w
        left join lathe_workspace_checkpoint c on c.session_id = w.session_id and c.checkpoint = w.checkpoint
        where w.session_id = ${sessionID}`.pipe(Effect.mapError(logError("read a workspace")))
      const row = rows[0]
      if (!row) return undefined
      const entry: WorkspaceEntry = {
        ...originOf(row),
        updated: Number(row.updated),
        ...(row.checkpoint > 0 && row.patch
          ? { checkpoint: row.checkpoint, patch: Uint8Array.from(row.patch), hash: row.hash ?? undefined }
          : {})
      }
      return entry
    })

    const begin = Effect.fn("WorkspaceLog.begin")(function* (sessionID: string, origin: WorkspaceOrigin) {
      const now = yield* Clock.currentTimeMillis
      const inserted = yield* sql<{ session_id: string }>`
        insert into lathe_workspace (session_id, repo, ref, base, updated)
        values (${sessionID}, ${origin.repo}, ${origin.ref ?? null}, ${origin.base}, ${now})
        on conflict (session_id) do nothing
        returning session_id`.pipe(Effect.mapError(logError("begin a workspace")))
      if (inserted.length > 0) return
      const rows = yield* sql<Row>`select repo, ref, base from lathe_workspace where session_id = ${sessionID}`.pipe(
        Effect.mapError(logError("read a workspace"))
      )
      const first = rows[0]
      if (first && !sameOrigin(originOf(first), origin))
        return yield* Effect.fail(conflict(sessionID, originOf(first), origin))
    })

    const record = Effect.fn("WorkspaceLog.record")(function* (
      sessionID: string,
      input: { readonly patch: Uint8Array; readonly hash: string }
    ) {
      const now = yield* Clock.currentTimeMillis
      const write = Effect.gen(function* () {
        const bumped = yield* sql<{ checkpoint: number }>`
          update lathe_workspace set checkpoint = checkpoint + 1, hash = ${input.hash}, updated = ${now}
          where session_id = ${sessionID} and hash is distinct from ${input.hash}
          returning checkpoint`
        const number = bumped[0]?.checkpoint
        if (number === undefined) {
          const rows = yield* sql<{ checkpoint: number }>`
            select checkpoint from lathe_workspace where session_id = ${sessionID}`
          const row = rows[0]
          return row ? row.checkpoint : yield* Effect.fail(notBegun(sessionID))
        }
        yield* sql`insert into lathe_workspace_checkpoint (session_id, checkpoint, hash, patch, created)
          values (${sessionID}, ${number}, ${input.hash}, ${input.patch}, ${now})`
        yield* sql`delete from lathe_workspace_checkpoint
          where session_id = ${sessionID} and checkpoint <= ${number - keep}`
        return number
      })
      return yield* sql
        .withTransaction(write)
        .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(logError("record a checkpoint")(error))))
    })

    const at = Effect.fn("WorkspaceLog.at")(function* (sessionID: string, checkpoint: number) {
      const rows = yield* sql<{ hash: string; patch: Uint8Array }>`
        select hash, patch from lathe_workspace_checkpoint
        where session_id = ${sessionID} and checkpoint = ${checkpoint}`.pipe(
        Effect.mapError(logError("read a checkpoint"))
      )
      const row = rows[0]
      return row ? { patch: Uint8Array.from(row.patch), hash: row.hash } : undefined
    })

    const checkpoints = Effect.fn("WorkspaceLog.checkpoints")(function* (sessionID: string) {
      const rows = yield* sql<{ checkpoint: number }>`
        select checkpoint from lathe_workspace_checkpoint where session_id = ${sessionID}
        order by checkpoint`.pipe(Effect.mapError(logError("list checkpoints")))
      return rows.map((row) => row.checkpoint)
    })

    const remove = Effect.fn("WorkspaceLog.remove")(function* (sessionID: string) {
      yield* sql`delete from lathe_workspace where session_id = ${sessionID}`.pipe(
        Effect.mapError(logError("remove a workspace"))
      )
    })

    return { begin, record, latest, at, checkpoints, remove }
  })

/** `WorkspaceLog` in Postgres, through `SqlClient` (tables `lathe_workspace` and `lathe_workspace_checkpoint`). */
export const SqlWorkspaceLog = {
  /**
   * The log in the client's database. Building the layer runs the log's migrations under an advisory lock, so
   * processes starting together do not race.
   */
  layer: (options: WorkspaceLogOptions = {}): Layer.Layer<WorkspaceLog, WorkspaceLogError, SqlClient.SqlClient> =>
    Layer.effect(WorkspaceLog, Effect.map(makeSqlLog(keptCheckpoints(options)), WorkspaceLog.of))
}
