/**
 * The Effect Cluster layers Lathe uses: socket transport between runners, message and runner storage in the same
 * Postgres as the sessions. A runner joins with an address; a server joins client-only (it sends, never hosts).
 */
import { NodeClusterSocket, NodeCrypto } from "@effect/platform-node-shared"
import { PgClient } from "@effect/sql-pg"
import { type Duration, Layer, Option, Redacted } from "effect"
import {
  RunnerAddress,
  RunnerHealth,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import { RpcSerialization } from "effect/rpc"

/** How a process joins the cluster. */
export interface ClusterOptions {
  /** The shared Postgres (`postgres://user:pass@host:port/db`). */
  readonly url: string
  /** A runner's address as other runners reach it; absent: a client-only member (a server). */
  readonly runner?: { readonly host: string; readonly port: number; readonly listenHost?: string }
  /** Shards per group (default 300). Every member of a cluster must use the same number. */
  readonly shards?: number
  /**
   * How often a runner polls storage for messages it was not told about (default 1 s; Effect's default is 10 s,
   * which is how long a prompt sent from a just-started server could wait).
   */
  readonly pollInterval?: Duration.Input
  /**
   * How long a runner that stopped answering keeps its shards (default 5 s). A runner that dies is noticed sooner:
   * its Postgres sessions end with it, and the other runners drop it within a sweep (`liveness.ts`, 250 ms) plus an
   * assignment refresh (250 ms). This expiry is for a runner that is alive but stuck (a long event-loop block, a
   * paused VM, connections through a pooler): it loses its shards once its heartbeat is this old, its turns stop,
   * and a call cut short is rolled back and run again by the next holder. Shorter values make lock refreshes time out
   * under load (Effect Cluster allows a third of it), which moves sessions for nothing.
   */
  readonly lockExpiration?: Duration.Input
  /** Connections in the pool (default 10). */
  readonly maxConnections?: number
}

/** The default of {@link ClusterOptions.lockExpiration}. */
export const LOCK_EXPIRATION = "5 seconds"

/** How often every member re-reads the runners and recomputes shard assignments. */
export const REFRESH_ASSIGNMENTS = "250 millis"

/** The `application_name` of a runner's connections: how `lathe cluster status` tells whose shard locks are whose. */
export const runnerApplicationName = (address: string) => `lathe-runner ${address}`

/**
 * The Postgres client for a URL (its password never appears in logs: the URL is redacted). `name` is the connections'
 * `application_name` (default `lathe`).
 */
export const pgLayer = (url: string, maxConnections = 10, name = "lathe") =>
  PgClient.layer({ url: Redacted.make(url), maxConnections, applicationName: name })

/** `Sharding` (+ `Runners`) for a runner or a client-only member, over the given Postgres client. */
export const clusterLayer = (options: ClusterOptions) => {
  const config = ShardingConfig.layer({
    runnerAddress: options.runner
      ? Option.some(RunnerAddress.make(options.runner.host, options.runner.port))
      : Option.none(),
    runnerListenAddress: options.runner
      ? Option.some(RunnerAddress.make(options.runner.listenHost ?? options.runner.host, options.runner.port))
      : Option.none(),
    ...(options.shards !== undefined ? { shardsPerGroup: options.shards } : {}),
    entityMessagePollInterval: options.pollInterval ?? "1 second",
    entityReplyPollInterval: options.pollInterval ?? "1 second",
    shardLockExpiration: options.lockExpiration ?? LOCK_EXPIRATION,
    refreshAssignmentsInterval: REFRESH_ASSIGNMENTS
  })
  const storage = Layer.mergeAll(SqlMessageStorage.layer, SqlRunnerStorage.layer).pipe(
    Layer.provide(NodeCrypto.layerDigest)
  )
  const transport = options.runner
    ? SocketRunner.layer.pipe(
        Layer.provide([NodeClusterSocket.layerSocketServer, RunnerHealth.layerNoop]),
        Layer.provide(NodeClusterSocket.layerClientProtocol)
      )
    : SocketRunner.layerClientOnly.pipe(Layer.provide(NodeClusterSocket.layerClientProtocol))
  return transport.pipe(Layer.provide(storage), Layer.provide(RpcSerialization.layerNdjson), Layer.provide(config))
}
