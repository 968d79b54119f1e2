import { Config, Paths, SessionNotFound, SessionStore, StoreError } from "@lathe/core"
import { auditPath, readAudit } from "@lathe/permission"
import { Effect } from "effect"
import { runOnStore } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO } from "../io.js"
import { loadDocument, type SessionDocument } from "../session-document.js"
import { renderSession } from "../session-text.js"
import { plainText } from "../terminal-text.js"

/** `lathe session show`, declared once for the command kit. */
export const showSpec = defineCommand({
  name: "session show",
  summary: "Print one session: messages, tool calls, permission decisions, tokens and cost",
  usage: ["<id> | --last [--json] [--reasoning] [--full]"],
  description: `Prints a stored session, every message and part in order: your prompts, the model's text, each tool call with its
input, output, status, duration and the permission decisions made for it (the rule, hook or reply that decided),
retries, each step's tokens and cost, compaction points, and the subagent sessions a task call started, nested
under it. --last shows this work tree's latest session. Reasoning is folded to one line unless --reasoning; long tool
inputs and outputs are cut unless --full. --json prints the whole session as the document \`lathe export --format
json\` writes and \`lathe import\` reads (nothing cut).`,
  options: {
    last: { type: "boolean", description: "This work tree's latest session" },
    json: { type: "boolean", description: "The whole session as its JSON document" },
    reasoning: { type: "boolean", description: "Reasoning in full (folded to one line otherwise)" },
    full: { type: "boolean", description: "Long tool inputs and outputs in full (cut otherwise)" }
  },
  positionals: { name: "<id>", max: 1 }
})

/** Which session a command names: an id, or `--last` (this work tree's latest top-level session). */
export type SessionTarget = { readonly id: string } | { readonly last: true }

/**
 * Reads a session and its subagent sessions from the store config picks, with the permission decisions the audit
 * trail (`<data>/permission/audit.jsonl`) recorded for their calls.
 */
export const readDocument = (io: CliIO, target: SessionTarget) =>
  runOnStore(
    io,
    Effect.gen(function* () {
      // An untrusted project's `store` setting is ignored: say so, since it decides where the session is read from.
      for (const notice of (yield* Config).notices) io.stderr(`lathe: ${plainText(notice)}\n`)
      const store = yield* SessionStore
      const paths = yield* Paths
      const id =
        "id" in target
          ? target.id
          : (yield* store.listSessions({ projectID: paths.projectID, tree: paths.root, parentID: null, limit: 1 }))[0]
              ?.id
      if (id === undefined)
        return yield* new SessionNotFound({
          sessionID: "",
          message: 'This project has no session yet. Start one with `lathe run "…"` or `lathe`.'
        })
      const file = auditPath(paths.data)
      const audit = yield* Effect.tryPromise({
        try: () => readAudit(file),
        catch: (error) =>
          new StoreError({
            operation: "readAudit",
            message: `Cannot read the permission audit trail ${file}: ${error instanceof Error ? error.message : String(error)}`
          })
      })
      return yield* loadDocument(id, audit)
    })
  )

/** Parses `<id>` or `--last` from a command's positionals and flag; a message when neither or both are given. */
export const targetOf = (positionals: ReadonlyArray<string>, last: boolean | undefined): SessionTarget | string => {
  if (positionals.length > 1) return `expected one session id, got ${positionals.length} arguments`
  const [id] = positionals
  if (id !== undefined && last) return "give a session id or --last, not both"
  if (id !== undefined) return { id }
  if (last) return { last: true }
  return "which session? Give its id (`lathe session list` shows them) or --last"
}

/** `lathe session show`: a stored session, as text or as its JSON document. */
export const showCommand = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const parsed = parseCommand(showSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values, positionals } = parsed
  const target = targetOf(positionals, values.last)
  if (typeof target === "string") {
    io.stderr(`lathe session show: ${target}.\n`)
    return 2
  }
  const result = await readDocument(io, target)
  if (!result.ok) {
    io.stderr(`lathe session show: ${result.message}\n`)
    return 1
  }
  io.stdout(
    values.json
      ? documentJson(result.value)
      : renderSession(result.value, { reasoning: values.reasoning === true, full: values.full === true })
  )
  return 0
}

/** A document as the JSON text `--json` prints and `lathe export --format json` writes. */
export const documentJson = (doc: SessionDocument): string => `${JSON.stringify(doc, null, 2)}\n`
