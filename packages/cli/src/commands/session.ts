import { parseArgs } from "node:util"
import { Config, Paths, type Session, SessionStore } from "@lathe/core"
import { Effect } from "effect"
import { runOnStore } from "../app.js"
import type { CliIO, Command } from "../io.js"
import { localTime } from "../session-text.js"
import { plainText } from "../terminal-text.js"
import { showCommand } from "./session-show.js"

const usage = `Usage: lathe session list [--limit <n>] [--all] [--json]
       lathe session show <id> | --last [--json] [--reasoning] [--full]

list: this project's sessions, the most recently updated first: id, last update (local time) and title.
Continue one with \`lathe run --session <id> "…"\` or \`lathe --session <id>\`; \`lathe run --continue\` takes the
latest. --limit shows that many (default 20), --all every one; --json prints them as a JSON array (id, title,
directory, agent, created, updated in ms since the epoch).
show: a stored session, every message, tool call (input, output, status, duration, permission decisions),
retry, step's tokens and cost, compaction point and subagent session (\`lathe session show --help\` says more).
\`lathe export\` writes one to a file and \`lathe import\` reads it back.
`

/** The project's top-level sessions, newest first, one more than `limit` (to tell whether there are more). */
const listSessions = (io: CliIO, limit: number | undefined) =>
  runOnStore(
    io,
    Effect.gen(function* () {
      // An untrusted project's `store` setting is ignored: say so, since it decides which sessions are listed.
      for (const notice of (yield* Config).notices) io.stderr(`lathe: ${plainText(notice)}\n`)
      const store = yield* SessionStore
      const paths = yield* Paths
      const filter = {
        projectID: paths.projectID,
        parentID: null,
        ...(limit === undefined ? {} : { limit: limit + 1 })
      }
      return yield* store.listSessions(filter)
    })
  )

/** A title on one line, without escape sequences or control characters (a model wrote it). */
const oneLine = (text: string): string => plainText(text.replace(/\s+/g, " ")).trim()

const toJson = (session: Session) => ({
  id: session.id,
  title: session.title,
  directory: session.directory,
  ...(session.agent === undefined ? {} : { agent: session.agent }),
  created: session.time.created,
  updated: session.time.updated
})

/** `lathe session list`: the sessions `--session` and `--continue` can pick from; `lathe session show`: one of them. */
export const sessionCommand: Command = async (args, io: CliIO) => {
  const [verb, ...rest] = args
  if (verb === "-h" || verb === "--help") {
    io.stdout(usage)
    return 0
  }
  if (verb === undefined) {
    io.stderr(usage)
    return 2
  }
  if (verb === "show") return showCommand(rest, io)
  if (verb !== "list") {
    io.stderr(`lathe session: unknown subcommand "${verb}". Run \`lathe session --help\`.\n`)
    return 2
  }
  let values: {
    limit?: string | undefined
    all?: boolean | undefined
    json?: boolean | undefined
    help?: boolean | undefined
  }
  try {
    values = parseArgs({
      args: rest,
      options: {
        limit: { type: "string", short: "n" },
        all: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" }
      },
      strict: true
    }).values
  } catch (error) {
    io.stderr(`lathe session list: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
  if (values.help) {
    io.stdout(usage)
    return 0
  }
  const limit = values.all ? undefined : values.limit === undefined ? 20 : Number(values.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    io.stderr(`lathe session list: --limit must be a whole number of at least 1, not "${values.limit}".\n`)
    return 2
  }
  const result = await listSessions(io, limit)
  if (!result.ok) {
    io.stderr(`lathe session list: ${result.message}\n`)
    return 1
  }
  const more = limit !== undefined && result.value.length > limit
  const sessions = more ? result.value.slice(0, limit) : result.value
  if (values.json) {
    io.stdout(`${JSON.stringify(sessions.map(toJson), null, 2)}\n`)
    return 0
  }
  if (sessions.length === 0) {
    io.stderr('This project has no session yet. Start one with `lathe run "…"` or `lathe`.\n')
    return 0
  }
  io.stdout(
    sessions.map((s) => `${s.id}  ${localTime(s.time.updated)}  ${oneLine(s.title) || "(untitled)"}\n`).join("")
  )
  if (more) io.stderr(`(the ${limit} most recent; --limit <n> or --all for more)\n`)
  return 0
}
