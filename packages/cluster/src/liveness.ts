/**
 * Noticing a dead runner in well under a second. Effect Cluster counts a runner as a member until its heartbeat is
 * `lockExpiration` old; a runner that dies (SIGKILL, a crash, a lost machine) closes its Postgres connections, and
 * Postgres drops their sessions at once. Every runner's connections carry `application_name` `lathe-runner <address>`,
 * so a registered runner with no session left in `pg_stat_activity` is dead: each runner removes such rows from the
 * cluster's runner table, and every member's next assignment refresh hands the dead runner's shards to the living.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { runnerApplicationName } from "./cluster-layer.js"

/** How often a runner looks for dead runners (the default of {@link deadRunnerSweep}). */
export const SWEEP_INTERVAL = "250 millis"

/**
 * One sweep: deletes the runner rows whose runner has no Postgres session, and returns their addresses. It only acts
 * when it can see every session: `self`'s own by name (not so behind a connection pooler that renames them) and no
 * session of the database hidden from it (runners under other roles, without `pg_read_all_stats`). Otherwise failover
 * is left to the heartbeat expiry instead of dropping living runners. A living runner whose row was removed by mistake
 * registers again on its next refresh.
 */
export const sweepDeadRunners = (self: string) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const own = runnerApplicationName(self)
    const rows = yield* sql<{ address: string }>`
      DELETE FROM cluster_runners r
      WHERE r.address <> ${self}
        AND NOT EXISTS (
          SELECT 1 FROM pg_stat_activity a WHERE a.application_name = ${runnerApplicationName("")} || r.address)
        AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = ${own})
        AND NOT EXISTS (
          SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name IS NULL)
      RETURNING r.address`
    return rows.map((row) => row.address)
  })

/**
 * A layer that sweeps for dead runners every `interval` while the runner is up (see {@link sweepDeadRunners});
 * `report` hears each runner it finds dead. Failures (the table not made yet, Postgres briefly away) are retried on
 * the next sweep.
 */
export const deadRunnerSweep = (
  self: string,
  report: (line: string) => void,
  interval: Duration.Input = SWEEP_INTERVAL
): Layer.Layer<never, never, SqlClient.SqlClient> =>
  Layer.effectDiscard(
    sweepDeadRunners(self).pipe(
      Effect.tap((dead) =>
        Effect.sync(() => {
          for (const address of dead) report(`runner ${address} has no connection to Postgres left: its sessions move`)
        })
      ),
      Effect.ignore,
      Effect.repeat(Schedule.spaced(Duration.fromInputUnsafe(interval))),
      Effect.forkScoped
    )
  )
