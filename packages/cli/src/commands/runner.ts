import { directoryApps, sharedStore } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { type CliWorkspaces, startWorkspaces } from "../workspaces.js"
import { redactUrl, shardCount, storeUrl } from "./cluster-options.js"

/** `lathe runner`, declared once for the command kit. */
export const runnerSpec = defineCommand({
  name: "runner",
  usage: ["--store <postgres-url> [--port N] [--host H] [--listen H] [--shards N]"],
  description: `Joins a Lathe cluster as a runner: a process that holds sessions and runs their turns. Runners share one
Postgres (sessions, messages and the cluster's own state); \`lathe serve --store <url> --cluster\` takes the HTTP
traffic in front of them. A runner that dies loses no completed step: its sessions continue on another runner.
Sessions run in their directory with that directory's config, as under \`lathe serve\`. The first line on stdout is
\`runner HOST:PORT joined\`. SIGTERM or Ctrl-C hands its sessions to the other runners, then it exits.`,
  options: {
    store: { type: "string", value: "<url>", description: "The shared Postgres (default: $LATHE_STORE)" },
    port: {
      type: "string",
      value: "<n>",
      description: "The port other runners and servers reach this one on (default: $LATHE_RUNNER_PORT, else 34431)"
    },
    host: {
      type: "string",
      value: "<h>",
      description: "The address they reach it at (default: $LATHE_RUNNER_HOST, else 127.0.0.1)"
    },
    listen: {
      type: "string",
      value: "<h>",
      description: "The interface to listen on when it differs from --host (e.g. 0.0.0.0 in a container)"
    },
    shards: {
      type: "string",
      value: "<n>",
      description: "Shards in the cluster (default: $LATHE_SHARDS, else 300); every member must use the same"
    },
    "health-port": {
      type: "string",
      value: "<n>",
      description: "Serve GET /health here (200 while a member, 503 while leaving; default: $LATHE_RUNNER_HEALTH_PORT)"
    }
  },
  footer: `Exit codes: 0 stopped cleanly, 1 failed, 2 bad usage.`
})

/** `lathe runner`: a cluster runner, until SIGTERM or Ctrl-C. */
export const runnerCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(runnerSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const store = storeUrl("runner", values.store, io)
  if ("error" in store) {
    io.stderr(`${store.error}\n`)
    return 2
  }
  const shards = shardCount("runner", values.shards, io)
  if (typeof shards !== "number") {
    io.stderr(`${shards.error}\n`)
    return 2
  }
  const rawPort = values.port ?? io.env.LATHE_RUNNER_PORT ?? "34431"
  const port = Number(rawPort)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    io.stderr(`lathe runner: --port must be a whole number from 1 to 65535, not "${rawPort}".\n`)
    return 2
  }
  const host = values.host ?? io.env.LATHE_RUNNER_HOST ?? "127.0.0.1"
  const rawHealth = values["health-port"] ?? io.env.LATHE_RUNNER_HEALTH_PORT
  const healthPort = rawHealth === undefined || rawHealth === "" ? undefined : Number(rawHealth)
  if (healthPort !== undefined && (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65535)) {
    io.stderr(`lathe runner: --health-port must be a whole number from 0 to 65535, not "${rawHealth}".\n`)
    return 2
  }
  // Loaded only here: other commands never load the cluster.
  const { startRunner } = await import("@lathe/cluster")
  let runner: Awaited<ReturnType<typeof startRunner>>
  let workspaces: CliWorkspaces | undefined
  let shared: Awaited<ReturnType<typeof sharedStore>> | undefined
  try {
    // One Postgres pool for the sessions of every directory (a clone per session would otherwise open a pool each).
    shared = await sharedStore({ ...io, env: { ...io.env, LATHE_STORE: store.url } })
    workspaces = await startWorkspaces(io, store.url)
    runner = await startRunner({
      url: store.url,
      app: directoryApps(
        { ...io, env: { ...io.env, LATHE_STORE: store.url } },
        { plugins: [workspaces.plugin], store: shared.store }
      ),
      workspaces: workspaces.service,
      directory: io.cwd,
      host,
      port,
      shards,
      ...(healthPort !== undefined ? { healthPort } : {}),
      ...(values.listen ? { listenHost: values.listen } : {}),
      report: (line) => io.stderr(`lathe runner: ${line}\n`)
    })
  } catch (error) {
    await workspaces?.dispose().catch(() => undefined)
    await shared?.dispose().catch(() => undefined)
    io.stderr(
      `lathe runner: could not join the cluster at ${redactUrl(store.url)}: ${error instanceof Error ? error.message : String(error)}\n`
    )
    return 1
  }
  io.stdout(`runner ${runner.address} joined\n`)
  if (runner.healthUrl) io.stderr(`lathe runner: health at ${runner.healthUrl}\n`)
  return new Promise<number>((resolve) => {
    let stopping = false
    const remove = io.onInterrupt?.(() => {
      if (stopping) return
      stopping = true
      io.stderr("lathe runner: stopping: handing sessions to the other runners...\n")
      runner.close().then(
        async () => {
          await workspaces?.dispose().catch(() => undefined)
          await shared?.dispose().catch(() => undefined)
          remove?.()
          setTimeout(() => process.exit(0), 2_000).unref()
          resolve(0)
        },
        (error: unknown) => {
          io.stderr(`lathe runner: stopping failed: ${String(error)}\n`)
          resolve(1)
        }
      )
    })
  })
}
