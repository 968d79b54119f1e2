import { Config, Paths, SessionStore } from "@lathe/core"
import type { Session } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { runOnStore } from "../app.js"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { localTime } from "../session-text.js"
import { plainText } from "../terminal-text.js"
import { showCommand, showSpec } from "./session-show.js"

/** `lathe session list`, declared once for the command kit. */
export const listSpec = defineCommand({
  name: "session list",
  summary: "This work tree's sessions, the most recently updated first",
  usage: ["[--limit <n>] [--all] [--all-trees] [--json]"],
  description: `This work tree's sessions, the most recently updated first: id, last update (local time) and title.
Other clones and worktrees of the repository keep their own sessions (--all-trees lists them too, naming each one's
tree). Continue one with \`lathe run --session <id> "…"\` or \`lathe --session <id>\`; \`lathe run --continue\` takes the
latest.`,
  options: {
    limit: { type: "string", short: "n", value: "<n>", description: "Show that many (default 20)" },
    all: { type: "boolean", description: "Show every one" },
    "all-trees": {
      type: "boolean",
      description: "Also the sessions of the repository's other clones and worktrees, each row naming its tree"
    },
    json: {
      type: "boolean",
      description: "Print them as a JSON array (id, title, directory, agent, created, updated in ms since the epoch)"
    }
  }
})

/** `lathe session`: its subcommands. */
export const sessionSpec = defineCommand({
  name: "session",
  usage: ["list [--limit <n>] [--all] [--all-trees] [--json]", "show <id> | --last [--json] [--reasoning] [--full]"],
  description: `\`lathe export\` writes a session to a file and \`lathe import\` reads it back.`,
  subcommands: [listSpec, showSpec]
})

/**
 * The work tree's top-level sessions (every work tree's of the project with `allTrees`), newest first, one more than
 * `limit` (to tell whether there are more), and the tree Lathe runs in.
 */
const listSessions = (io: CliIO, limit: number | undefined, allTrees: boolean) =>
  runOnStore(
    io,
    Effect.gen(function* () {
      // An untrusted project's `store` setting is ignored: say so, since it decides which sessions are listed.
      for (const notice of (yield* Config).notices) io.stderr(`lathe: ${plainText(notice)}\n`)
      const store = yield* SessionStore
      const paths = yield* Paths
      const filter = {
        projectID: paths.projectID,
        ...(allTrees ? {} : { tree: paths.root }),
        parentID: null,
        ...(limit === undefined ? {} : { limit: limit + 1 })
      }
      return { sessions: yield* store.listSessions(filter), tree: paths.root }
    })
  )

/** A title on one line, without escape sequences or control characters (a model wrote it). */
const oneLine = (text: string): string => plainText(text.replace(/\s+/g, " ")).trim()

const toJson = (session: Session) => ({
  id: session.id,
  title: session.title,
  directory: session.directory,
  ...(session.tree === undefined ? {} : { tree: session.tree }),
  ...(session.agent === undefined ? {} : { agent: session.agent }),
  created: session.time.created,
  updated: session.time.updated
})

/** `lathe session list`: the sessions `--session` and `--continue` can pick from; `lathe session show`: one of them. */
export const sessionCommand: Command = async (args, io: CliIO) => {
  const verb = pickSubcommand(sessionSpec, args, io)
  if (typeof verb === "number") return verb
  if (verb.name === "show") return showCommand(verb.rest, io)
  const parsed = parseCommand(listSpec, verb.rest, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const limit = values.all ? undefined : values.limit === undefined ? 20 : Number(values.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    io.stderr(`lathe session list: --limit must be a whole number of at least 1, not "${values.limit}".\n`)
    return 2
  }
  const allTrees = values["all-trees"] === true
  const result = await listSessions(io, limit, allTrees)
  if (!result.ok) {
    io.stderr(`lathe session list: ${result.message}\n`)
    return 1
  }
  const { tree } = result.value
  const more = limit !== undefined && result.value.sessions.length > limit
  const sessions = more ? result.value.sessions.slice(0, limit) : result.value.sessions
  if (values.json) {
    io.stdout(`${JSON.stringify(sessions.map(toJson), null, 2)}\n`)
    return 0
  }
  if (sessions.length === 0) {
    io.stderr(
      allTrees
        ? 'This project has no session yet. Start one with `lathe run "…"` or `lathe`.\n'
        : `This work tree (${tree}) has no session yet. Start one with \`lathe run "…"\` or \`lathe\`; ` +
            "`lathe session list --all-trees` lists the sessions of the repository's other clones and worktrees.\n"
    )
    return 0
  }
  // With --all-trees each row names its tree; a session stored before trees were recorded names its directory.
  const treeOf = (s: Session) => oneLine(s.tree ?? s.directory)
  io.stdout(
    sessions
      .map(
        (s) =>
          `${s.id}  ${localTime(s.time.updated)}  ${allTrees ? `${treeOf(s)}  ` : ""}${oneLine(s.title) || "(untitled)"}\n`
      )
      .join("")
  )
  if (more) io.stderr(`(the ${limit} most recent; --limit <n> or --all for more)\n`)
  return 0
}
