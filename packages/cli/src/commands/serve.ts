import { directoryApps, sharedStore } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { removeServerToken, writeServerToken } from "../server-token.js"
import { type CliWorkspaces, startWorkspaces } from "../workspaces.js"
import { shardCount, storeUrl } from "./cluster-options.js"

/** `lathe serve`, declared once for the command kit. */
export const serveSpec = defineCommand({
  name: "serve",
  usage: [
    "[--port N] [--hostname H] [--token T | --no-auth] [--cors ORIGIN] [--allow-host NAME] [--allow-directory DIR] [--store URL [--cluster] [--shards N]]"
  ],
  description: `Runs Lathe as a server: the HTTP + SSE API that editors, scripts and \`lathe run --attach\` drive (see
GET /openapi.json). Sessions run in this directory unless one names another: a folder below it, or one allowed with
--allow-directory (any other is refused with 403; symlinks are followed to where they lead). Each directory's
config, trust, permission and sandbox rules apply as in \`lathe\` there. Permission asks and questions wait for a client to
answer them over HTTP; the server never answers them itself. The first line on stdout is
\`listening on http://HOST:PORT\`; then, when the server made its own token, \`token <token>\`, then how to attach.
Every request needs \`Authorization: Bearer <token>\`; this machine's \`lathe --attach\` / \`lathe run --attach\` to a
loopback address read it from the data dir (servers/<port>.token), so they need no --token. Requests must name this
server in \`Host\` (localhost, 127.0.0.1, [::1], --hostname or --allow-host), web pages of other origins are refused
unless allowed with --cors, and a request body must be \`Content-Type: application/json\` and at most 10 MB (413).
SIGTERM or Ctrl-C drains: running turns are aborted and recorded, then it exits.`,
  options: {
    port: { type: "string", value: "<n>", description: "The port (default 4096; 0 picks a free one)" },
    hostname: { type: "string", value: "<h>", description: "The address to listen on (default 127.0.0.1)" },
    token: {
      type: "string",
      value: "<t>",
      description: "The token every request needs (default: $LATHE_SERVER_TOKEN, else a new random one, printed)"
    },
    "no-auth": {
      type: "boolean",
      description: "No token (loopback only): any program on this machine can then drive the agent"
    },
    cors: {
      type: "string",
      multiple: true,
      value: "<origin>",
      description: "Let web pages of this origin (e.g. https://app.example) call the API; repeatable"
    },
    "allow-host": {
      type: "string",
      multiple: true,
      value: "<n>",
      description: "Also answer to this Host name (a reverse proxy's); repeatable"
    },
    "allow-directory": {
      type: "string",
      multiple: true,
      value: "<dir>",
      description: "Also let sessions run in this directory and the folders below it; repeatable"
    },
    store: {
      type: "string",
      value: "<url>",
      description: "Keep sessions in this Postgres (default: $LATHE_STORE, else the config's store, else SQLite)"
    },
    cluster: {
      type: "boolean",
      description: "Run no session here: send them to the runners sharing --store (`lathe runner`)"
    },
    shards: {
      type: "string",
      value: "<n>",
      description: "With --cluster: the cluster's shard count (default: $LATHE_SHARDS, else 300)"
    }
  },
  footer: `Exit codes: 0 stopped cleanly, 1 failed, 2 bad usage.`
})

/** What `lathe web` adds to the server: the app's folder, and whether to open a browser on it. */
export interface WebFront {
  readonly app: string
  readonly open: (url: string) => void
}

/** `lathe serve`: the headless server, until SIGTERM or Ctrl-C; with `web`, the web app at `/` too (`lathe web`). */
export const serveCommand =
  (version: string, web?: WebFront): Command =>
  async (args, given: CliIO) => {
    let io = given
    const parsed = parseCommand(serveSpec, args, io)
    if (typeof parsed === "number") return parsed
    const { values } = parsed
    const port = values.port === undefined ? 4096 : Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      io.stderr(`lathe serve: --port must be a whole number from 0 to 65535, not "${values.port}".\n`)
      return 2
    }
    const token = values.token || io.env.LATHE_SERVER_TOKEN || undefined
    const noAuth = values["no-auth"] === true
    if (noAuth && values.token !== undefined) {
      io.stderr("lathe serve: --no-auth and --token contradict each other; give one.\n")
      return 2
    }
    const corsOrigins: Array<string> = []
    for (const origin of values.cors ?? []) {
      const parsed = URL.canParse(origin) ? new URL(origin) : undefined
      if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || `${parsed.origin}/` !== parsed.href) {
        io.stderr(
          `lathe serve: --cors takes an origin such as https://app.example:8080 (scheme, host, port), not "${origin}".\n`
        )
        return 2
      }
      corsOrigins.push(parsed.origin)
    }
    let cluster: { readonly url: string; readonly shards: number } | undefined
    if (values.cluster || values.store !== undefined) {
      const store = storeUrl("serve", values.store, io)
      if ("error" in store) {
        io.stderr(`${store.error}\n`)
        return 2
      }
      const shards = shardCount("serve", values.shards, io)
      if (typeof shards !== "number") {
        io.stderr(`${shards.error}\n`)
        return 2
      }
      if (values.cluster) cluster = { url: store.url, shards }
      io = { ...io, env: { ...io.env, LATHE_STORE: store.url } }
    }
    // Loaded only here: other commands never load the server.
    const { serve, ServeError } = await import("@lathe/server")
    // One app per directory, as `lathe` would compose it there; its config notices go to stderr once.
    const pgStore = io.env.LATHE_STORE?.startsWith("postgres") ? io.env.LATHE_STORE : undefined
    let workspaces: CliWorkspaces
    let shared: Awaited<ReturnType<typeof sharedStore>>
    try {
      // One store for every directory's app: one connection (or pool), and no app reads past another's batch.
      shared = await sharedStore(io)
      workspaces = await startWorkspaces(io, pgStore)
    } catch (error) {
      io.stderr(`lathe serve: ${error instanceof Error ? error.message : String(error)}\n`)
      return 1
    }
    const plugins = [workspaces.plugin]
    const store = shared.store
    const app = directoryApps(io, { plugins, store })
    let server: Awaited<ReturnType<typeof serve>>
    try {
      server = await serve({
        app,
        directory: io.cwd,
        port,
        ...(values.hostname ? { hostname: values.hostname } : {}),
        ...(token && !noAuth ? { token } : {}),
        noAuth,
        corsOrigins,
        allowedHosts: values["allow-host"] ?? [],
        allowedDirectories: values["allow-directory"] ?? [],
        version,
        ...(web ? { webApp: web.app } : {}),
        workspaces: workspaces.service,
        ...(cluster
          ? {
              runner: (await import("@lathe/cluster")).clusterFront({
                ...cluster,
                report: (line) => io.stderr(`lathe serve: cluster: ${line}\n`)
              })
            }
          : {}),
        report: (line) => io.stderr(`lathe serve: ${line}\n`)
      })
    } catch (error) {
      io.stderr(`lathe serve: ${error instanceof Error ? error.message : String(error)}\n`)
      return error instanceof ServeError && /without a token|--allow-directory/.test(error.message) ? 2 : 1
    }
    const serverToken = server.token
    let tokenFile: string | undefined
    if (serverToken !== undefined)
      tokenFile = await writeServerToken(io.env, server.port, serverToken).catch((error: unknown) => {
        io.stderr(`lathe serve: could not save the token for local clients: ${String(error)}\n`)
        return undefined
      })
    // The handler is in place before the first line goes out: a supervisor may stop the server as soon as it reads it.
    const stopped = new Promise<number>((resolve) => {
      let stopping = false
      const remove = io.onInterrupt?.(() => {
        if (stopping) return
        stopping = true
        io.stderr("lathe serve: stopping: no new work, aborting running turns (at most 10 s)...\n")
        server.close(10_000).then(async (clean) => {
          remove?.()
          if (serverToken !== undefined)
            await removeServerToken(io.env, server.port, serverToken).catch(() => undefined)
          await workspaces.dispose().catch(() => undefined)
          await shared.dispose().catch(() => undefined)
          io.stderr(clean ? "lathe serve: stopped.\n" : "lathe serve: stopped without finishing the drain.\n")
          // Anything a plugin left running must not keep the process alive after the drain.
          setTimeout(() => process.exit(clean ? 0 : 1), 2_000).unref()
          resolve(clean ? 0 : 1)
        })
      })
    })
    // One write: scripts wait for the first line and read the next ones from the same chunk.
    if (web) {
      // The token travels once, in the fragment (never sent to a server, never in its logs); the page moves it
      // to the tab's sessionStorage and takes it out of the address bar.
      const page = `${server.url}/${serverToken === undefined ? "" : `#token=${encodeURIComponent(serverToken)}`}`
      io.stdout(`listening on ${server.url}\nopen ${page}\n`)
      web.open(page)
      return stopped
    }
    io.stdout(
      `listening on ${server.url}\n` +
        (serverToken !== undefined && serverToken !== token ? `token ${serverToken}\n` : "") +
        `attach with: lathe --attach ${server.url}  or  lathe run --attach ${server.url} "<prompt>"` +
        (tokenFile ? ` (this machine's lathe reads the token from ${tokenFile})` : "") +
        (serverToken !== undefined ? "; other clients send `Authorization: Bearer <token>`" : "") +
        "\n"
    )
    if (noAuth)
      io.stderr(
        "lathe serve: warning: --no-auth: any program on this machine (any user, any process) can drive the agent " +
          "through this server. Web pages are still refused by the Host and Origin checks.\n"
      )
    return stopped
  }
