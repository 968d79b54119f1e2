import { readFile, writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { Config, Paths } from "@lathe/core"
import { auditPath } from "@lathe/permission"
import { Effect } from "effect"
import { runOnStore } from "../app.js"
import type { Command } from "../io.js"
import { decodeDocument, importDocument } from "../session-document.js"
import { renderMarkdown } from "../session-markdown.js"
import { plainText } from "../terminal-text.js"
import { documentJson, readDocument, targetOf } from "./session-show.js"

const exportUsage = `Usage: lathe export <id> | --last [--format md|json] [-o <file>]

Writes a whole stored session, its subagent sessions and the permission decisions made for its calls: as a
Markdown transcript (--format md, the default) or as a JSON document (--format json, the same as
\`lathe session show --json\`) that \`lathe import\` reads back into a store. Without -o it prints to stdout; an -o
file ending in .json picks JSON unless --format says otherwise. --last exports this project's latest session.
`

const importUsage = `Usage: lathe import <file>

Reads a session document written by \`lathe export --format json\` into the session store this project uses (with
its subagent sessions, and its permission decisions into the audit trail), keeping its ids, so \`lathe session show
<id>\` and \`lathe run --session <id>\` find it. A session the store already holds is never overwritten.
`

const parse = (args: ReadonlyArray<string>, options: NonNullable<Parameters<typeof parseArgs>[0]>["options"]) => {
  try {
    return parseArgs({ args: [...args], allowPositionals: true, options, strict: true })
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

/** `lathe export`: a stored session as a Markdown transcript or a JSON document. */
export const exportCommand: Command = async (args, io) => {
  const parsed = parse(args, {
    last: { type: "boolean" },
    format: { type: "string", short: "f" },
    output: { type: "string", short: "o" },
    help: { type: "boolean", short: "h" }
  })
  if (parsed instanceof Error) {
    io.stderr(`lathe export: ${parsed.message}\n\n${exportUsage}`)
    return 2
  }
  const values = parsed.values as { last?: boolean; format?: string; output?: string; help?: boolean }
  if (values.help) {
    io.stdout(exportUsage)
    return 0
  }
  const format = values.format ?? (values.output?.toLowerCase().endsWith(".json") ? "json" : "md")
  if (format !== "md" && format !== "json") {
    io.stderr(`lathe export: --format is md or json, not "${format}".\n`)
    return 2
  }
  const target = targetOf(parsed.positionals, values.last)
  if (typeof target === "string") {
    io.stderr(`lathe export: ${target}.\n`)
    return 2
  }
  const result = await readDocument(io, target)
  if (!result.ok) {
    io.stderr(`lathe export: ${result.message}\n`)
    return 1
  }
  const text = format === "json" ? documentJson(result.value) : renderMarkdown(result.value)
  if (values.output === undefined) {
    io.stdout(text)
    return 0
  }
  const file = resolve(io.cwd, values.output)
  try {
    // A transcript holds file contents and command output: readable by its owner only.
    await writeFile(file, text, { mode: 0o600 })
  } catch (error) {
    io.stderr(`lathe export: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  io.stderr(`Wrote session ${result.value.session.id} to ${file} (${format === "json" ? "JSON" : "Markdown"}).\n`)
  return 0
}

/** `lathe import`: a JSON session document back into the store. */
export const importCommand: Command = async (args, io) => {
  const parsed = parse(args, { help: { type: "boolean", short: "h" } })
  if (parsed instanceof Error) {
    io.stderr(`lathe import: ${parsed.message}\n\n${importUsage}`)
    return 2
  }
  if ((parsed.values as { help?: boolean }).help) {
    io.stdout(importUsage)
    return 0
  }
  const [name, ...extra] = parsed.positionals
  if (name === undefined || extra.length > 0) {
    io.stderr(`lathe import: expected one file, got ${parsed.positionals.length} arguments.\n\n${importUsage}`)
    return 2
  }
  const file = resolve(io.cwd, name)
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (error) {
    io.stderr(`lathe import: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  const result = await runOnStore(
    io,
    Effect.gen(function* () {
      for (const notice of (yield* Config).notices) io.stderr(`lathe: ${plainText(notice)}\n`)
      const paths = yield* Paths
      const doc = yield* decodeDocument(text, file)
      const counts = yield* importDocument(doc, auditPath(paths.data))
      return { doc, counts, elsewhere: doc.session.projectID !== paths.projectID }
    })
  )
  if (!result.ok) {
    io.stderr(`lathe import: ${result.message}\n`)
    return 1
  }
  const { doc, counts, elsewhere } = result.value
  const subagents = counts.sessions - 1
  io.stdout(
    `Imported session ${doc.session.id} (${counts.messages} messages${subagents > 0 ? `, ${subagents} subagent session${subagents === 1 ? "" : "s"}` : ""}). ` +
      `Show it with \`lathe session show ${doc.session.id}\`.\n`
  )
  if (elsewhere)
    io.stderr(
      `It belongs to another project (${doc.session.directory}), so \`lathe session list\` here does not list it; ` +
        "`lathe session show` and `lathe run --session` take its id anywhere.\n"
    )
  return 0
}
