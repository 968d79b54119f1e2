import { parseArgs } from "node:util"
import { Paths, type RevertResult, SessionStore, undoLastStep, unrevertSession } from "@lathe/core"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import type { CliIO, Command } from "../io.js"

const usage = (verb: "undo" | "redo") =>
  verb === "undo"
    ? `Usage: lathe undo [--session <id>]

Puts back the files the last step of a session changed (the latest session of this project, unless --session
is given) and hides that step from the model. Run it again to go further back. The next prompt in the session
makes the undo final; \`lathe redo\` brings everything back before that.
`
    : `Usage: lathe redo [--session <id>]

Brings back what \`lathe undo\` took away in a session (the latest of this project, unless --session is given):
the work tree as it was before the first undo, and the hidden steps.
`

/** `lathe undo` / `lathe redo`: session-level undo and redo through the shadow snapshots. */
export const revertCommand =
  (verb: "undo" | "redo"): Command =>
  async (args, io: CliIO) => {
    let values: { session?: string | undefined; help?: boolean | undefined }
    try {
      values = parseArgs({
        args: [...args],
        options: { session: { type: "string", short: "s" }, help: { type: "boolean", short: "h" } },
        strict: true
      }).values
    } catch (error) {
      io.stderr(`lathe ${verb}: ${error instanceof Error ? error.message : String(error)}\n`)
      return 2
    }
    if (values.help) {
      io.stdout(usage(verb))
      return 0
    }
    const program = Effect.gen(function* () {
      const store = yield* SessionStore
      const paths = yield* Paths
      const sessionID =
        values.session ?? (yield* store.listSessions({ projectID: paths.projectID, parentID: null, limit: 1 }))[0]?.id
      if (!sessionID) return undefined
      return yield* verb === "undo" ? undoLastStep(sessionID) : unrevertSession(sessionID)
    })
    const outcome = await runOnApp(io, program, { mcp: false })
    if (!outcome.ok) {
      io.stderr(`lathe ${verb}: ${outcome.message}\n`)
      return 1
    }
    const result: RevertResult | undefined = outcome.value
    if (!result) {
      io.stderr(`lathe ${verb}: this project has no session yet.\n`)
      return 1
    }
    const done = verb === "undo" ? "Restored" : "Re-applied"
    io.stdout(
      result.files.length === 0
        ? `${done} nothing: the step changed no files.\n`
        : `${done} ${result.files.length} file${result.files.length === 1 ? "" : "s"} in session ${result.session.id}:\n${result.files.map((f) => `  ${f}\n`).join("")}`
    )
    return 0
  }
