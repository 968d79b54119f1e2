import { execFileSync } from "node:child_process"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { pgLayer, runnerApplicationName } from "../src/cluster-layer.js"
import { sweepDeadRunners } from "../src/liveness.js"
import { cleanups, freshDatabase } from "./helpers.js"

/** A database with Effect Cluster's runner table (its shape as SqlRunnerStorage makes it) and three runners in it. */
const setup = () => {
  const url = freshDatabase()
  execFileSync("psql", [
    url,
    "-q",
    "-c",
    `CREATE TABLE cluster_runners (machine_id SERIAL PRIMARY KEY, address VARCHAR(255) NOT NULL UNIQUE, runner TEXT NOT NULL,
       healthy BOOLEAN NOT NULL DEFAULT TRUE, last_heartbeat TIMESTAMP NOT NULL DEFAULT NOW());
     INSERT INTO cluster_runners (address, runner) VALUES ('10.0.0.1:1', 'a'), ('10.0.0.2:2', 'b'), ('10.0.0.3:3', 'c')`
  ])
  return url
}

const connect = (url: string, name: string) => {
  const runtime = ManagedRuntime.make(Layer.fresh(pgLayer(url, 2, name)))
  cleanups.push(() => runtime.dispose())
  return runtime
}

const addresses = (url: string) =>
  execFileSync("psql", [url, "-qAt", "-c", "SELECT address FROM cluster_runners ORDER BY address"])
    .toString("utf8")
    .trim()
    .split("\n")

describe("sweepDeadRunners", () => {
  it("drops the runners with no Postgres session left, keeps the ones connected and itself", async () => {
    const url = setup()
    const self = connect(url, runnerApplicationName("10.0.0.1:1"))
    const alive = connect(url, runnerApplicationName("10.0.0.2:2"))
    // The living runner's pool opens a connection on its first query.
    await alive.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`))
    const dead = await self.runPromise(sweepDeadRunners("10.0.0.1:1"))
    expect(dead).toEqual(["10.0.0.3:3"])
    expect(addresses(url)).toEqual(["10.0.0.1:1", "10.0.0.2:2"])
    // Once the second runner's connections close, the next sweep drops it too.
    await alive.dispose()
    const deadline = Date.now() + 5_000
    let next: ReadonlyArray<string> = []
    while (next.length === 0 && Date.now() < deadline) next = await self.runPromise(sweepDeadRunners("10.0.0.1:1"))
    expect(next).toEqual(["10.0.0.2:2"])
    expect(addresses(url)).toEqual(["10.0.0.1:1"])
  }, 30_000)

  it("drops nothing when it cannot see its own sessions (a pooler, another role): the heartbeat decides then", async () => {
    const url = setup()
    const hidden = connect(url, "lathe")
    expect(await hidden.runPromise(sweepDeadRunners("10.0.0.1:1"))).toEqual([])
    expect(addresses(url)).toEqual(["10.0.0.1:1", "10.0.0.2:2", "10.0.0.3:3"])
  }, 30_000)
})
