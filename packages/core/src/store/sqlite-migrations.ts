import { DatabaseSync } from "node:sqlite"
import { StoreError } from "./session-store.js"

/**
 * The schema of the SQLite session store, as an ordered list of migrations: entry `i` takes
 * `PRAGMA user_version` from `i` to `i + 1`. A shipped migration is never edited; a change appends one.
 *
 * Every row keeps the whole entity as JSON in `data` (decoded with the message model's schemas on read), plus
 * copies of the fields the store queries on. Keys mirror the in-memory store: a message is identified by
 * (session, id) and a part by (session, message, id).
 */
export const sqliteMigrations: ReadonlyArray<string> = [
  `CREATE TABLE session (
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     parent_id TEXT,
     time_updated INTEGER NOT NULL,
     data TEXT NOT NULL
   );
   CREATE INDEX session_project ON session (project_id, time_updated);
   CREATE INDEX session_parent ON session (parent_id, time_updated);
   CREATE INDEX session_updated ON session (time_updated);
   CREATE TABLE message (
     session_id TEXT NOT NULL,
     id TEXT NOT NULL,
     data TEXT NOT NULL,
     PRIMARY KEY (session_id, id)
   ) WITHOUT ROWID;
   CREATE TABLE part (
     session_id TEXT NOT NULL,
     message_id TEXT NOT NULL,
     id TEXT NOT NULL,
     data TEXT NOT NULL,
     PRIMARY KEY (session_id, message_id, id),
     FOREIGN KEY (session_id, message_id) REFERENCES message (session_id, id) ON DELETE CASCADE
   ) WITHOUT ROWID;`,
  // Sessions record their work tree. A row stored before keeps `tree` NULL (its data names no tree and SQL cannot
  // ask git) and gets its directory copied out, so a listing per tree needs no git call: a NULL-tree row belongs to
  // the tree its directory is in (`inTree`), and `sessionTree` asks git once before undo writes anything.
  `ALTER TABLE session ADD COLUMN tree TEXT;
   ALTER TABLE session ADD COLUMN directory TEXT;
   UPDATE session SET directory = json_extract(data, '$.directory'), tree = json_extract(data, '$.tree');
   CREATE INDEX session_tree ON session (project_id, tree, time_updated);`
]

/** How long a connection waits for another process's write lock before failing with "database is locked". */
export const BUSY_TIMEOUT_MS = 5_000

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const openFailed = (file: string, error: unknown) =>
  new StoreError({
    operation: "open",
    message:
      `Cannot open the session store ${file}: ${describe(error)}. ` +
      "If the file is not a Lathe database, move it away (Lathe creates a new one) or set LATHE_DATA_DIR to another directory."
  })

/**
 * Opens (creating if needed) the store at `file` and brings its schema up to date. The connection uses WAL
 * (readers never block the writer; a commit survives a process crash), `synchronous=NORMAL` (a commit is durable
 * against process death; only an OS crash or power loss may lose the last commits, never consistency), a busy
 * timeout so several processes can share the file, and foreign keys. Migrations run in one `BEGIN IMMEDIATE`
 * transaction, so two processes opening a fresh file at once migrate it exactly once.
 *
 * A file with no pages yet (a fresh data directory: every first run, and every run of the speed guard) is set up
 * with `synchronous=OFF`: switching a new file to WAL goes through the rollback journal, whose four fsyncs (journal,
 * directory, journal, database) cost ~0.8 ms on a quiet machine and more under disk load, before the first request.
 * What they protect is an empty store being created: an OS crash in that millisecond can leave a file Lathe reports
 * as unreadable, never a lost session. `synchronous=NORMAL` is set before anything else is written; a file that
 * has pages opens exactly as before.
 */
export const openSqliteStore = (file: string): DatabaseSync => {
  let db: DatabaseSync
  try {
    db = new DatabaseSync(file, { enableForeignKeyConstraints: true })
  } catch (error) {
    throw openFailed(file, error)
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    const fresh = isEmpty(db)
    if (fresh) db.exec("PRAGMA synchronous = OFF")
    db.exec("PRAGMA journal_mode = WAL")
    if (!fresh) db.exec("PRAGMA synchronous = NORMAL")
    db.exec("PRAGMA foreign_keys = ON")
    migrate(db, file)
    if (fresh) db.exec("PRAGMA synchronous = NORMAL")
    return db
  } catch (error) {
    db.close()
    throw error instanceof StoreError ? error : openFailed(file, error)
  }
}

/** Whether the database has no pages yet: a file SQLite has just created, or an empty one. */
const isEmpty = (db: DatabaseSync): boolean => Number(db.prepare("PRAGMA page_count").get()?.page_count ?? 0) === 0

const userVersion = (db: DatabaseSync): number => Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0)

const tooNew = (file: string, version: number) =>
  new StoreError({
    operation: "open",
    message:
      `The session store ${file} has schema version ${version}, but this Lathe knows versions up to ` +
      `${sqliteMigrations.length}: it was written by a newer Lathe. Upgrade Lathe, or set LATHE_DATA_DIR to use another directory.`
  })

const migrate = (db: DatabaseSync, file: string): void => {
  const known = sqliteMigrations.length
  const seen = userVersion(db)
  if (seen > known) throw tooNew(file, seen)
  if (seen === known) return
  db.exec("BEGIN IMMEDIATE")
  try {
    // Another process may have migrated between our read and taking the write lock.
    const current = userVersion(db)
    if (current > known) throw tooNew(file, current)
    for (let version = current; version < known; version++) {
      try {
        db.exec(sqliteMigrations[version] ?? "")
      } catch (error) {
        throw new StoreError({
          operation: "migrate",
          message: `Migration ${version + 1} of the session store ${file} failed: ${describe(error)}. Nothing was changed.`
        })
      }
    }
    db.exec(`PRAGMA user_version = ${known}`)
    db.exec("COMMIT")
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK")
    throw error
  }
}
