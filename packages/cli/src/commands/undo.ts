import { createInterface } from "node:readline/promises"
import {
  listTurns,
  Paths,
  type RevertConflict,
  type RevertError,
  type RevertResult,
  redoSession,
  type SessionNotFound,
  SessionStore,
  type StoreError,
  undoSession
} from "@lathe/core"
import { Effect } from "effect"
import { runOnApp, runOnStore } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { plural, turnLines } from "../turn-lines.js"

const SESSION = {
  type: "string",
  short: "s",
  value: "<id>",
  description: "The session (default: this work tree's latest)"
} as const
const FORCE = {
  type: "boolean",
  short: "f",
  description: "Put files back even if they were changed since (by hand or another program)"
} as const

/** `lathe undo`, declared once for the command kit. */
export const undoSpec = defineCommand({
  name: "undo",
  usage: ["[<n>] [--step] [--list] [--force] [--session <id>]"],
  description: `Puts back every file the last turn of a session changed (all its steps, its subagents' too) and hides the turn,
prompt included, from the model; the latest session of this work tree unless --session is given. Run it again to
go one more turn back. The next prompt in the session makes the undo final; \`lathe redo\` brings everything
back before that. <n> goes back to before turn n (it and every later turn are undone).`,
  options: {
    step: { type: "boolean", description: "Undo only the last step that changed files, not the whole turn" },
    list: { type: "boolean", description: "Show the session's turns: number, time, prompt, files changed" },
    force: FORCE,
    session: SESSION
  },
  positionals: { name: "<n>" },
  footer: `Files changed since the turn are never overwritten silently: undo names them and asks (with no terminal it stops,
and --force goes ahead; \`lathe redo\` then brings those changes back).`
})

/** `lathe redo`, declared once for the command kit. */
export const redoSpec = defineCommand({
  name: "redo",
  usage: ["[--force] [--session <id>]"],
  description: `Brings back what \`lathe undo\` took away in a session (the latest of this work tree, unless --session is given):
every undone file as it was before the first undo, and the hidden turns. Files changed since the undo are named
and asked about (with no terminal redo stops; --force overwrites them).`,
  options: { force: FORCE, session: SESSION }
})

/** Prints `text` on stderr; the exit code of a failed undo or redo. */
const failed = (io: CliIO, text: string) => {
  io.stderr(text)
  return 1
}

/** Asks a yes/no question at the terminal; undefined when there is no terminal to ask at. */
const confirm = async (io: CliIO, question: string): Promise<boolean | undefined> => {
  if (!io.stdin || !io.stdinIsTTY) return undefined
  const rl = createInterface({ input: io.stdin, output: process.stderr })
  try {
    const answer = (await rl.question(question)).trim().toLowerCase()
    return answer === "y" || answer === "yes"
  } finally {
    rl.close()
  }
}

interface Options {
  readonly session?: string | undefined
  readonly step?: boolean | undefined
  readonly list?: boolean | undefined
  readonly force?: boolean | undefined
  readonly help?: boolean | undefined
}

const latestSession = (requested: string | undefined) =>
  Effect.gen(function* () {
    if (requested !== undefined) return requested
    const store = yield* SessionStore
    const paths = yield* Paths
    return (yield* store.listSessions({ projectID: paths.projectID, tree: paths.root, parentID: null, limit: 1 }))[0]
      ?.id
  })

/** Runs the undo or redo once; a conflict comes back as a value so the command can ask and run it again. */
const attempt = (io: CliIO, verb: "undo" | "redo", options: Options, turn: number | undefined, force: boolean) =>
  runOnApp(
    io,
    Effect.gen(function* () {
      const sessionID = yield* latestSession(options.session)
      if (!sessionID) return undefined
      const asValue = <R>(effect: Effect.Effect<RevertResult, RevertError | StoreError | SessionNotFound, R>) =>
        effect.pipe(
          Effect.map((result) => ({ _tag: "Done" as const, result })),
          Effect.catchTag("RevertConflict", (error: RevertConflict) =>
            Effect.succeed({ _tag: "Conflict" as const, files: error.files, message: error.message })
          )
        )
      return yield* verb === "undo"
        ? asValue(undoSession(sessionID, { step: options.step, turn, force }))
        : asValue(redoSession(sessionID, { force }))
    }),
    { mcp: false }
  )

/** `lathe undo` / `lathe redo`: undo by turn (or step) and redo, through the shadow snapshots. */
export const revertCommand =
  (verb: "undo" | "redo"): Command =>
  async (args, io: CliIO) => {
    const parsed = verb === "undo" ? parseCommand(undoSpec, args, io) : parseCommand(redoSpec, args, io)
    if (typeof parsed === "number") return parsed
    const values: Options = parsed.values
    const positionals = parsed.positionals
    const [which, ...extra] = positionals
    const turn = which === undefined ? undefined : Number(which)
    if (extra.length > 0 || (turn !== undefined && !(Number.isInteger(turn) && turn >= 1)) || (turn && values.step)) {
      io.stderr(`lathe undo: give one turn number (see \`lathe undo --list\`), or --step, not both.\n`)
      return 2
    }
    if (values.list) {
      const listed = await runOnStore(
        io,
        Effect.gen(function* () {
          const sessionID = yield* latestSession(values.session)
          return sessionID === undefined ? undefined : { sessionID, turns: yield* listTurns(sessionID) }
        })
      )
      if (!listed.ok) return failed(io, `lathe undo: ${listed.message}\n`)
      if (!listed.value)
        return failed(
          io,
          "lathe undo: this work tree has no session yet (`lathe session list --all-trees` lists the others').\n"
        )
      io.stdout(`${turnLines(listed.value.sessionID, listed.value.turns).join("\n")}\n`)
      return 0
    }
    let outcome = await attempt(io, verb, values, turn, values.force === true)
    if (outcome.ok && outcome.value?._tag === "Conflict") {
      const { files, message } = outcome.value
      const answer = await confirm(
        io,
        `These files changed since ${verb === "undo" ? "the agent last changed them" : "the undo"} (by hand or another program):\n` +
          `${files.map((f) => `  ${f}\n`).join("")}${verb === "undo" ? "Undo" : "Redo"} anyway and overwrite them? [y/N] `
      )
      if (answer === undefined) return failed(io, `lathe ${verb}: ${message}\n`)
      if (!answer) return failed(io, `lathe ${verb}: nothing was changed.\n`)
      outcome = await attempt(io, verb, values, turn, true)
    }
    if (!outcome.ok) return failed(io, `lathe ${verb}: ${outcome.message}\n`)
    if (!outcome.value)
      return failed(
        io,
        `lathe ${verb}: this work tree has no session yet (\`lathe session list --all-trees\` lists the others').\n`
      )
    if (outcome.value._tag === "Conflict") return failed(io, `lathe ${verb}: ${outcome.value.message}\n`)
    const result = outcome.value.result
    const done = verb === "undo" ? "Restored" : "Re-applied"
    const what = verb === "undo" ? (values.step ? "the step" : "the turn") : "the undone turns"
    io.stdout(
      result.files.length === 0
        ? `${done} nothing: ${what} changed no files${verb === "undo" ? "; its messages are hidden from the model" : ""}.\n`
        : `${done} ${plural(result.files.length, "file")} in session ${result.session.id}:\n${result.files.map((f) => `  ${f}\n`).join("")}`
    )
    if (result.overwritten.length > 0)
      io.stdout(
        `Overwrote changes made since to ${result.overwritten.join(", ")}${verb === "undo" ? " (`lathe redo` brings them back)" : ""}.\n`
      )
    return 0
  }
