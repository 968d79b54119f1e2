/**
 * @lathe/cluster: Lathe past one machine. Sessions are `AgentSession` entities of an Effect Cluster whose runners
 * share one Postgres (sessions, messages, cluster state); servers in front send prompts to them and relay their
 * events to clients. A runner that dies loses no completed step: its sessions continue on another runner.
 */
export { type ClusterOptions, clusterLayer, pgLayer } from "./cluster-layer.js"
export { clusterFront, type FrontOptions } from "./front.js"
export { Abort, AgentSession, Respond, Revert, Run, RunOutcome, Status } from "./protocol.js"
export {
  CHANNEL,
  type EventPublisher,
  listen,
  makePublisher,
  type PublisherOptions,
  type RelayedEvent
} from "./relay.js"
export { type LatheRunner, type RunnerOptions, startRunner } from "./runner.js"
export { type ClusterStatus, clusterStatus, type RunnerStatus } from "./status.js"
